#!/usr/bin/env node
// bench/providers: stream decoding speed of every provider adapter, in one run.
//
//   node bench/providers.mjs [megabytes per stream] [latency samples]
//
// For each adapter (anthropic, openai-compatible, openai, gemini, ollama) the real provider
// class is driven through its whole path — sendJson, readSse/readNdjson, the adapter's decoder —
// with a fetch stub that answers from memory, so no socket or network is involved:
//   - throughput: a synthetic stream of text deltas (default 16 MB, ~15 characters of text with
//     non-ASCII letters per event, each event shaped like the API's recorded ones in
//     test/fixtures/providers, in 64 KB chunks), decoded to the final `done` event; best and
//     median MB/s of 5 runs after 3 warm-up runs (target ≥ 100 MB/s), by wall clock and per
//     second of process CPU time (steadier on a loaded machine), and the wire's text deltas per
//     second (the adapters merge the deltas of one read into one event, so the events yielded
//     are far fewer; their text is checked against the stream's);
//   - added latency: the time from handing the stream its first chunk (everything up to and
//     including the first text delta) to the adapter yielding that first `text_delta`; median and
//     p95 over the samples (default 300; target < 1 ms).
// TypeScript sources are loaded with jiti, as the tests run them.
import { join, resolve } from "node:path";
import { createJiti } from "jiti";

const root = resolve(import.meta.dirname, "..");
const MB = Number(process.argv[2] ?? 16);
const SAMPLES = Number(process.argv[3] ?? 300);
const RUNS = 5;
const WARMUP = 3;
const jiti = createJiti(import.meta.url);
const load = (p) => jiti.import(join(root, p));

const { AnthropicProvider } = await load("plugins/anthropic/provider.ts");
const { ChatCompletionsProvider } = await load("plugins/openai-compatible/provider.ts");
const { GENERIC_PRESET } = await load("plugins/openai-compatible/presets.ts");
const { ResponsesProvider } = await load("plugins/openai/provider.ts");
const { GeminiProvider } = await load("plugins/gemini/provider.ts");
const { OllamaProvider } = await load("plugins/ollama/provider.ts");

const PIECES = ["Hello wörld, ", "the café’s ", "naïve façade ", "— 42 × 7 = 294 ", "日本語のテキスト ", "emoji 🎉 ok. "];
const piece = (i) => PIECES[i % PIECES.length];
const j = JSON.stringify;

/** Each adapter: how to build it, its stream (head, one delta event, tail) and its request. */
const ADAPTERS = [
  {
    name: "anthropic",
    make: (fetch) => new AnthropicProvider({ name: "anthropic", base_url: "http://bench.invalid", api_key: "k" }, { fetch }),
    model: "claude-sonnet-4-5",
    head: () =>
      `event: message_start\ndata: ${j({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], usage: { input_tokens: 10, output_tokens: 1 } } })}\n\n` +
      `event: content_block_start\ndata: ${j({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })}\n\n`,
    // the padding before the closing brace is Anthropic's (every recorded stream has it)
    delta: (i) => `event: content_block_delta\ndata: ${j({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: piece(i) } }).slice(0, -1)}         }\n\n`,
    tail: () =>
      `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n` +
      `event: message_delta\ndata: ${j({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 100 } })}\n\n` +
      `event: message_stop\ndata: {"type":"message_stop"}\n\n`,
  },
  {
    name: "openai-compatible",
    make: (fetch) => new ChatCompletionsProvider({ name: "openai-compatible", base_url: "http://bench.invalid/v1", api_key: "k" }, GENERIC_PRESET, { fetch }),
    model: "gpt-4o",
    head: () => `data: ${j({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n`,
    delta: (i) => `data: ${j({ id: "chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL", object: "chat.completion.chunk", created: 1727346168, model: "gpt-4o-2024-08-06", system_fingerprint: "fp_5050236cbd", choices: [{ index: 0, delta: { content: piece(i) }, logprobs: null, finish_reason: null }] })}\n\n`,
    tail: () =>
      `data: ${j({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n` +
      `data: ${j({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [], usage: { prompt_tokens: 10, completion_tokens: 100 } })}\n\ndata: [DONE]\n\n`,
  },
  {
    name: "openai",
    make: (fetch) => new ResponsesProvider({ name: "openai", base_url: "http://bench.invalid/v1", api_key: "k" }, { fetch }),
    model: "gpt-5",
    head: () =>
      `event: response.created\ndata: ${j({ type: "response.created", response: { id: "resp_1", status: "in_progress", output: [] }, sequence_number: 0 })}\n\n` +
      `event: response.output_item.added\ndata: ${j({ type: "response.output_item.added", output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", content: [], role: "assistant" }, sequence_number: 1 })}\n\n`,
    delta: (i) => `event: response.output_text.delta\ndata: ${j({ type: "response.output_text.delta", content_index: 0, delta: piece(i), item_id: "msg_0a6fc3349e38704d016a3c120b5d28819ea807fdf185cae88e", logprobs: [], obfuscation: "I7Nl54CKLwXRwW", output_index: 0, sequence_number: i + 2 })}\n\n`,
    tail: () =>
      `event: response.completed\ndata: ${j({ type: "response.completed", response: { id: "resp_1", status: "completed", output: [], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 100 } } })}\n\n`,
  },
  {
    name: "gemini",
    make: (fetch) => new GeminiProvider({ name: "gemini", base_url: "http://bench.invalid", api_key: "k" }, { fetch }),
    model: "gemini-2.5-flash",
    head: () => "",
    delta: (i) =>
      `data: ${j({ candidates: [{ content: { parts: [{ text: piece(i) }], role: "model" }, index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: i, totalTokenCount: 10 + i }, modelVersion: "gemini-2.5-flash", responseId: "r1" })}\r\n\r\n`,
    tail: () =>
      `data: ${j({ candidates: [{ content: { parts: [{ text: "" }], role: "model" }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 100, totalTokenCount: 110 }, modelVersion: "gemini-2.5-flash", responseId: "r1" })}\r\n\r\n`,
  },
  {
    name: "ollama",
    make: (fetch) => new OllamaProvider({ name: "ollama", base_url: "http://bench.invalid" }, { fetch }),
    model: "qwen3:8b",
    head: () => "",
    delta: (i) => `${j({ model: "qwen3:8b", created_at: "2025-08-20T13:48:24.316155Z", message: { role: "assistant", content: piece(i) }, done: false })}\n`,
    tail: () => `${j({ model: "qwen3:8b", created_at: "2025-08-20T13:48:24.421331Z", message: { role: "assistant", content: "" }, done_reason: "stop", done: true, prompt_eval_count: 10, eval_count: 100 })}\n`,
  },
];

const enc = new TextEncoder();

/**
 * The synthetic body of about `mb` megabytes, pre-cut into 64 KB chunks, with its number of
 * text deltas and the length of their text (UTF-16 code units).
 */
function body(a, mb) {
  const parts = [a.head()];
  let size = parts[0].length;
  let textLength = 0;
  let i = 0;
  for (; size < mb * 1024 * 1024; i++) {
    const d = a.delta(i);
    parts.push(d);
    size += d.length;
    textLength += piece(i).length;
  }
  parts.push(a.tail());
  const bytes = enc.encode(parts.join(""));
  const chunks = [];
  for (let i = 0; i < bytes.length; i += 65536) chunks.push(bytes.subarray(i, i + 65536));
  return { bytes: bytes.length, chunks, deltas: i, textLength };
}

const show = () => new Response(JSON.stringify({ capabilities: ["completion", "tools"], model_info: { "general.architecture": "qwen3", "qwen3.context_length": 40960 } }), { headers: { "content-type": "application/json" } });

/** A fetch that answers Ollama's probe and then hands out `next()` as the response body. */
function stubFetch(next) {
  return async (url) => (String(url).endsWith("/api/show") ? show() : new Response(next(), { status: 200, headers: { "content-type": "text/event-stream" } }));
}

const request = (model) => ({ model, system: "You are a benchmark.", tools: [], messages: [{ role: "user", blocks: [{ type: "text", text: "go" }] }] });
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function throughput(a) {
  const { bytes, chunks, deltas, textLength } = body(a, MB);
  const provider = a.make(
    stubFetch(() => {
      let i = 0;
      return new ReadableStream({
        pull(c) {
          if (i < chunks.length) c.enqueue(chunks[i++]);
          else c.close();
        },
      });
    }),
  );
  const rates = [];
  const cpuRates = [];
  for (let r = -WARMUP; r < RUNS; r++) {
    let shown = 0;
    let done = false;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for await (const ev of provider.stream(request(a.model))) {
      if (ev.type === "text_delta") shown += ev.text.length;
      else if (ev.type === "done") done = true;
    }
    const s = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    if (!done) throw new Error(`${a.name}: no done event`);
    if (shown !== textLength) throw new Error(`${a.name}: the text deltas hold ${shown} characters, the stream ${textLength}`);
    if (r >= 0) {
      rates.push(bytes / 1024 / 1024 / s);
      cpuRates.push(bytes / 1024 / 1024 / ((c.user + c.system) / 1e6));
    }
  }
  return { mb: bytes / 1024 / 1024, deltas, best: Math.max(...rates), median: median(rates), cpu: median(cpuRates) };
}

async function latency(a) {
  const first = enc.encode(a.head() + a.delta(0));
  const rest = enc.encode(a.delta(1) + a.tail());
  let controller;
  let pulled;
  const provider = a.make(
    stubFetch(
      () =>
        new ReadableStream(
          {
            start(c) {
              controller = c;
            },
            pull() {
              pulled?.();
              pulled = undefined;
            },
          },
          { highWaterMark: 0 },
        ),
    ),
  );
  const samples = [];
  for (let n = 0; n < SAMPLES + 20; n++) {
    const waiting = new Promise((r) => (pulled = r));
    const it = provider.stream(request(a.model))[Symbol.asyncIterator]();
    const firstEvent = (async () => {
      for (;;) {
        const r = await it.next();
        if (r.done) throw new Error(`${a.name}: ended before a text delta`);
        if (r.value.type === "text_delta") return performance.now();
      }
    })();
    await waiting; // the adapter is blocked reading the body
    await new Promise((r) => setImmediate(r));
    const t0 = performance.now();
    controller.enqueue(first);
    const t1 = await firstEvent;
    if (n >= 20) samples.push(t1 - t0); // the first rounds warm up the JIT
    controller.enqueue(rest);
    controller.close();
    for (let r = await it.next(); !r.done; r = await it.next());
  }
  return { median: median(samples), p95: pct(samples, 0.95) };
}

/** Prints one adapter's figures as a table row. */
async function measureOne(a) {
  const t = await throughput(a);
  const l = await latency(a);
  const perSec = (t.deltas / t.mb) * t.median;
  console.log(
    `${a.name.padEnd(18)} ${t.best.toFixed(1).padStart(9)}  ${t.median.toFixed(1).padStart(11)}  ${t.cpu.toFixed(1).padStart(12)}  ${Math.round(perSec).toLocaleString("en").padStart(19)}  ${`${(l.median * 1000).toFixed(0)} µs`.padStart(12)}  ${`${(l.p95 * 1000).toFixed(0)} µs`.padStart(7)}`,
  );
}

const only = process.env.BENCH_ADAPTER;
if (only) {
  await measureOne(ADAPTERS.find((a) => a.name === only));
} else {
  // each adapter in its own process, so one adapter's garbage and JIT state do not bias the next
  const { execFileSync } = await import("node:child_process");
  console.log(`provider stream decoding (${MB} MB synthetic streams, ${RUNS} runs after ${WARMUP} warm-up; ${SAMPLES} latency samples) on Node ${process.version}`);
  console.log(`load average ${(await import("node:os")).loadavg().map((x) => x.toFixed(1)).join(" ")} on ${(await import("node:os")).availableParallelism()} cores`);
  console.log("                   wall clock             per CPU second                first byte → first event");
  console.log("adapter            MB/s best  MB/s median  MB/s median  wire deltas/s (med)   median      p95");
  for (const a of ADAPTERS) {
    const out = execFileSync(process.execPath, [import.meta.filename, String(MB), String(SAMPLES)], { env: { ...process.env, BENCH_ADAPTER: a.name }, encoding: "utf8" });
    process.stdout.write(out);
  }
}
