/**
 * The `anthropic` provider against real recordings replayed over loopback HTTP, plus request
 * body, retry and failure-mode tests.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ConfigError,
  ProviderError,
  Registry,
  endpointHint,
  resolveModel,
  type Block,
  type Message,
  type ModelRequest,
  type Provider,
  type ProviderFactory,
} from "../kernel/index.js";
import anthropicPlugin, { anthropicFactory } from "../plugins/anthropic/index.js";
import { AnthropicProvider } from "../plugins/anthropic/provider.js";
import { thinkingStyle } from "../plugins/anthropic/catalog.js";
import { mapStopReason } from "../plugins/anthropic/decode.js";
import { collect, matchesDescriptor, ReplayServer, sseBody, type Reply } from "./fakes/replay-server.js";
import { fixture, manifestFor, NORMALIZED_STOP, replyFor, CHUNKINGS } from "./fakes/recordings.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";

// whole images (CPython's test images): anything else is sent as a note, see request.ts
const IMAGES = join(import.meta.dirname, "fixtures", "images");
const PNG64 = readFileSync(join(IMAGES, "python.png")).toString("base64");
const JPEG64 = readFileSync(join(IMAGES, "python.jpg")).toString("base64");

const manifest = manifestFor("anthropic");

const ERROR_KIND: Record<string, string> = {
  "anthropic/error-400-prompt-too-long.json": "context_overflow",
  "anthropic/error-401-authentication.json": "auth",
};

let server: ReplayServer;
beforeEach(async () => {
  server = await ReplayServer.start();
});
afterEach(async () => {
  await server.close();
});

async function provider(name = "anthropic"): Promise<Provider> {
  return anthropicFactory.create({ name, base_url: server.url, api_key: "sk-test", api_key_env: "ANTHROPIC_API_KEY" });
}

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "claude-sonnet-4-20250514",
    system: "You are a helpful assistant",
    tools: [],
    messages: [{ role: "user", blocks: [{ type: "text", text: "hi" }] }],
    ...over,
  };
}

function blockOrder(blocks: Block[]): string[] {
  return blocks.map((b) => {
    if (b.type === "thinking") return b.redacted ? "redacted_thinking" : "thinking";
    if (b.type === "opaque") return String((b.raw as { type: string }).type);
    return b.type;
  });
}

// 1-byte writes really arrive one byte at a time (see replay-server.ts), which takes seconds
// for the larger recordings: hence the long per-test timeout below, not a speed assertion.
describe("recorded Anthropic streams decode to the manifest's outcome", () => {
  for (const entry of manifest) {
    for (const [label, chunking] of CHUNKINGS) {
      it(`${entry.file} — ${label}`, async () => {
        server.enqueue(replyFor(entry, chunking));
        const p = await provider();
        const out = await collect(p.stream(request({ model: entry.expected.model ?? "claude-sonnet-4-20250514" })));
        const ex = entry.expected;
        expect(server.requests).toHaveLength(1);
        if (ex.kind === "http_error") {
          expect(out.error).toBeInstanceOf(ProviderError);
          const err = out.error as ProviderError;
          expect(err.kind).toBe(ERROR_KIND[entry.file]);
          expect(err.status).toBe(ex.status);
          expect(err.retryable).toBe(false);
          expect(err.request_id).toBe(ex.body.request_id);
          expect(err.message).toContain(ex.body.error.message);
          return;
        }
        expect(out.error).toBeUndefined();
        const done = out.done!;
        const blocks = done.message.blocks;
        expect(blockOrder(blocks)).toEqual(ex.block_order);
        const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
        expect(text).toBe(ex.text);
        // display deltas add up to the final message
        expect(out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toBe(ex.text);
        const thinking = blocks.filter((b) => b.type === "thinking" && !b.redacted) as Extract<Block, { type: "thinking" }>[];
        expect(thinking).toHaveLength(ex.thinking.length);
        thinking.forEach((b, i) => {
          expect(b.text).toBe(ex.thinking[i].thinking);
          expect(matchesDescriptor(b.signature, ex.thinking[i].signature), `signature ${i}`).toBe(true);
          expect(b.provider).toBe("anthropic");
        });
        const redacted = blocks.filter((b) => b.type === "thinking" && b.redacted) as Extract<Block, { type: "thinking" }>[];
        expect(redacted).toHaveLength(ex.redacted_thinking.length);
        redacted.forEach((b, i) => expect(matchesDescriptor(b.signature, ex.redacted_thinking[i]), `redacted ${i}`).toBe(true));
        const calls = blocks.filter((b) => b.type === "tool_use").map((b) => ({ id: (b as any).id, name: (b as any).name, input: (b as any).input }));
        expect(calls).toEqual(ex.tool_calls);
        expect(out.events.filter((e) => e.type === "tool_use_start").map((e) => (e as any).id)).toEqual(ex.tool_calls.map((c: any) => c.id));
        const server_blocks = blocks.filter((b) => b.type === "opaque").map((b) => (b as any).raw);
        expect(server_blocks).toHaveLength(ex.server_tool_blocks.length);
        // the manifest names a result block by the id of the server call it answers
        const named = server_blocks.map((raw) => ("tool_use_id" in raw ? { ...raw, id: raw.tool_use_id } : raw));
        named.forEach((raw, i) => expect(raw).toMatchObject(ex.server_tool_blocks[i]));
        expect(done.usage).toEqual({
          input: ex.usage.input_tokens,
          output: ex.usage.output_tokens,
          cache_read: ex.usage.cache_read_input_tokens,
          cache_write: ex.usage.cache_creation_input_tokens,
        });
        expect(done.stop_reason).toBe(NORMALIZED_STOP[ex.normalized_stop]);
        expect(done.message.model).toBe(ex.model);
      }, 120_000);
    }
  }
});

describe("events per network read", () => {
  /** The provider reading `file` from memory in reads of `size` bytes (the whole file when 0). */
  async function eventsOf(file: string, size: number) {
    const bytes = new Uint8Array(Buffer.from(fixture(file)));
    const reads: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size || bytes.length) reads.push(bytes.subarray(i, i + (size || bytes.length)));
    const fetch = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(c) {
            const r = reads.shift();
            if (r) c.enqueue(r);
            else c.close();
          },
        }),
      );
    const p = new AnthropicProvider({ name: "anthropic", base_url: "http://replay.invalid", api_key: "k" }, { fetch: fetch as typeof globalThis.fetch });
    return (await collect(p.stream(request()))).events;
  }

  it("merges the deltas of one read, yields the first alone and keeps the tool start in its place", async () => {
    const whole = await eventsOf("anthropic/tool-use.sse", 0);
    expect(whole.map((e) => e.type)).toEqual(["text_delta", "text_delta", "tool_use_start", "done"]);
    const done = whole.at(-1) as Extract<(typeof whole)[number], { type: "done" }>;
    expect(whole.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toBe((done.message.blocks[0] as { text: string }).text);
    // one byte per read: nothing arrives together, so every wire delta is its own event
    const wire = fixture("anthropic/tool-use.sse").match(/"type":"text_delta"/g)!.length;
    const bytewise = await eventsOf("anthropic/tool-use.sse", 1);
    expect(bytewise.filter((e) => e.type === "text_delta")).toHaveLength(wire);
    expect(bytewise.filter((e) => e.type !== "text_delta")).toEqual(whole.filter((e) => e.type !== "text_delta"));
  });
});

describe("request body", () => {
  async function send(req: ModelRequest, name = "anthropic"): Promise<any> {
    server.enqueue({ status: 200, body: fixture("anthropic/text.sse") });
    const out = await collect((await provider(name)).stream(req));
    expect(out.error).toBeUndefined();
    return server.requests.at(-1)!.json();
  }

  it("posts to /v1/messages with the key, version and a top-level system block", async () => {
    const body = await send(request());
    const req = server.requests[0]!;
    expect(req.path).toBe("/v1/messages");
    expect(req.headers["x-api-key"]).toBe("sk-test");
    expect(req.headers["anthropic-version"]).toBe("2023-06-01");
    expect(body.system).toEqual([{ type: "text", text: "You are a helpful assistant", cache_control: { type: "ephemeral" } }]);
    expect(body.messages.every((m: any) => m.role === "user" || m.role === "assistant")).toBe(true);
    expect(body.stream).toBe(true);
    expect(body.max_tokens).toBe(64_000); // from the catalog entry of claude-sonnet-4-20250514
  });

  it("sends tools with input_schema", async () => {
    const schema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
    const body = await send(request({ tools: [{ name: "read", description: "Read a file", input_schema: schema }] }));
    expect(body.tools).toEqual([{ name: "read", description: "Read a file", input_schema: schema }]);
  });

  it("puts tool results first in the user message, with is_error and images", async () => {
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "look" }] },
      {
        role: "assistant",
        model: "claude-sonnet-4-20250514",
        blocks: [
          { type: "tool_use", id: "t1", name: "read", input: { path: "a" } },
          { type: "tool_use", id: "t2", name: "shot", input: {} },
        ],
      },
      {
        role: "user",
        blocks: [
          { type: "text", text: "<system-note>x</system-note>" },
          { type: "tool_result", id: "t1", content: "no such file", is_error: true },
          { type: "tool_result", id: "t2", content: "screenshot", images: [{ media_type: "image/png", data: PNG64 }] },
        ],
      },
    ];
    const body = await send(request({ messages }));
    const user = body.messages[2];
    expect(user.content.map((b: any) => b.type)).toEqual(["tool_result", "tool_result", "text"]);
    expect(user.content[0]).toEqual({ type: "tool_result", tool_use_id: "t1", content: "no such file", is_error: true });
    expect(user.content[1].content).toEqual([
      { type: "text", text: "screenshot" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG64 } },
    ]);
    expect(body.messages[1].content[0]).toEqual({ type: "tool_use", id: "t1", name: "read", input: { path: "a" } });
  });

  it("leaves out white-space-only text, which the API rejects with a 400 on every later request", async () => {
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "list it" }, { type: "text", text: " \n" }] },
      // a model may open a tool call with "\n\n": stored as a text block, it must not be replayed
      { role: "assistant", model: "claude-sonnet-4-20250514", blocks: [{ type: "text", text: "\n\n" }, { type: "tool_use", id: "toolu_1", name: "ls", input: {} }] },
      {
        role: "user",
        blocks: [
          { type: "tool_result", id: "toolu_1", content: "\n" },
          { type: "tool_result", id: "toolu_2", content: " ", images: [{ media_type: "image/png", data: PNG64 }] },
        ],
      },
    ];
    const body = await send(request({ messages }));
    const texts: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") {
        const o = v as Record<string, unknown>;
        if (o.type === "text") texts.push(String(o.text));
        Object.values(o).forEach(walk);
      }
    };
    walk(body.messages);
    expect(texts).toEqual(["list it"]);
    expect(body.messages[1].content).toEqual([{ type: "tool_use", id: "toolu_1", name: "ls", input: {} }]);
    expect(body.messages[2].content[0]).toEqual({ type: "tool_result", tool_use_id: "toolu_1" });
    expect(body.messages[2].content[1].content).toEqual([{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG64 } }]);
  });

  it("maps tool-call ids the API's pattern rejects, the same way for the call and its result", async () => {
    // Kimi (through a Chat Completions server) names its calls "functions.<tool>:<n>"; the
    // conversation then moves to Claude
    const messages = (ids: string[]): Message[] => [
      { role: "user", blocks: [{ type: "text", text: "go" }] },
      { role: "assistant", model: "kimi-k2", blocks: ids.map((id) => ({ type: "tool_use" as const, id, name: "bash", input: {} })) },
      { role: "user", blocks: ids.map((id) => ({ type: "tool_result" as const, id, content: "ok" })) },
    ];
    const ids = ["functions.bash:0", "functions_bash_0", "toolu_01A-b", "call_larik_m1x2_0"];
    const body = await send(request({ messages: messages(ids) }));
    const uses = body.messages[1].content.map((b: any) => b.id);
    const results = body.messages[2].content.map((b: any) => b.tool_use_id);
    for (const id of uses) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(results).toEqual(uses);
    // valid ids are sent as they are; mapped ones stay apart from a valid id they resemble
    expect(uses.slice(1)).toEqual(ids.slice(1));
    expect(uses[0]).toMatch(/^functions_bash_0_[0-9a-f]{8}$/);
    // the next request maps it the same way (the prompt prefix stays cached)
    const again = await send(request({ messages: messages(ids) }));
    expect(again.messages[1].content[0].id).toBe(uses[0]);
  });

  it("keeps tool-call ids unique across the request when another provider repeated them", async () => {
    // a server that numbers calls per message (Kimi's "functions.read:0", llama.cpp's "call_0")
    // gave two turns the same ids; the conversation then moves to Claude
    const turn = (id: string, i: number): Message[] => [
      { role: "assistant", model: "kimi-k2", blocks: [{ type: "tool_use", id, name: "read", input: { n: i } }, { type: "tool_use", id: `${id}b`, name: "read", input: {} }] },
      { role: "user", blocks: [{ type: "tool_result", id, content: `r${i}` }, { type: "tool_result", id: `${id}b`, content: `b${i}` }] },
    ];
    const messages: Message[] = [{ role: "user", blocks: [{ type: "text", text: "go" }] }, ...turn("call_0", 1), ...turn("call_0", 2), ...turn("call_0", 3)];
    const body = await send(request({ messages }));
    const uses = body.messages.flatMap((m: any) => m.content.filter((b: any) => b.type === "tool_use").map((b: any) => b.id));
    expect(uses).toEqual(["call_0", "call_0b", "call_0_2", "call_0b_2", "call_0_3", "call_0b_3"]);
    // each result answers its own call
    const results = body.messages.flatMap((m: any) => m.content.filter((b: any) => b.type === "tool_result").map((b: any) => `${b.tool_use_id}=${b.content}`));
    expect(results).toEqual(["call_0=r1", "call_0b=b1", "call_0_2=r2", "call_0b_2=b2", "call_0_3=r3", "call_0b_3=b3"]);
    // a later request names the earlier calls the same way (the cached prefix holds)
    const again = await send(request({ messages: [...messages, ...turn("call_0", 4)] }));
    expect(again.messages.slice(0, body.messages.length).map((m: any) => m.content.map((b: any) => b.id ?? b.tool_use_id))).toEqual(
      body.messages.map((m: any) => m.content.map((b: any) => b.id ?? b.tool_use_id)),
    );
  });

  it("sends user images as base64 image blocks", async () => {
    const body = await send(request({ messages: [{ role: "user", blocks: [{ type: "image", media_type: "image/jpeg", data: JPEG64 }, { type: "text", text: "what is it?" }] }] }));
    expect(body.messages[0].content[0]).toEqual({ type: "image", source: { type: "base64", media_type: "image/jpeg", data: JPEG64 } });
  });

  const priorTurn = (model: string, provider = "anthropic"): Message[] => [
    { role: "user", blocks: [{ type: "text", text: "weather?" }] },
    {
      role: "assistant",
      model,
      blocks: [
        { type: "thinking", text: "I should call weather", signature: "SIG-verbatim==", provider },
        { type: "thinking", text: "", redacted: true, signature: "REDACTED-DATA", provider },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Florence" }, provider },
      ],
    },
    { role: "user", blocks: [{ type: "tool_result", id: "toolu_1", content: "sunny" }] },
  ];

  it("replays thinking, signature verbatim, before tool_use to the same provider and model", async () => {
    const body = await send(request({ model: "claude-sonnet-4-20250514", messages: priorTurn("claude-sonnet-4-20250514") }));
    expect(body.messages[1].content).toEqual([
      { type: "thinking", thinking: "I should call weather", signature: "SIG-verbatim==" },
      { type: "redacted_thinking", data: "REDACTED-DATA" },
      { type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Florence" } },
    ]);
  });

  it("drops thinking produced by another model or another provider", async () => {
    const other = await send(request({ model: "claude-sonnet-4-20250514", messages: priorTurn("claude-opus-4-1") }));
    expect(other.messages[1].content.map((b: any) => b.type)).toEqual(["tool_use"]);
    const foreign = await send(request({ model: "claude-sonnet-4-20250514", messages: priorTurn("claude-sonnet-4-20250514", "my-proxy") }));
    expect(foreign.messages[1].content.map((b: any) => b.type)).toEqual(["tool_use"]);
  });

  it("places cache breakpoints on the system prompt, the previous request's end and the last message", async () => {
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "u1" }] },
      { role: "assistant", model: "m", blocks: [{ type: "tool_use", id: "a", name: "read", input: {} }] },
      { role: "user", blocks: [{ type: "tool_result", id: "a", content: "r" }, { type: "text", text: "note" }] },
      { role: "assistant", model: "m", blocks: [{ type: "text", text: "done" }] },
      { role: "user", blocks: [{ type: "text", text: "u3a" }, { type: "text", text: "u3b" }] },
    ];
    const body = await send(request({ model: "m", messages }));
    const marked: string[] = [];
    const walk = (v: unknown, path: string) => {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
      else if (v && typeof v === "object") {
        if ("cache_control" in v) marked.push(path);
        for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
      }
    };
    walk(body, "body");
    expect(marked).toEqual(["body.system[0]", "body.messages[2].content[1]", "body.messages[4].content[1]"]);
    expect(body.messages[2].content[1]).toEqual({ type: "text", text: "note", cache_control: { type: "ephemeral" } });
  });

  it("maps effort: adaptive on new models, a capped budget on older ones, nothing without effort", async () => {
    const adaptive = await send(request({ model: "claude-opus-5", effort: "high" }));
    expect(adaptive.thinking).toEqual({ type: "adaptive" });
    expect(adaptive.output_config).toEqual({ effort: "high" });
    const budget = await send(request({ model: "claude-sonnet-4-20250514", effort: "high", max_tokens: 64_000 }));
    expect(budget.thinking).toEqual({ type: "enabled", budget_tokens: 16_384 });
    const capped = await send(request({ model: "claude-sonnet-4-20250514", effort: "max", max_tokens: 8_000 }));
    expect(capped.thinking).toEqual({ type: "enabled", budget_tokens: 6_000 });
    const none = await send(request({ model: "claude-sonnet-4-20250514" }));
    expect(none.thinking).toBeUndefined();
    expect(thinkingStyle("claude-3-5-haiku-20241022")).toBe("none");
    expect(thinkingStyle("claude-3-7-sonnet-20250219")).toBe("budget");
    expect(thinkingStyle("claude-opus-4-6")).toBe("adaptive");
  });
});

describe("failure modes", () => {
  const textSse = () => fixture("anthropic/text.sse");

  it("retries a 429 with Retry-After, then streams the answer", async () => {
    server.enqueue(
      { status: 429, headers: { "retry-after": "1", "content-type": "application/json" }, body: '{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}' },
      { status: 200, body: textSse() },
    );
    const waits: number[] = [];
    const p = new AnthropicProvider({ name: "anthropic", base_url: server.url, api_key: "k" }, { sleep: async (ms) => void waits.push(ms) });
    const out = await collect(p.stream(request()));
    expect(out.error).toBeUndefined();
    expect(waits).toEqual([1000]);
    expect(server.requests).toHaveLength(2);
    expect(out.events[0]).toMatchObject({ type: "notice" });
    expect(out.done!.message.blocks[0]).toMatchObject({ type: "text" });
  });

  it("decodes CRLF line endings and keep-alive comments like the recording itself", async () => {
    const lf = fixture("anthropic/tool-use.sse");
    const crlf = `: keep-alive\r\n\r\n${lf.replace(/\n\n/g, "\n: keep-alive\n\n").replace(/\n/g, "\r\n")}`;
    server.enqueue({ status: 200, body: lf }, { status: 200, body: crlf, chunking: { seed: 11, max: 7 } });
    const a = await collect((await provider()).stream(request()));
    const b = await collect((await provider()).stream(request()));
    expect(b.error).toBeUndefined();
    expect(b.done).toEqual(a.done);
    expect(b.done!.message.blocks.map((x) => x.type)).toEqual(["text", "tool_use"]);
  });

  it("retries a 529 with an HTTP-date Retry-After and a 503 with retry-after-ms, then streams", async () => {
    const at = new Date(Date.now() + 5_000).toUTCString();
    server.enqueue(
      { status: 529, headers: { "retry-after": at, "content-type": "application/json" }, body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' },
      { status: 503, headers: { "retry-after-ms": "250" }, body: "" },
      { status: 200, body: textSse() },
    );
    const waits: number[] = [];
    const p = new AnthropicProvider({ name: "anthropic", base_url: server.url, api_key: "k" }, { sleep: async (ms) => void waits.push(ms) });
    const out = await collect(p.stream(request()));
    expect(out.error).toBeUndefined();
    expect(server.requests).toHaveLength(3);
    // an HTTP date has whole seconds: the wait is what is left of the 5 s
    expect(waits[0]).toBeGreaterThan(3_000);
    expect(waits[0]).toBeLessThanOrEqual(5_000);
    expect(waits[1]).toBe(250);
    expect(out.events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toEqual([
      expect.stringMatching(/HTTP 529 overloaded; retrying in \d\.\d s \(1\/2\)/),
      expect.stringMatching(/HTTP 503 server error; retrying in 0\.3 s \(2\/2\)/),
    ]);
  });

  it("maps every stop reason of the API", async () => {
    const stops: Record<string, string> = {
      end_turn: "end_turn",
      stop_sequence: "end_turn",
      max_tokens: "max_tokens",
      model_context_window_exceeded: "max_tokens",
      refusal: "refusal",
      pause_turn: "pause_turn",
    };
    for (const reason of Object.keys(stops)) server.enqueue({ status: 200, body: textSse().replace('"stop_reason":"end_turn"', `"stop_reason":"${reason}"`) });
    const got: Record<string, string> = {};
    for (const reason of Object.keys(stops)) got[reason] = (await collect((await provider()).stream(request()))).done!.stop_reason;
    expect(got).toEqual(stops);
  });

  it("a missing or unknown stop reason (a proxy, a newer API) is tool_use when the reply has tool calls, else end_turn", () => {
    for (const reason of [null, undefined, "some_new_reason"]) {
      expect(mapStopReason(reason, true)).toBe("tool_use");
      expect(mapStopReason(reason, false)).toBe("end_turn");
    }
  });

  it("an abort mid-stream ends the stream with the abort, without a final message", async () => {
    const body = textSse();
    server.enqueue({ status: 200, body: body.slice(0, body.indexOf("event: content_block_stop")), hang: true });
    const ctrl = new AbortController();
    const seen: string[] = [];
    let error: unknown;
    try {
      for await (const e of (await provider()).stream(request({ signal: ctrl.signal }))) {
        seen.push(e.type);
        if (e.type === "text_delta") ctrl.abort();
      }
    } catch (err) {
      error = err;
    }
    expect((error as Error).name).toBe("AbortError");
    // what was decoded with the first delta may still come; nothing after the abort is read
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((t) => t === "text_delta")).toBe(true);
  });

  it("surfaces a connection cut after output, without retrying", async () => {
    const body = textSse();
    server.enqueue({ status: 200, body, cutAfter: body.indexOf("content_block_stop") }, { status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
    expect(out.done).toBeUndefined();
    expect((out.error as ProviderError).kind).toBe("network");
    expect(server.requests).toHaveLength(1);
  });

  it("a stream without message_stop is truncated, not a normal finish", async () => {
    const body = textSse().replace(/event: message_stop\ndata: [^\n]*\n\n/, "");
    expect(body).not.toContain("message_stop");
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done).toBeUndefined();
    expect((out.error as ProviderError).kind).toBe("truncated");
  });

  it("an in-stream overloaded_error becomes an overloaded ProviderError", async () => {
    const body = sseBody([
      { event: "message_start", data: '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":3,"output_tokens":1}}}' },
      { event: "content_block_start", data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}' },
      { event: "content_block_delta", data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}' },
      { event: "error", data: '{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"} }' },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    const err = out.error as ProviderError;
    expect([err.kind, err.status, err.retryable]).toEqual(["overloaded", 529, true]);
    expect(server.requests).toHaveLength(1);
  });

  it("an in-stream error or a cut before any output sends the request again, after a notice", async () => {
    const start = { event: "message_start", data: '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":3,"output_tokens":1}}}' };
    const overloaded = sseBody([start, { event: "ping", data: '{"type":"ping"}' }, { event: "error", data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }]);
    const cut = sseBody([start]);
    server.enqueue({ status: 200, body: overloaded }, { status: 200, body: cut }, { status: 200, body: textSse() });
    const waits: number[] = [];
    const p = new AnthropicProvider({ name: "anthropic", base_url: server.url, api_key: "k" }, { sleep: async (ms) => void waits.push(ms), random: () => 0 });
    const out = await collect(p.stream(request()));
    expect(out.error).toBeUndefined();
    expect(out.done!.message.blocks[0]).toMatchObject({ type: "text" });
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]!.body).toBe(server.requests[0]!.body);
    expect(waits).toEqual([500, 1000]);
    expect(out.events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toEqual([
      "anthropic: the answer failed before any output (overloaded: Overloaded); sending the request again in 0.5 s (1/2)",
      "anthropic: the answer failed before any output (truncated: the response stream ended before message_stop: the answer is incomplete); sending the request again in 1.0 s (2/2)",
    ]);
  });

  it("an in-stream error before output is resent at most maxRetries times, then surfaced", async () => {
    const overloaded = sseBody([{ event: "error", data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }]);
    server.enqueue({ status: 200, body: overloaded }, { status: 200, body: overloaded });
    const p = new AnthropicProvider({ name: "anthropic", base_url: server.url, api_key: "k" }, { sleep: async () => {}, maxRetries: 1 });
    const out = await collect(p.stream(request()));
    expect([(out.error as ProviderError).kind, server.requests.length, server.pending]).toEqual(["overloaded", 2, 0]);
    // an invalid request never is
    server.enqueue({ status: 200, body: sseBody([{ event: "error", data: '{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}' }]) }, { status: 200, body: textSse() });
    const bad = await collect(p.stream(request()));
    expect([(bad.error as ProviderError).kind, server.requests.length, server.pending]).toEqual(["bad_request", 3, 1]);
  });

  it("keeps raw_input when tool JSON was cut by max_tokens", async () => {
    const body = sseBody([
      { event: "message_start", data: '{"type":"message_start","message":{"id":"m","usage":{"input_tokens":3,"output_tokens":1}}}' },
      { event: "content_block_start", data: '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_x","name":"write","input":{}}}' },
      { event: "content_block_delta", data: '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}' },
      { event: "content_block_delta", data: '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": \\"a.txt\\", \\"content\\": \\"hel"}}' },
      { event: "content_block_stop", data: '{"type":"content_block_stop","index":0}' },
      { event: "message_delta", data: '{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":50}}' },
      { event: "message_stop", data: '{"type":"message_stop"}' },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.stop_reason).toBe("max_tokens");
    expect(out.done!.message.blocks[0]).toEqual({
      type: "tool_use",
      id: "toolu_x",
      name: "write",
      input: {},
      provider: "anthropic",
      raw_input: '{"path": "a.txt", "content": "hel',
    });
    expect(out.done!.usage).toEqual({ input: 3, output: 50, cache_read: 0, cache_write: 0 });
  });

  it("stalls after stall_timeout seconds of silence", async () => {
    const body = textSse();
    server.enqueue({ status: 200, body: body.slice(0, body.indexOf("event: content_block_stop")), hang: true });
    const p = await anthropicFactory.create({ name: "anthropic", base_url: server.url, api_key: "k", stall_timeout: 0.3 });
    const out = await collect(p.stream(request()));
    expect((out.error as ProviderError).kind).toBe("stall");
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
  });

  it("a 413 (over the API's 32 MB request limit) is not retried and says what makes a request that big", async () => {
    server.enqueue({
      status: 413,
      headers: { "content-type": "application/json", "request-id": "req_413" },
      body: JSON.stringify({ type: "error", error: { type: "request_too_large", message: "Request exceeds the maximum allowed number of bytes." } }),
    });
    const err = (await collect((await provider()).stream(request()))).error as ProviderError;
    expect([err.kind, err.status, err.retryable, server.requests.length]).toEqual(["too_large", 413, false, 1]);
    expect(err.message).toBe(
      "Request exceeds the maximum allowed number of bytes. (the request is larger than the server takes, mostly because of images or long tool output in the conversation: /clear or a new session starts a smaller one) [request_id req_413]",
    );
  });

  it("an unreachable base URL is one line naming the URL", async () => {
    const p = new AnthropicProvider({ name: "anthropic", base_url: "http://127.0.0.1:1", base_url_env: ["ANTHROPIC_BASE_URL"], api_key: "k" }, { sleep: async () => {} });
    const out = await collect(p.stream(request()));
    const err = out.error as ProviderError;
    expect(err.kind).toBe("network");
    // nothing listens there: the line says so, as for every provider
    expect(err.message).toBe("cannot reach http://127.0.0.1:1/v1/messages: ECONNREFUSED (check providers.anthropic.base_url or ANTHROPIC_BASE_URL; is the server running?)");
  });
});

describe("a rejected thinking replay (LARIK-REFERENCE §10)", () => {
  const MODEL = "claude-sonnet-4-20250514";
  const messages: Message[] = [
    { role: "user", blocks: [{ type: "text", text: "weather?" }] },
    {
      role: "assistant",
      model: MODEL,
      blocks: [
        { type: "thinking", text: "I should call weather", signature: "SIG-edited==", provider: "anthropic" },
        { type: "thinking", text: "", redacted: true, signature: "REDACTED-DATA", provider: "anthropic" },
        { type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Florence" }, provider: "anthropic" },
      ],
    },
    { role: "user", blocks: [{ type: "tool_result", id: "toolu_1", content: "sunny" }] },
    // an earlier turn whose only content was thinking: nothing is left of it after stripping
    { role: "assistant", model: MODEL, blocks: [{ type: "thinking", text: "hmm", signature: "SIG-2", provider: "anthropic" }] },
    { role: "user", blocks: [{ type: "text", text: "and tomorrow?" }] },
  ];
  const error400 = (message: string): Reply => ({
    status: 400,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "error", error: { type: "invalid_request_error", message }, request_id: "req_011" }),
  });
  const types = (body: any) => body.messages.map((m: any) => m.content.map((b: any) => b.type));

  it("an invalid signature: resends once without thinking blocks, with a notice, and decodes the answer", async () => {
    server.enqueue(error400("messages.1.content.0: Invalid `signature` in `thinking` block"), { status: 200, body: fixture("anthropic/text.sse") });
    const out = await collect((await provider()).stream(request({ model: MODEL, messages })));
    expect(out.error).toBeUndefined();
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests.map((r) => r.json());
    expect(types(first)).toEqual([["text"], ["thinking", "redacted_thinking", "tool_use"], ["tool_result"], ["thinking"], ["text"]]);
    expect(types(second)).toEqual([["text"], ["tool_use"], ["tool_result"], ["text"]]);
    expect(second.messages[1].content[0]).toEqual({ type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Florence" } });
    expect(second.system).toEqual(first.system);
    const notices = out.events.filter((e) => e.type === "notice");
    expect(notices).toHaveLength(1);
    expect((notices[0] as { text: string }).text).toMatch(/rejected earlier thinking.*resending once without 3 thinking blocks/);
    expect(out.done!.message.blocks[0]).toMatchObject({ type: "text" });
    expect(out.done!.stop_reason).toBe("end_turn");
  });

  it("modified thinking blocks are retried once only: a second rejection is surfaced", async () => {
    const msg = "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.";
    server.enqueue(error400(msg), error400(msg), { status: 200, body: fixture("anthropic/text.sse") });
    const out = await collect((await provider()).stream(request({ model: MODEL, messages })));
    const err = out.error as ProviderError;
    expect([err.kind, err.status]).toEqual(["bad_request", 400]);
    expect(server.requests).toHaveLength(2);
    expect(out.done).toBeUndefined();
  });

  it("an unrelated 400 is not retried", async () => {
    server.enqueue(error400("messages.0.content.0.text: text content blocks must be non-empty"), { status: 200, body: fixture("anthropic/text.sse") });
    const out = await collect((await provider()).stream(request({ model: MODEL, messages })));
    expect((out.error as ProviderError).status).toBe(400);
    expect(server.requests).toHaveLength(1);
    expect(out.events.some((e) => e.type === "notice")).toBe(false);
  });

  it("a thinking rejection with no thinking in the request is not retried", async () => {
    server.enqueue(error400("messages.1.content.0: Invalid `signature` in `thinking` block"), { status: 200, body: fixture("anthropic/text.sse") });
    const out = await collect((await provider()).stream(request({ model: MODEL })));
    expect((out.error as ProviderError).status).toBe(400);
    expect(server.requests).toHaveLength(1);
  });
});

describe("images the API cannot process (HTTP 400 Could not process image)", () => {
  const MODEL = "claude-sonnet-4-20250514";
  const png = readFileSync(join(IMAGES, "python.png"));
  const CUT64 = png.subarray(0, 700).toString("base64");
  /** A session with two images read by tools and one the user attached. */
  const messages = (shot: string): Message[] => [
    { role: "user", blocks: [{ type: "text", text: "look at these" }] },
    {
      role: "assistant",
      model: MODEL,
      blocks: [
        { type: "tool_use", id: "t1", name: "read", input: { path: "a.png" } },
        { type: "tool_use", id: "t2", name: "read", input: { path: "b.png" } },
      ],
    },
    {
      role: "user",
      blocks: [
        { type: "tool_result", id: "t1", content: "Image a.png", images: [{ media_type: "image/png", data: shot }] },
        { type: "tool_result", id: "t2", content: "Image b.jpg", images: [{ media_type: "image/jpeg", data: JPEG64 }] },
      ],
    },
    { role: "assistant", model: MODEL, blocks: [{ type: "text", text: "Two pictures." }] },
    { role: "user", blocks: [{ type: "image", media_type: "image/png", data: PNG64 }, { type: "text", text: "and this?" }] },
  ];
  const error400 = (message: string): Reply => ({
    status: 400,
    headers: { "content-type": "application/json", "x-should-retry": "false" },
    body: JSON.stringify({ type: "error", error: { type: "invalid_request_error", message }, request_id: "req_011" }),
  });
  const ok = (): Reply => ({ status: 200, body: fixture("anthropic/text.sse") });
  /** Each message's blocks: `image`, or the text of a note; tool results by their parts. */
  const shape = (body: any) =>
    body.messages.map((m: any) =>
      m.content.map((b: any) => (b.type === "tool_result" ? b.content.map((p: any) => (p.type === "image" ? "image" : p.text)) : b.type === "image" ? "image" : b.text)),
    );

  it("an image cut short in the session (read before the check) goes out as a note; the whole ones as images", async () => {
    server.enqueue(ok());
    const out = await collect((await provider()).stream(request({ model: MODEL, messages: messages(CUT64) })));
    expect(out.error).toBeUndefined();
    expect(shape(server.requests[0]!.json())).toEqual([
      ["look at these"],
      [undefined, undefined],
      [["Image a.png", "[image omitted: truncated PNG (the IDAT chunk runs past the end of the file)]"], ["Image b.jpg", "image"]],
      ["Two pictures."],
      ["image", "and this?"],
    ]);
  });

  it("an image over 5 MB once base64-encoded (a 4 MB screenshot read whole) goes out as a note", async () => {
    server.enqueue(ok());
    // a PNG signature and 4 MB after it: the size alone decides, before any decoding
    const big = Buffer.concat([png.subarray(0, 8), Buffer.alloc(4 * 1024 * 1024)]).toString("base64");
    const out = await collect((await provider()).stream(request({ model: MODEL, messages: messages(big) })));
    expect(out.error).toBeUndefined();
    expect(shape(server.requests[0]!.json())[2][0]).toEqual(["Image a.png", "[image omitted: 5.3 MB once base64-encoded, over the API's limit of 5 MB for one image]"]);
  });

  it("an image the API refuses without saying which: resent once with every image as a note, and later requests send the note at once", async () => {
    server.enqueue(error400("Could not process image"), ok(), ok());
    const p = await provider();
    const out = await collect(p.stream(request({ model: MODEL, messages: messages(PNG64) })));
    expect(out.error).toBeUndefined();
    expect(out.done!.stop_reason).toBe("end_turn");
    const notices = out.events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text);
    expect(notices).toEqual(["anthropic: the API could not process an image in the conversation (Could not process image [request_id req_011]); resending once with 3 images replaced by a note"]);
    const note = "[image omitted: the API could not process it]";
    const resent = [["look at these"], [undefined, undefined], [["Image a.png", note], ["Image b.jpg", note]], ["Two pictures."], [note, "and this?"]];
    expect(shape(server.requests[1]!.json())).toEqual(resent);
    // the next turn of the session: no failing request first
    const next = await collect(p.stream(request({ model: MODEL, messages: messages(PNG64) })));
    expect(next.error).toBeUndefined();
    expect(server.requests).toHaveLength(3);
    expect(shape(server.requests[2]!.json())).toEqual(resent);
  });

  it("an error naming the image replaces that one only; a second refusal is surfaced", async () => {
    const named = "messages.2.content.1.content.1.image.source.base64.data: The image was specified using the image/jpeg media type, but does not appear to be a valid jpeg image";
    server.enqueue(error400(named), error400("Could not process image"));
    const out = await collect((await provider()).stream(request({ model: MODEL, messages: messages(PNG64) })));
    expect(shape(server.requests[1]!.json())[2]).toEqual([["Image a.png", "image"], ["Image b.jpg", "[image omitted: the API could not process it]"]]);
    expect([(out.error as ProviderError).status, (out.error as ProviderError).message]).toEqual([400, "Could not process image [request_id req_011]"]);
    expect(server.requests).toHaveLength(2);
  });
});

describe("max_tokens that does not fit beside the prompt (Claude 3.7 – 4.1 validate it)", () => {
  const limit400 = (input: number, max: number): Reply => ({
    status: 400,
    headers: { "content-type": "application/json", "x-should-retry": "false" },
    body: JSON.stringify({
      type: "error",
      error: { type: "invalid_request_error", message: `input length and \`max_tokens\` exceed context limit: ${input} + ${max} > 200000, decrease input length or \`max_tokens\` and try again` },
      request_id: "req_011",
    }),
  });

  it("resends once with max_tokens lowered to the room the error names, thinking budget with it", async () => {
    // 150 000 prompt tokens: compaction (at 80 % of 200 000) is still far, but 64 000 does not fit
    server.enqueue(limit400(150_000, 64_000), { status: 200, body: fixture("anthropic/text.sse") });
    const out = await collect((await provider()).stream(request({ effort: "max" })));
    expect(out.error).toBeUndefined();
    expect(out.done!.stop_reason).toBe("end_turn");
    const [first, second] = server.requests.map((r) => r.json());
    expect([first.max_tokens, first.thinking]).toEqual([64_000, { type: "enabled", budget_tokens: 48_000 }]);
    expect([second.max_tokens, second.thinking]).toEqual([50_000, { type: "enabled", budget_tokens: 37_500 }]);
    expect(second.messages).toEqual(first.messages);
  });

  it("a room too small for a thinking budget of 1024 resends without thinking (the API refuses a smaller budget)", async () => {
    // 1 200 tokens of room: ¾ of it, 900, is under the 1 024 a budget needs
    server.enqueue(limit400(198_800, 64_000), { status: 200, body: fixture("anthropic/text.sse") });
    const out = await collect((await provider()).stream(request({ effort: "max" })));
    expect(out.error).toBeUndefined();
    const [first, second] = server.requests.map((r) => r.json());
    expect(first.thinking).toEqual({ type: "enabled", budget_tokens: 48_000 });
    expect([second.max_tokens, second.thinking]).toEqual([1_200, undefined]);
  });

  it("max_tokens over the model's own cap (a model outside the catalog): resent with the cap after a notice, and later requests start with it", async () => {
    const cap400: Reply = {
      status: 400,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens for claude-3-haiku-20240307" } }),
    };
    server.enqueue(cap400, { status: 200, body: fixture("anthropic/text.sse") }, { status: 200, body: fixture("anthropic/text.sse") });
    const p = await provider();
    const out = await collect(p.stream(request({ model: "claude-3-haiku-20240307" })));
    expect(out.error).toBeUndefined();
    expect(out.events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toEqual([
      "anthropic: claude-3-haiku-20240307 allows at most 4096 output tokens; resending with max_tokens 4096 (models.claude-3-haiku-20240307.max_output in your config saves this request)",
    ]);
    const next = await collect(p.stream(request({ model: "claude-3-haiku-20240307", max_tokens: 10_000 })));
    expect(next.error).toBeUndefined();
    expect(server.requests.map((r) => r.json().max_tokens)).toEqual([8192, 4096, 4096]);
  });

  it("a second refusal, or too little room, surfaces the overflow for compaction", async () => {
    server.enqueue(limit400(150_000, 64_000), limit400(150_001, 50_000), limit400(199_500, 64_000));
    const twice = (await collect((await provider()).stream(request()))).error as ProviderError;
    expect([twice.kind, twice.status]).toEqual(["context_overflow", 400]);
    expect(server.requests).toHaveLength(2);
    const full = (await collect((await provider()).stream(request()))).error as ProviderError;
    expect(full.kind).toBe("context_overflow");
    expect(server.requests).toHaveLength(3);
  });
});

describe("configuration through resolveModel", () => {
  function registry(): Registry<ProviderFactory> {
    const reg = new Registry<ProviderFactory>("providers");
    const ctx = { providers: { register: (f: ProviderFactory) => reg.register(f, "anthropic") } };
    void anthropicPlugin.setup(ctx as never);
    return reg;
  }

  it("a missing key names ANTHROPIC_API_KEY", () => {
    expect(() => resolveModel("anthropic/claude-opus-5", registry(), {}, {})).toThrow(ConfigError);
    expect(() => resolveModel("anthropic/claude-opus-5", registry(), {}, {})).toThrow(/ANTHROPIC_API_KEY/);
  });

  it("no model at all names the personal config file where it is, XDG_CONFIG_HOME included", () => {
    expect(() => resolveModel(undefined, registry(), {}, { HOME: "/home/u" })).toThrow(/set "model" in ~\/\.config\/larik\/config\.json,/);
    expect(() => resolveModel(undefined, registry(), {}, { HOME: "/home/u", XDG_CONFIG_HOME: "/etc/xdg-u" })).toThrow(/set "model" in \/etc\/xdg-u\/larik\/config\.json,/);
  });

  it("reads the key and ANTHROPIC_BASE_URL from the environment", async () => {
    const r = resolveModel("claude-opus-5", registry(), {}, { ANTHROPIC_API_KEY: "sk-env", ANTHROPIC_BASE_URL: server.url });
    expect([r.provider, r.config.base_url, r.catalog?.context_window]).toEqual(["anthropic", server.url, 200_000]);
    server.enqueue({ status: 200, body: fixture("anthropic/text.sse") });
    const out = await collect((await r.factory.create(r.config)).stream(request({ model: r.model })));
    expect(out.error).toBeUndefined();
    expect(server.requests[0]!.headers["x-api-key"]).toBe("sk-env");
    // what an unreachable endpoint's message tells the user to check
    expect(endpointHint(r.config)).toBe("check providers.anthropic.base_url or ANTHROPIC_BASE_URL");
  });

  it("ANTHROPIC_BASE_URL ending in /v1: /v1/messages is appended as Anthropic's SDK does, and the 404 says to leave /v1 out", async () => {
    // what a FastAPI proxy (LiteLLM) answers for a path it does not serve, and a Go server's text
    server.enqueue(
      { status: 404, headers: { "content-type": "application/json" }, body: '{"detail":"Not Found"}' },
      { status: 404, headers: { "content-type": "text/plain" }, body: "404 page not found" },
    );
    const r = resolveModel("claude-opus-5", registry(), {}, { ANTHROPIC_API_KEY: "sk-env", ANTHROPIC_BASE_URL: `${server.url}/v1` });
    const err = (await collect((await r.factory.create(r.config)).stream(request({ model: r.model })))).error as ProviderError;
    expect(server.requests[0]!.path).toBe("/v1/v1/messages");
    expect([err.kind, err.retryable, err.message]).toEqual([
      "not_found",
      false,
      `Not Found (${server.url}/v1/v1/messages: the base URL ends in /v1, but /v1/messages is appended to it (as Anthropic's SDK does): leave /v1 out (check providers.anthropic.base_url or ANTHROPIC_BASE_URL))`,
    ]);
    // a base URL without /v1 that still misses: where the path comes from, and what to check
    const other = resolveModel("claude-opus-5", registry(), { providers: { anthropic: { base_url: `${server.url}/anthropic` } } }, { ANTHROPIC_API_KEY: "sk-env" });
    const e2 = (await collect((await other.factory.create(other.config)).stream(request({ model: other.model })))).error as ProviderError;
    expect(e2.message).toBe(`404 page not found (${server.url}/anthropic/v1/messages: /v1/messages is appended to the base URL (as Anthropic's SDK does): check providers.anthropic.base_url or ANTHROPIC_BASE_URL)`);
  });

  it("a 401 names where the key came from: the variable, or the config setting", async () => {
    const auth401: Reply = { status: 401, headers: { "content-type": "application/json" }, body: fixture("anthropic/error-401-authentication.json") };
    server.enqueue(auth401, auth401);
    const fromEnv = resolveModel("claude-opus-5", registry(), { providers: { anthropic: { base_url: server.url } } }, { ANTHROPIC_API_KEY: "sk-bad" });
    const a = (await collect((await fromEnv.factory.create(fromEnv.config)).stream(request()))).error as ProviderError;
    expect([a.kind, a.message]).toEqual(["auth", "invalid x-api-key (check ANTHROPIC_API_KEY) [request_id req_011CeCGmBjaWkq37Sf5iU7so]"]);
    const fromConfig = resolveModel("claude-opus-5", registry(), { providers: { anthropic: { base_url: server.url, api_key: "sk-bad" } } }, {});
    const b = (await collect((await fromConfig.factory.create(fromConfig.config)).stream(request()))).error as ProviderError;
    expect(b.message).toBe("invalid x-api-key (check providers.anthropic.api_key) [request_id req_011CeCGmBjaWkq37Sf5iU7so]");
  });

  it("a custom providers.<name> of type anthropic keeps its own name on blocks", async () => {
    const settings = { providers: { "my-claude": { type: "anthropic", base_url: server.url, api_key: "sk-custom" } } };
    const r = resolveModel("my-claude/claude-sonnet-4-20250514", registry(), settings, {});
    expect(r.factory).toBe(anthropicFactory);
    server.enqueue({ status: 200, body: fixture("anthropic/thinking-tool-use.sse") });
    const p = await r.factory.create(r.config);
    expect(p.name).toBe("my-claude");
    const out = await collect(p.stream(request({ model: r.model })));
    const thinking = out.done!.message.blocks.find((b) => b.type === "thinking");
    expect(thinking).toMatchObject({ provider: "my-claude" });
  });
});
