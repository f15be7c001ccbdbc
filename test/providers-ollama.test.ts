/**
 * The `ollama` provider (native /api/chat) against real recordings replayed over loopback HTTP,
 * plus model probing, request body, multi-turn prefix, retry and failure-mode tests.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  definePlugin,
  Host,
  ProviderError,
  Registry,
  resolveModel,
  type AgentEvent,
  type Message,
  type ModelRequest,
  type ProviderConfig,
  type ProviderFactory,
} from "../kernel/index.js";
import ollamaPlugin, { ollamaFactory } from "../plugins/ollama/index.js";
import { ollamaBaseUrl, OllamaProvider } from "../plugins/ollama/provider.js";
import { collect, ReplayServer, type Reply } from "./fakes/replay-server.js";
import { fixture, manifestFor, NORMALIZED_STOP, replyFor, CHUNKINGS } from "./fakes/recordings.js";

const manifest = manifestFor("ollama");

const ERROR_KIND: Record<string, string> = {
  "ollama/error-400-model-does-not-support-tools.json": "capability",
  "ollama/error-400-context-length.json": "context_overflow",
};

let server: ReplayServer;
beforeEach(async () => {
  server = await ReplayServer.start();
});
afterEach(async () => {
  await server.close();
});

const json = (status: number, body: unknown): Reply => ({ status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
/** An `/api/show` answer. */
const show = (capabilities: string[] | null = ["completion", "tools"], contextLength = 131_072) =>
  json(200, { ...(capabilities ? { capabilities } : {}), model_info: { "general.architecture": "llama", "llama.context_length": contextLength, "llama.embedding_length": 4096 } });

function provider(config: Partial<ProviderConfig> = {}, opts: { waits?: number[] } = {}): OllamaProvider {
  return new OllamaProvider({ name: "ollama", base_url: server.url, ...config }, { sleep: async (ms) => void opts.waits?.push(ms) });
}

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return { model: "gemma3:1b", system: "You are a helpful assistant", tools: [], messages: [{ role: "user", blocks: [{ type: "text", text: "hi" }] }], ...over };
}

const chats = () => server.requests.filter((r) => r.path === "/api/chat");

describe("recorded Ollama bodies decode to the manifest's outcome", () => {
  for (const entry of manifest) {
    for (const [label, chunking] of CHUNKINGS) {
      it(`${entry.file} — ${label}`, async () => {
        server.enqueue(show(), replyFor(entry, chunking));
        const ex = entry.expected;
        const tools = entry.file.includes("tool") ? [{ name: "getWeather", description: "w", input_schema: { type: "object", properties: { location: { type: "string" } } } }] : [];
        const out = await collect(provider().stream(request({ tools })));
        expect(chats()).toHaveLength(1);
        if (ex.kind === "http_error") {
          const err = out.error as ProviderError;
          expect(err).toBeInstanceOf(ProviderError);
          expect([err.kind, err.status, err.retryable]).toEqual([ERROR_KIND[entry.file], 400, false]);
          expect(err.message).toContain(ex.body.error);
          expect(err.message.split("\n")).toHaveLength(1);
          return;
        }
        expect(out.error).toBeUndefined();
        const done = out.done!;
        const blocks = done.message.blocks;
        expect(blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")).toBe(ex.text);
        expect(out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toBe(ex.text);
        expect(blocks.flatMap((b) => (b.type === "thinking" ? [b.text] : [])).join("")).toBe(ex.thinking);
        expect(out.events.flatMap((e) => (e.type === "thinking_delta" ? [e.text] : [])).join("")).toBe(ex.thinking);
        const calls = blocks.filter((b) => b.type === "tool_use").map((b) => ({ id: (b as any).id, name: (b as any).name, input: (b as any).input }));
        expect(calls).toEqual(ex.tool_calls.map((c: any) => ({ id: c.id, name: c.function.name, input: c.function.arguments })));
        expect(done.usage).toEqual({ input: ex.usage.prompt_eval_count, output: ex.usage.eval_count, cache_read: 0, cache_write: 0 });
        expect(done.stop_reason).toBe(NORMALIZED_STOP[ex.normalized_stop]);
      }, 120_000);
    }
  }
});

describe("model probing", () => {
  it("num_ctx is 32768 by default, context_length when set, capped at the model's trained maximum", async () => {
    const ndjson = fixture("ollama/text.ndjson");
    server.enqueue(show(null, 131_072), { status: 200, body: ndjson });
    await collect(provider().stream(request()));
    expect(chats()[0]!.json().options).toEqual({ num_ctx: 32_768 });
    server.enqueue(show(null, 8_192), { status: 200, body: ndjson });
    await collect(provider().stream(request({ max_tokens: 500 })));
    expect(chats()[1]!.json().options).toEqual({ num_ctx: 8_192, num_predict: 500 });
    server.enqueue(show(null, 131_072), { status: 200, body: ndjson });
    await collect(provider({ context_length: 65_536 }).stream(request()));
    expect(chats()[2]!.json().options).toEqual({ num_ctx: 65_536 });
    expect(server.requests.filter((r) => r.path === "/api/show").map((r) => r.json())).toEqual([{ model: "gemma3:1b" }, { model: "gemma3:1b" }, { model: "gemma3:1b" }]);
  });

  it("asks /api/show once per model per provider; goes on with defaults when it fails", async () => {
    const p = provider();
    server.enqueue(json(404, { error: "model 'gemma3:1b' not found" }), { status: 200, body: fixture("ollama/text.ndjson") }, { status: 200, body: fixture("ollama/text.ndjson") });
    expect((await collect(p.stream(request()))).error).toBeUndefined();
    expect((await collect(p.stream(request()))).error).toBeUndefined();
    expect(server.requests.map((r) => r.path)).toEqual(["/api/show", "/api/chat", "/api/chat"]);
    expect(chats()[1]!.json().options.num_ctx).toBe(32_768);
  });

  it("supportsTools reads /api/show capabilities; contextWindow reads /api/ps, else the num_ctx to send", async () => {
    const p = provider();
    server.enqueue(show(["completion", "vision"], 4_096));
    expect(await p.supportsTools("gemma3:1b")).toBe(false);
    server.enqueue(json(200, { models: [{ name: "gemma3:1b", model: "gemma3:1b", context_length: 2_048 }] }));
    expect(await p.contextWindow("gemma3:1b")).toBe(2_048);
    server.enqueue(json(200, { models: [] }));
    expect(await p.contextWindow("gemma3:1b")).toBe(4_096);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /api/show", "GET /api/ps", "GET /api/ps"]);
    const q = provider();
    server.enqueue(show(null));
    expect(await q.supportsTools("qwen3")).toBeUndefined();
    server.enqueue(json(200, { models: [{ name: "qwen3:latest", context_length: 40_960 }] }));
    expect(await q.contextWindow("qwen3")).toBe(40_960);
  });

  it("offering tools to a model without the tools capability fails before sending, in one line", async () => {
    server.enqueue(show(["completion"]));
    const out = await collect(provider().stream(request({ tools: [{ name: "read", description: "r", input_schema: { type: "object" } }] })));
    const err = out.error as ProviderError;
    expect(err.kind).toBe("capability");
    expect(err.message).toMatch(/gemma3:1b does not support tools/);
    expect(chats()).toHaveLength(0);
  });
});

describe("request body", () => {
  async function send(req: ModelRequest, caps: string[] = ["completion", "tools", "thinking"]): Promise<any> {
    server.enqueue(show(caps), { status: 200, body: fixture("ollama/text.ndjson") });
    const out = await collect(provider().stream(req));
    expect(out.error).toBeUndefined();
    return chats().at(-1)!.json();
  }

  it("system message first, truncate false, tools as functions, no think without --effort", async () => {
    const schema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
    const body = await send(request({ tools: [{ name: "read", description: "Read a file", input_schema: schema }] }));
    expect(body.messages).toEqual([
      { role: "system", content: "You are a helpful assistant" },
      { role: "user", content: "hi" },
    ]);
    expect(body.truncate).toBe(false);
    expect(body.stream).toBe(true);
    expect(body.tools).toEqual([{ type: "function", function: { name: "read", description: "Read a file", parameters: schema } }]);
    expect("think" in body).toBe(false);
  });

  it("think from --effort: a level for gpt-oss, true for other thinking models, nothing for models that cannot think", async () => {
    expect((await send(request({ model: "gpt-oss:20b", effort: "max" }))).think).toBe("high");
    expect((await send(request({ model: "gpt-oss:20b", effort: "low" }))).think).toBe("low");
    expect((await send(request({ model: "qwen3:8b", effort: "medium" }))).think).toBe(true);
    expect("think" in (await send(request({ model: "gemma3:1b", effort: "high" }), ["completion"]))).toBe(false);
  });

  const priorTurn = (model: string, provider = "ollama"): Message[] => [
    { role: "user", blocks: [{ type: "image", media_type: "image/png", data: "AAA" }, { type: "text", text: "weather?" }] },
    {
      role: "assistant",
      model,
      blocks: [
        { type: "thinking", text: "Use getWeather.", provider },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_1", name: "getWeather", input: { location: "SF" }, provider },
        { type: "tool_use", id: "call_2", name: "shot", input: {}, provider },
      ],
    },
    {
      role: "user",
      blocks: [
        { type: "tool_result", id: "call_1", content: "sunny" },
        { type: "tool_result", id: "call_2", content: "screenshot", images: [{ media_type: "image/png", data: "iVBOR" }] },
        { type: "text", text: "note" },
      ],
    },
  ];

  it("tool results as tool messages, tool images in the following user message, object arguments, thinking replayed to the same model", async () => {
    const body = await send(request({ model: "gpt-oss:20b", messages: priorTurn("gpt-oss:20b") }));
    expect(body.messages.slice(1)).toEqual([
      { role: "user", content: "weather?", images: ["AAA"] },
      {
        role: "assistant",
        content: "Checking.",
        thinking: "Use getWeather.",
        tool_calls: [
          { id: "call_1", function: { name: "getWeather", arguments: { location: "SF" } } },
          { id: "call_2", function: { name: "shot", arguments: {} } },
        ],
      },
      { role: "tool", content: "sunny", tool_name: "getWeather", tool_call_id: "call_1" },
      { role: "tool", content: "screenshot", tool_name: "shot", tool_call_id: "call_2" },
      { role: "user", content: '<tool-images tool_call_id="call_2">The tool call call_2 returned these images.</tool-images>\n\nnote', images: ["iVBOR"] },
    ]);
    const other = await send(request({ model: "gpt-oss:20b", messages: priorTurn("qwen3:8b") }));
    expect(other.messages[2].thinking).toBeUndefined();
  });
});

describe("stream details", () => {
  const line = (o: unknown) => `${JSON.stringify(o)}\n`;
  const part = (content: string) => line({ model: "m", message: { role: "assistant", content }, done: false });

  it("recovers <tool_call> markup naming an offered tool, markup never shown", async () => {
    const body =
      part("Let me look.") +
      part("<tool_") +
      part('call>{"name": "read", "arguments": {"path": "a.txt"}}</tool') +
      part("_call>") +
      line({ model: "m", message: { role: "assistant", content: "" }, done: true, done_reason: "stop", prompt_eval_count: 10, eval_count: 5 });
    server.enqueue(show(), { status: 200, body, chunking: "bytes" });
    const out = await collect(provider().stream(request({ tools: [{ name: "read", description: "r", input_schema: { type: "object" } }] })));
    const shown = out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("");
    expect(shown).toBe("Let me look.");
    expect(out.done!.stop_reason).toBe("tool_use");
    expect(out.done!.message.blocks[1]).toMatchObject({ type: "tool_use", name: "read", input: { path: "a.txt" } });
    expect(out.events.filter((e) => e.type === "notice")).toHaveLength(1);
  });

  it("appends tool calls over several lines and mints ids when the server sends none", async () => {
    const body =
      line({ message: { role: "assistant", content: "", tool_calls: [{ function: { name: "a", arguments: { x: 1 } } }] }, done: false }) +
      line({ message: { role: "assistant", content: "", tool_calls: [{ function: { name: "b", arguments: '{"y":2}' } }] }, done: false }) +
      line({ message: { role: "assistant", content: "" }, done: true, done_reason: "stop" });
    server.enqueue(show(), { status: 200, body });
    const out = await collect(provider().stream(request()));
    const calls = out.done!.message.blocks.filter((b) => b.type === "tool_use") as { id: string; name: string; input: unknown }[];
    expect(calls.map((c) => [c.name, c.input])).toEqual([["a", { x: 1 }], ["b", { y: 2 }]]);
    expect(calls[0]!.id).not.toBe(calls[1]!.id);
    expect(out.done!.usage).toEqual({ input: 0, output: 0, cache_read: 0, cache_write: 0 });
  });

  it("done_reason length → max_tokens, and a request that fills num_ctx gets a notice", async () => {
    server.enqueue(show(null, 100), { status: 200, body: part("x") + line({ message: { role: "assistant", content: "" }, done: true, done_reason: "length", prompt_eval_count: 90, eval_count: 10 }) });
    const out = await collect(provider().stream(request()));
    expect(out.done!.stop_reason).toBe("max_tokens");
    expect(out.events.find((e) => e.type === "notice")).toMatchObject({ text: expect.stringContaining("num_ctx 100") });
  });

  it("an {error} line inside a 200 stream after output is surfaced, not retried, partial text shown", async () => {
    server.enqueue(show(), { status: 200, body: part("Hello") + line({ error: "an error was encountered while running the model: unexpected EOF" }) }, { status: 200, body: fixture("ollama/text.ndjson") });
    const out = await collect(provider().stream(request()));
    expect(out.events.filter((e) => e.type === "text_delta")).toEqual([{ type: "text_delta", text: "Hello" }]);
    const err = out.error as ProviderError;
    expect([err.kind, err.message]).toEqual(["server", "an error was encountered while running the model: unexpected EOF"]);
    expect(chats()).toHaveLength(1);
  });

  it("a stream without the done line is truncated", async () => {
    const text = fixture("ollama/text.ndjson");
    server.enqueue(show(), { status: 200, body: text.slice(0, text.lastIndexOf('{"model"')) });
    const out = await collect(provider().stream(request()));
    expect((out.error as ProviderError).kind).toBe("truncated");
  });
});

describe("events per network read", () => {
  it("merges the deltas of one read and yields the first alone; one line per read gives one event per line", async () => {
    const body = fixture("ollama/thinking.ndjson");
    const run = async (reads: string[]) => {
      const fetch = async (url: string | URL | Request) =>
        String(url).endsWith("/api/show")
          ? new Response("{}")
          : new Response(
              new ReadableStream<Uint8Array>({
                pull(c) {
                  const r = reads.shift();
                  if (r !== undefined) c.enqueue(new TextEncoder().encode(r));
                  else c.close();
                },
              }),
            );
      const p = new OllamaProvider({ name: "ollama", base_url: "http://replay.invalid" }, { fetch: fetch as typeof globalThis.fetch });
      return (await collect(p.stream(request()))).events;
    };
    const whole = await run([body]);
    expect(whole.map((e) => e.type)).toEqual(["thinking_delta", "thinking_delta", "text_delta", "done"]);
    const lines = body.split(/(?<=\n)/);
    const each = await run([...lines]);
    const deltas = lines.filter((l) => /"(content|thinking)":"[^"]/.test(l)).length;
    expect(each.filter((e) => e.type === "text_delta" || e.type === "thinking_delta")).toHaveLength(deltas);
    const text = (es: typeof whole, t: string) => es.flatMap((e) => (e.type === t ? [(e as { text: string }).text] : [])).join("");
    expect([text(each, "text_delta"), text(each, "thinking_delta")]).toEqual([text(whole, "text_delta"), text(whole, "thinking_delta")]);
  });
});

describe("multi-turn through the loop", () => {
  it("every request keeps the previous request's messages as a byte-identical prefix", async () => {
    const host = await Host.create({
      plugins: [
        definePlugin({
          name: "weather-tool",
          setup(ctx) {
            ctx.tools.register(
              defineTool({ name: "getWeather", description: "Weather for a place.", input: z.object({ location: z.string() }), kind: "read", async run({ location }) {
                return { content: `foggy in ${location}` };
              } }),
            );
          },
        }),
      ],
      cwd: mkdtempSync(join(tmpdir(), "larik-ollama-loop-")),
      settings: {},
    });
    server.enqueue(
      show(["completion", "tools", "thinking"]),
      { status: 200, body: fixture("ollama/tool-call-nonstream.json"), chunking: { seed: 11 } },
      { status: 200, body: fixture("ollama/text.ndjson") },
      { status: 200, body: fixture("ollama/thinking.ndjson"), chunking: "bytes" },
    );
    const agent = await host.openAgent({ provider: provider(), model: "ollama/gpt-oss:120b", mode: "yolo" });
    const events: AgentEvent[] = [];
    for await (const e of agent.run("What's the weather like in San Francisco?")) events.push(e);
    for await (const e of agent.run("Count from 1 to 5")) events.push(e);
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(events.filter((e) => e.type === "tool_end").map((e) => (e as any).output)).toEqual(["foggy in San Francisco, CA"]);
    const bodies = chats().map((r) => r.json());
    expect(bodies).toHaveLength(3);
    for (let i = 1; i < bodies.length; i++) {
      const prev = JSON.stringify(bodies[i - 1].messages);
      expect(JSON.stringify(bodies[i].messages).startsWith(prev.slice(0, -1) + ",")).toBe(true);
      expect(bodies[i].tools).toEqual(bodies[0].tools);
      expect(bodies[i].options).toEqual(bodies[0].options);
    }
    expect(bodies[1].messages[2]).toEqual({
      role: "assistant",
      content: "",
      thinking: "User asks about weather in San Francisco. Use function getWeather.",
      tool_calls: [{ id: "call_mo1wm122", function: { name: "getWeather", arguments: { location: "San Francisco, CA" } } }],
    });
    expect(bodies[1].messages[3]).toEqual({ role: "tool", content: "foggy in San Francisco, CA", tool_name: "getWeather", tool_call_id: "call_mo1wm122" });
    await host.dispose();
  }, 60_000);
});

describe("failure modes", () => {
  it("retries a 429 with Retry-After (ollama.com), then streams", async () => {
    const waits: number[] = [];
    server.enqueue(show(), { status: 429, headers: { "retry-after": "3", "content-type": "application/json" }, body: '{"error":"too many requests"}' }, { status: 200, body: fixture("ollama/text.ndjson") });
    const out = await collect(provider({ api_key: "ok" }, { waits }).stream(request()));
    expect(out.error).toBeUndefined();
    expect(waits).toEqual([3000]);
    expect(chats()).toHaveLength(2);
    expect(chats()[0]!.headers.authorization).toBe("Bearer ok");
  });

  it("context overflow (truncate: false) is classified and names context_length", async () => {
    server.enqueue(show(), json(400, { error: "the input length exceeds the context length" }));
    const err = (await collect(provider().stream(request()))).error as ProviderError;
    expect([err.kind, err.retryable]).toEqual(["context_overflow", false]);
    expect(err.message).toContain("providers.ollama.context_length");
  });

  it("a model that is not pulled names ollama pull", async () => {
    server.enqueue(json(404, { error: "model 'nope' not found" }), json(404, { error: "model 'nope' not found" }));
    const err = (await collect(provider().stream(request({ model: "nope" })))).error as ProviderError;
    expect([err.kind, err.message]).toEqual(["not_found", "model 'nope' not found (ollama pull nope)"]);
  });

  it("surfaces a connection cut after output, without retrying", async () => {
    const body = fixture("ollama/text.ndjson");
    server.enqueue(show(), { status: 200, body, cutAfter: 600 }, { status: 200, body });
    const out = await collect(provider().stream(request()));
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
    expect((out.error as ProviderError).kind).toBe("network");
    expect(chats()).toHaveLength(1);
  });

  it("stalls after stall_timeout seconds of silence (default 900 s)", async () => {
    const body = fixture("ollama/text.ndjson");
    server.enqueue(show(), { status: 200, body: body.slice(0, 600), hang: true });
    const out = await collect(provider({ stall_timeout: 0.3 }).stream(request()));
    expect((out.error as ProviderError).kind).toBe("stall");
    expect(ollamaFactory.stallTimeout).toBe(900);
  });
});

describe("configuration", () => {
  function registry(): Registry<ProviderFactory> {
    const reg = new Registry<ProviderFactory>("providers");
    void ollamaPlugin.setup({ providers: { register: (f: ProviderFactory) => reg.register(f, "ollama") } } as never);
    return reg;
  }

  it("needs no key; OLLAMA_HOST without a scheme works; context_length comes from providers.ollama", async () => {
    const host = server.url.replace("http://", "");
    const r = resolveModel("ollama/gemma3:1b", registry(), { providers: { ollama: { context_length: 4096 } } }, { OLLAMA_HOST: host });
    expect([r.provider, r.model, r.config.api_key, r.config.context_length]).toEqual(["ollama", "gemma3:1b", undefined, 4096]);
    server.enqueue(show(), { status: 200, body: fixture("ollama/text.ndjson") });
    const out = await collect((await r.factory.create(r.config)).stream(request()));
    expect(out.error).toBeUndefined();
    expect(chats()[0]!.json().options.num_ctx).toBe(4096);
    expect(ollamaBaseUrl("0.0.0.0")).toBe("http://0.0.0.0:11434");
    expect(ollamaBaseUrl("https://ollama.com")).toBe("https://ollama.com");
    expect(ollamaBaseUrl(undefined)).toBe("http://localhost:11434");
  });

  it("an unreachable host is one line naming the URL and OLLAMA_HOST", async () => {
    const p = new OllamaProvider({ name: "ollama", base_url: "http://127.0.0.1:1", base_url_env: ["OLLAMA_HOST"] }, { sleep: async () => {} });
    const err = (await collect(p.stream(request()))).error as ProviderError;
    expect(err.kind).toBe("network");
    // Ollama's own question, not the general one as well
    expect(err.message).toBe("cannot reach http://127.0.0.1:1/api/chat: ECONNREFUSED (is Ollama running? check providers.ollama.base_url or OLLAMA_HOST)");
  });
});
