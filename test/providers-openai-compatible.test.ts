/**
 * The `openai-compatible` provider and its presets against real Chat Completions recordings
 * replayed over loopback HTTP, plus request body, retry and failure-mode tests.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ConfigError,
  ProviderError,
  Registry,
  resolveModel,
  type Block,
  type Message,
  type ModelRequest,
  type ProviderConfig,
  type ProviderFactory,
} from "../kernel/index.js";
import chatPlugin, { chatFactories } from "../plugins/openai-compatible/index.js";
import { ChatCompletionsProvider } from "../plugins/openai-compatible/provider.js";
import { CHAT_PRESETS, GENERIC_PRESET } from "../plugins/openai-compatible/presets.js";
import { alnum9Ids, buildChatBody } from "../plugins/openai-compatible/request.js";
import { collect, ReplayServer, sseBody, type Chunking } from "./fakes/replay-server.js";
import { fixture, manifestFor, NORMALIZED_STOP, replyFor } from "./fakes/recordings.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";

// a whole image (CPython's test image): anything else is sent as a note, see request.ts
const PNG = readFileSync(join(import.meta.dirname, "fixtures", "images", "python.png"));
const PNG64 = PNG.toString("base64");

const manifest = manifestFor("openai-chat");

const ERROR_KIND: Record<string, string> = {
  "openai-chat/error-429-request-too-large.json": "context_overflow",
  "openai-chat/error-400-context-length-deepseek.json": "context_overflow",
};

let server: ReplayServer;
beforeEach(async () => {
  server = await ReplayServer.start();
});
afterEach(async () => {
  await server.close();
});

const factory = (name: string) => chatFactories.find((f) => f.name === name)!;

async function provider(name = "openai-compatible", over: Partial<ProviderConfig> = {}) {
  return factory(name).create({ name, base_url: `${server.url}/v1`, api_key: "sk-test", api_key_env: "OPENAI_API_KEY", ...over });
}

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "gpt-4o",
    system: "You are terse.",
    tools: [],
    messages: [{ role: "user", blocks: [{ type: "text", text: "hi" }] }],
    ...over,
  };
}

// 1-byte writes really arrive one byte at a time (see replay-server.ts), which takes seconds
// for the larger recordings: hence the long per-test timeout below, not a speed assertion.
const CHUNKINGS: [string, Chunking][] = [
  ["whole", "whole"],
  ["1-byte writes", "bytes"],
  ["random splits (seed 3)", { seed: 3, max: 64 }],
  ["random splits (seed 41)", { seed: 41, max: 9 }],
];

describe("recorded Chat Completions streams decode to the manifest's outcome", () => {
  for (const entry of manifest) {
    for (const [label, chunking] of CHUNKINGS) {
      it(`${entry.file} — ${label}`, async () => {
        server.enqueue(replyFor(entry, chunking));
        const out = await collect((await provider()).stream(request()));
        const ex = entry.expected;
        expect(server.requests).toHaveLength(1);
        if (ex.kind === "http_error") {
          const err = out.error as ProviderError;
          expect(err).toBeInstanceOf(ProviderError);
          expect(err.kind).toBe(ERROR_KIND[entry.file]);
          expect(err.retryable).toBe(false);
          expect(err.status).toBe(ex.status);
          expect(err.message).toContain(ex.body.error.message.slice(0, 60));
          return;
        }
        expect(out.error).toBeUndefined();
        const done = out.done!;
        const blocks = done.message.blocks;
        const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
        expect(text).toBe(ex.text);
        expect(out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toBe(ex.text);
        const thinking = blocks.flatMap((b) => (b.type === "thinking" ? [b.text] : [])).join("");
        expect(thinking).toBe(ex.reasoning);
        expect(out.events.flatMap((e) => (e.type === "thinking_delta" ? [e.text] : [])).join("")).toBe(ex.reasoning);
        const calls = blocks.filter((b): b is Extract<Block, { type: "tool_use" }> => b.type === "tool_use");
        expect(calls.map((c) => ({ id: c.id, name: c.name, input: c.input }))).toEqual(ex.tool_calls.map((c: any) => ({ id: c.id, name: c.name, input: c.arguments })));
        expect(calls.every((c) => c.raw_input === undefined)).toBe(true);
        expect(out.events.filter((e) => e.type === "tool_use_start").map((e) => (e as any).id)).toEqual(ex.tool_calls.map((c: any) => c.id));
        expect(done.usage).toEqual({ input: ex.usage.prompt_tokens, output: ex.usage.completion_tokens, cache_read: 0, cache_write: 0 });
        expect(done.stop_reason).toBe(NORMALIZED_STOP[ex.normalized_stop]);
        expect(done.message.model).toBe("gpt-4o");
      }, 120_000);
    }
  }
});

const chunk = (delta: object, extra: object = {}) => JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }], ...extra });

describe("stream details", () => {
  it("interleaved parallel calls over CRLF with OpenRouter comments, usage in the choices: [] chunk", async () => {
    const tc = (calls: object[]) => chunk({ tool_calls: calls });
    const body = sseBody([
      { data: chunk({ role: "assistant", content: null }) },
      { data: tc([{ index: 0, id: "call_a", type: "function", function: { name: "read", arguments: "" } }]) },
      { data: tc([{ index: 1, id: "call_b", type: "function", function: { name: "ls", arguments: "" } }]) },
      { data: tc([{ index: 1, function: { arguments: '{"di' } }]) },
      { data: tc([{ index: 0, function: { arguments: '{"path": ' } }]) },
      { data: tc([{ index: 1, function: { arguments: 'r": "src"}' } }, { index: 0, function: { arguments: '"a.ts"}' } }]) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage: null }) },
      { data: JSON.stringify({ choices: [], usage: { prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920 } } }) },
      { data: "[DONE]" },
    ])
      .replace(/\n\n/g, "\n\n: OPENROUTER PROCESSING\n\n")
      .replace(/\n/g, "\r\n");
    server.enqueue({ status: 200, body, chunking: { seed: 5, max: 6 } });
    const out = await collect((await provider("openrouter")).stream(request()));
    expect(out.done!.message.blocks).toEqual([
      { type: "tool_use", id: "call_a", name: "read", input: { path: "a.ts" }, provider: "openrouter" },
      { type: "tool_use", id: "call_b", name: "ls", input: { dir: "src" }, provider: "openrouter" },
    ]);
    expect(out.done!.usage).toEqual({ input: 86, output: 300, cache_read: 1920, cache_write: 0 });
    expect(out.done!.stop_reason).toBe("tool_use");
  });

  it("subtracts cached prompt tokens into cache_read and reads usage without stream_options' empty choices", async () => {
    const body = sseBody([
      { data: chunk({ role: "assistant", content: "ok" }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 1000, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 800 } } }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.usage).toEqual({ input: 200, output: 5, cache_read: 800, cache_write: 0 });
  });

  it("reads DeepSeek's prompt_cache_hit_tokens and usage: null on the usage chunk of vLLM", async () => {
    const body = sseBody([
      { data: chunk({ content: "x" }, { usage: null }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null }) },
      { data: JSON.stringify({ choices: null, usage: { prompt_tokens: 50, completion_tokens: 2, prompt_cache_hit_tokens: 40 } }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.usage).toEqual({ input: 10, output: 2, cache_read: 40, cache_write: 0 });
  });

  it("reads Groq's usage from x_groq on the last chunk", async () => {
    const body = sseBody([
      { data: chunk({ content: "x" }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], x_groq: { id: "req_1", usage: { prompt_tokens: 30, completion_tokens: 4 } } }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider("groq")).stream(request()));
    expect(out.done!.usage).toEqual({ input: 30, output: 4, cache_read: 0, cache_write: 0 });
  });

  it("a cached count above the prompt's is capped at it: input never goes negative", async () => {
    const body = sseBody([
      { data: chunk({ content: "x" }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 50, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 64 } } }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.usage).toEqual({ input: 0, output: 2, cache_read: 50, cache_write: 0 });
  });

  it("reads only the first choice: a second one (n > 1 on a server that ignores n) is not mixed in", async () => {
    const two = (delta0: object, delta1: object) =>
      JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: delta0, finish_reason: null }, { index: 1, delta: delta1, finish_reason: null }] });
    const body = sseBody([
      { data: two({ content: "Hello" }, { content: "Other" }) },
      { data: two({}, { tool_calls: [{ index: 0, id: "x", type: "function", function: { name: "read", arguments: "{}" } }] }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }, { index: 1, delta: {}, finish_reason: "tool_calls" }] }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.message.blocks).toEqual([{ type: "text", text: "Hello" }]);
    expect(out.done!.stop_reason).toBe("end_turn");
  });

  it("counts reasoning in output when completion_tokens leaves it out (xAI), and only then", async () => {
    const usage = (u: object) =>
      sseBody([{ data: chunk({ content: "Hi" }) }, { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) }, { data: JSON.stringify({ choices: [], usage: u }) }, { data: "[DONE]" }]);
    server.enqueue(
      // xAI grok-3-mini (WIRE-FORMATS §0.5): 288 + 27 + 313 = 628
      { status: 200, body: usage({ prompt_tokens: 288, completion_tokens: 27, total_tokens: 628, completion_tokens_details: { reasoning_tokens: 313 } }) },
      // OpenAI: completion_tokens already includes the reasoning
      { status: 200, body: usage({ prompt_tokens: 288, completion_tokens: 340, total_tokens: 628, completion_tokens_details: { reasoning_tokens: 313 } }) },
    );
    const xai = await collect((await provider("xai")).stream(request()));
    expect(xai.done!.usage).toEqual({ input: 288, output: 340, cache_read: 0, cache_write: 0 });
    const openai = await collect((await provider()).stream(request()));
    expect(openai.done!.usage).toEqual({ input: 288, output: 340, cache_read: 0, cache_write: 0 });
  });

  it("maps finish reasons: length → max_tokens, content_filter → refusal, stop with calls → tool_use", async () => {
    const finish = (reason: string, delta: object = { content: "a" }) =>
      sseBody([{ data: chunk(delta) }, { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: reason }] }) }, { data: "[DONE]" }]);
    const call = { tool_calls: [{ index: 0, id: "t", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }] };
    server.enqueue({ status: 200, body: finish("length") }, { status: 200, body: finish("content_filter") }, { status: 200, body: finish("stop", call) });
    const stops = [];
    for (let i = 0; i < 3; i++) stops.push((await collect((await provider()).stream(request()))).done!.stop_reason);
    expect(stops).toEqual(["max_tokens", "refusal", "tool_use"]);
  });

  it("reads Mistral's typed content chunks: thinking as thinking, text as the answer", async () => {
    const think = (text: string) => chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text }] }] });
    const body = sseBody([
      { data: chunk({ role: "assistant", content: "" }) },
      { data: think("The user wants ") },
      { data: think("a count.") },
      { data: chunk({ content: [{ type: "text", text: "1, 2" }] }) },
      { data: chunk({ content: ", 3" }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }], usage: { prompt_tokens: 9, completion_tokens: 30 } }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider("mistral")).stream(request({ model: "magistral-medium-latest" })));
    expect(out.done!.message.blocks).toEqual([
      { type: "thinking", text: "The user wants a count.", provider: "mistral" },
      { type: "text", text: "1, 2, 3" },
    ]);
    expect(out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toBe("1, 2, 3");
    expect(out.done!.usage).toEqual({ input: 9, output: 30, cache_read: 0, cache_write: 0 });
  });

  it("tool calls without index (Gemini's compatible endpoint) are told apart by id", async () => {
    const call = (fields: object) => chunk({ tool_calls: [fields] });
    const body = sseBody([
      { data: chunk({ role: "assistant", content: "Reading both." }) },
      // a whole call per fragment, as Gemini sends them, then one whose arguments come in pieces
      { data: call({ id: "function-call-1", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } }) },
      { data: call({ id: "function-call-2", type: "function", function: { name: "read", arguments: '{"path":' } }) },
      { data: call({ function: { arguments: '"b.txt"}' } }) },
      // two calls side by side in one chunk, neither with an id
      { data: chunk({ tool_calls: [{ function: { name: "ls", arguments: "{}" } }, { function: { name: "pwd", arguments: "{}" } }] }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    const calls = out.done!.message.blocks.filter((b): b is Extract<Block, { type: "tool_use" }> => b.type === "tool_use");
    expect(calls.map((c) => [c.name, c.input, c.raw_input])).toEqual([
      ["read", { path: "a.txt" }, undefined],
      ["read", { path: "b.txt" }, undefined],
      ["ls", {}, undefined],
      ["pwd", {}, undefined],
    ]);
    expect(calls.slice(0, 2).map((c) => c.id)).toEqual(["function-call-1", "function-call-2"]);
    expect(new Set(calls.map((c) => c.id)).size).toBe(4);
    expect(out.events.filter((e) => e.type === "tool_use_start").map((e) => (e as { id: string }).id)).toEqual(calls.map((c) => c.id));
    expect(out.done!.stop_reason).toBe("tool_use");
  });

  it("orders calls by index whatever order they stream in, and takes arguments sent as an object", async () => {
    const body = sseBody([
      // the second call's first fragment comes first; the first call's arguments are an object
      { data: chunk({ tool_calls: [{ index: 1, id: "c2", type: "function", function: { name: "grep", arguments: '{"pattern":' } }] }) },
      { data: chunk({ tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "read", arguments: { path: "a.txt" } } }] }) },
      { data: chunk({ tool_calls: [{ index: 1, function: { arguments: '"x"}' } }] }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    const calls = out.done!.message.blocks.filter((b): b is Extract<Block, { type: "tool_use" }> => b.type === "tool_use");
    expect(calls.map((c) => [c.id, c.name, c.input, c.raw_input])).toEqual([
      ["c1", "read", { path: "a.txt" }, undefined],
      ["c2", "grep", { pattern: "x" }, undefined],
    ]);
  });

  it("keeps raw_input when arguments were cut, and mints an id when the server gave none", async () => {
    const body = sseBody([
      { data: chunk({ tool_calls: [{ index: 0, function: { name: "write", arguments: '{"path": "a", "content": "hel' } }] }) },
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "length" }] }) },
      { data: "[DONE]" },
    ]);
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    const use = out.done!.message.blocks[0] as Extract<Block, { type: "tool_use" }>;
    expect(use).toMatchObject({ type: "tool_use", name: "write", input: {}, raw_input: '{"path": "a", "content": "hel' });
    expect(use.id).toMatch(/^call_/);
    expect(out.events.find((e) => e.type === "tool_use_start")).toMatchObject({ id: use.id });
  });

  it("a mid-stream error chunk is a ProviderError, not retried", async () => {
    const body = sseBody([{ data: chunk({ content: "par" }) }, { data: '{"error":{"message":"The server had an error","type":"server_error","code":null}}' }]);
    server.enqueue({ status: 200, body }, { status: 200, body: fixture("openai-chat/text.sse") });
    const out = await collect((await provider()).stream(request()));
    expect((out.error as ProviderError).kind).toBe("server");
    expect(server.requests).toHaveLength(1);
  });

  it("an error in a 200 JSON body (OpenRouter) is reported with its message, not as a cut stream", async () => {
    server.enqueue({ status: 200, headers: { "content-type": "application/json" }, body: '{"error":{"message":"No endpoints found that support tool use.","code":404}}' });
    const out = await collect((await provider("openrouter")).stream(request()));
    const err = out.error as ProviderError;
    expect([err.kind, err.status, err.message]).toEqual(["not_found", 404, "No endpoints found that support tool use."]);
  });

  it("finish_reason error (OpenRouter) is an error, never a normal finish of the partial answer", async () => {
    const failed = (last: object) => sseBody([{ data: chunk({ role: "assistant", content: "Hel" }) }, { data: JSON.stringify(last) }, { data: "[DONE]" }]);
    server.enqueue(
      // the error on the choice, as OpenRouter's stream choice type has it
      { status: 200, body: failed({ choices: [{ index: 0, delta: { content: "" }, finish_reason: "error", error: { code: 502, message: "Upstream provider disconnected" } }] }) },
      { status: 200, body: failed({ choices: [{ index: 0, delta: {}, finish_reason: "error" }] }) },
    );
    const a = await collect((await provider("openrouter")).stream(request()));
    expect(a.done).toBeUndefined();
    expect(a.events.some((e) => e.type === "text_delta")).toBe(true);
    const errA = a.error as ProviderError;
    expect([errA.kind, errA.status, errA.message]).toEqual(["server", 502, "Upstream provider disconnected"]);
    const b = await collect((await provider("openrouter")).stream(request()));
    expect(b.done).toBeUndefined();
    expect((b.error as ProviderError).message).toMatch(/finish_reason "error"/);
    expect(server.requests).toHaveLength(2);
  });

  it("an error chunk before any output sends the request again; after output it does not", async () => {
    const early = sseBody([{ data: chunk({ role: "assistant", content: "" }) }, { data: '{"error":{"message":"Provider returned error","code":502}}' }]);
    server.enqueue({ status: 200, body: early }, { status: 200, body: fixture("openai-chat/text.sse") });
    const p = new ChatCompletionsProvider({ name: "openrouter", base_url: server.url, api_key: "k" }, undefined, { sleep: async () => {} });
    const out = await collect(p.stream(request()));
    expect(out.error).toBeUndefined();
    expect(server.requests).toHaveLength(2);
    expect(out.events[0]).toMatchObject({ type: "notice", text: expect.stringMatching(/failed before any output \(server: Provider returned error\)/) });
  });

  it("a stream without [DONE] is truncated", async () => {
    const body = fixture("openai-chat/text.sse").replace("data: [DONE]", ": no done");
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done).toBeUndefined();
    expect((out.error as ProviderError).kind).toBe("truncated");
  });

  it("[DONE] without any finish_reason is truncated, the text shown kept", async () => {
    // the recording minus its finish chunk: what a server that cut the answer upstream sends
    const body = fixture("openai-chat/text.sse").replace(/data: \{[^\n]*"finish_reason":"stop"[^\n]*\n\n/, "");
    expect(body).not.toContain('"finish_reason":"stop"');
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done).toBeUndefined();
    expect(out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toMatch(/^I'm unable to provide real-time weather updates\./);
    const err = out.error as ProviderError;
    expect([err.kind, err.retryable]).toEqual(["truncated", false]);
    expect(err.message).toMatch(/without a finish_reason/);
  });

  it("[DONE] without any finish_reason before any output is not sent again (the server ended it)", async () => {
    server.enqueue({ status: 200, body: sseBody([{ data: chunk({ role: "assistant", content: "" }) }, { data: "[DONE]" }]) }, { status: 200, body: fixture("openai-chat/text.sse") });
    const out = await collect((await provider("lmstudio", { api_key: undefined })).stream(request()));
    expect((out.error as ProviderError).kind).toBe("truncated");
    expect(server.requests).toHaveLength(1);
  });

  it("surfaces a connection cut after output, without retrying", async () => {
    const body = fixture("openai-chat/text.sse");
    server.enqueue({ status: 200, body, cutAfter: Math.floor(body.length / 2) }, { status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
    expect((out.error as ProviderError).kind).toBe("network");
    expect(server.requests).toHaveLength(1);
  });

  it("retries a 429 with Retry-After, then streams", async () => {
    server.enqueue(
      { status: 429, headers: { "retry-after": "2", "content-type": "application/json" }, body: '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}' },
      { status: 200, body: fixture("openai-chat/text.sse") },
    );
    const waits: number[] = [];
    const p = new ChatCompletionsProvider({ name: "openai-compatible", base_url: server.url, api_key: "k" }, undefined, { sleep: async (ms) => void waits.push(ms) });
    const out = await collect(p.stream(request()));
    expect(out.error).toBeUndefined();
    expect(waits).toEqual([2000]);
    expect(server.requests).toHaveLength(2);
  });

  it("does not retry insufficient_quota", async () => {
    server.enqueue({ status: 429, body: '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}' });
    const out = await collect((await provider()).stream(request()));
    expect((out.error as ProviderError).kind).toBe("quota");
    expect(server.requests).toHaveLength(1);
  });
});

describe("tool-call text salvage", () => {
  const markup = '<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>';
  const answer = `Let me look.\n${markup}`;
  const tools = [{ name: "read", description: "Read", input_schema: { type: "object" } }];
  const streamOf = (text: string, size: number) => {
    const pieces = text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g"))!;
    return sseBody([
      ...pieces.map((p) => ({ data: chunk({ content: p }) })),
      { data: JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) },
      { data: "[DONE]" },
    ]);
  };

  for (const size of [1, 3, 7, 1000]) {
    it(`recovers a delimited call naming an offered tool, markup never shown (deltas of ${size})`, async () => {
      server.enqueue({ status: 200, body: streamOf(answer, size) });
      const out = await collect((await provider("lmstudio", { api_key: undefined })).stream(request({ tools })));
      const shown = out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("");
      expect(shown).toBe("Let me look.\n");
      expect(shown).not.toContain("<");
      expect(out.events.filter((e) => e.type === "notice")).toHaveLength(1);
      expect((out.events.find((e) => e.type === "notice") as any).text).toMatch(/--jinja/);
      const blocks = out.done!.message.blocks;
      expect(blocks[0]).toEqual({ type: "text", text: "Let me look.\n" });
      expect(blocks[1]).toMatchObject({ type: "tool_use", name: "read", input: { path: "a.txt" } });
      expect(out.done!.stop_reason).toBe("tool_use");
    });
  }

  it("leaves markup naming a tool that was not offered, or unclosed markup, as text", async () => {
    const other = markup.replace('"read"', '"rm_rf"');
    server.enqueue({ status: 200, body: streamOf(other, 4) }, { status: 200, body: streamOf("see <tool_call>{", 2) });
    const a = await collect((await provider()).stream(request({ tools })));
    expect(a.done!.message.blocks).toEqual([{ type: "text", text: other }]);
    expect(a.done!.stop_reason).toBe("end_turn");
    const b = await collect((await provider()).stream(request({ tools })));
    expect(b.done!.message.blocks).toEqual([{ type: "text", text: "see <tool_call>{" }]);
  });

  it("recovers nothing when no tools were offered", async () => {
    server.enqueue({ status: 200, body: streamOf(answer, 5) });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.message.blocks).toEqual([{ type: "text", text: answer }]);
  });
});

describe("request body", () => {
  async function send(req: ModelRequest, name = "openai-compatible", over: Partial<ProviderConfig> = {}): Promise<any> {
    server.enqueue({ status: 200, body: fixture("openai-chat/text.sse") });
    const out = await collect((await provider(name, over)).stream(req));
    expect(out.error).toBeUndefined();
    return server.requests.at(-1)!.json();
  }

  it("posts to {base}/chat/completions with a bearer key, system message first and include_usage", async () => {
    const body = await send(request({ max_tokens: 1000 }));
    const req = server.requests[0]!;
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-test");
    expect(body.messages[0]).toEqual({ role: "system", content: "You are terse." });
    expect(body.messages[1]).toEqual({ role: "user", content: "hi" });
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.max_tokens).toBe(1000);
    expect(body.max_completion_tokens).toBeUndefined();
  });

  it("sends an image cut short in the session (read before images were checked) as a note, the whole one as an image", async () => {
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "compare" }, { type: "image", media_type: "image/png", data: PNG.subarray(0, 700).toString("base64") }, { type: "image", media_type: "image/png", data: PNG64 }] },
    ];
    const body = await send(request({ messages }));
    expect(body.messages[1].content).toEqual([
      { type: "text", text: "compare" },
      { type: "text", text: "[image omitted: truncated PNG (the IDAT chunk runs past the end of the file)]" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG64}` } },
    ]);
  });

  it("sends tools as functions and splits tool results into role tool messages", async () => {
    const schema = { type: "object", properties: { path: { type: "string" } } };
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "read both" }] },
      {
        role: "assistant",
        model: "gpt-4o",
        blocks: [
          { type: "thinking", text: "hmm", provider: "openai-compatible" },
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "c1", name: "read", input: { path: "a" } },
          { type: "tool_use", id: "c2", name: "shot", input: {} },
        ],
      },
      {
        role: "user",
        blocks: [
          { type: "tool_result", id: "c1", content: "A", is_error: true },
          { type: "tool_result", id: "c2", content: "image attached", images: [{ media_type: "image/png", data: PNG64 }] },
          { type: "text", text: "<system-note>n</system-note>" },
        ],
      },
    ];
    const body = await send(request({ messages, tools: [{ name: "read", description: "Read", input_schema: schema }] }));
    expect(body.tools).toEqual([{ type: "function", function: { name: "read", description: "Read", parameters: schema } }]);
    expect(body.messages.slice(1)).toEqual([
      { role: "user", content: "read both" },
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
          { id: "c2", type: "function", function: { name: "shot", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "A" },
      { role: "tool", tool_call_id: "c2", content: "image attached" },
      {
        role: "user",
        content: [
          { type: "text", text: '<tool-images tool_call_id="c2">The tool call c2 returned these images.</tool-images>' },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG64}` } },
          { type: "text", text: "<system-note>n</system-note>" },
        ],
      },
    ]);
  });

  it("sends raw_input verbatim as the arguments of a malformed call", async () => {
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "x" }] },
      { role: "assistant", blocks: [{ type: "tool_use", id: "c", name: "w", input: {}, raw_input: '{"a": ' }] },
      { role: "user", blocks: [{ type: "tool_result", id: "c", content: "INVALID_JSON", is_error: true }] },
    ];
    const body = await send(request({ messages }));
    expect(body.messages[2].tool_calls[0].function.arguments).toBe('{"a": ');
    expect(body.messages[2].content).toBeNull();
  });

  it("maps effort per preset: reasoning_effort, OpenRouter's reasoning object, or nothing", async () => {
    expect((await send(request({ effort: "xhigh" }))).reasoning_effort).toBe("high");
    expect((await send(request({ effort: "low" }), "openrouter")).reasoning).toEqual({ effort: "low" });
    const groq = await send(request({ effort: "high" }), "groq");
    expect([groq.reasoning_effort, groq.reasoning]).toEqual([undefined, undefined]);
  });

  it("deepseek gets its own reasoning back as reasoning_content (thinking mode requires it after tool calls)", async () => {
    // a thinking-mode answer that calls a tool, decoded by the deepseek preset
    server.enqueue({ status: 200, body: fixture("openai-chat/reasoning-content-tool-call-llamacpp.sse") });
    const first = await collect((await provider("deepseek")).stream(request({ model: "deepseek-reasoner" })));
    const answer = first.done!.message;
    const reasoning = "We need to call function 'weather' with location \"Florence, Italy\".";
    const call = answer.blocks.find((b) => b.type === "tool_use") as Extract<Block, { type: "tool_use" }>;
    const foreign: Message = { role: "assistant", model: "claude-sonnet-5", blocks: [{ type: "thinking", text: "other model", signature: "s", provider: "anthropic" }, { type: "text", text: "Hi." }] };
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "weather?" }] },
      foreign,
      { role: "user", blocks: [{ type: "text", text: "in Florence" }] },
      answer,
      { role: "user", blocks: [{ type: "tool_result", id: call.id, content: "sunny" }] },
    ];
    const body = await send(request({ model: "deepseek-reasoner", messages }), "deepseek");
    const assistants = body.messages.filter((m: any) => m.role === "assistant");
    expect(assistants[1]).toEqual({
      role: "assistant",
      content: null,
      reasoning_content: reasoning,
      tool_calls: [{ id: call.id, type: "function", function: { name: "weather", arguments: '{"location":"Florence, Italy"}' } }],
    });
    // another model's thinking is never sent, and other presets send none
    expect(assistants[0]).toEqual({ role: "assistant", content: "Hi." });
    const groq = await send(request({ model: "deepseek-reasoner", messages }), "groq");
    expect(groq.messages.some((m: any) => "reasoning_content" in m)).toBe(false);
  });

  it("mistral gets no stream_options", async () => {
    expect((await send(request(), "mistral")).stream_options).toBeUndefined();
  });

  it("mistral gets tool-call ids of 9 alphanumerics, the same ones every request", async () => {
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        blocks: [
          { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "read", input: { path: "a" } },
          { type: "tool_use", id: "D681PevKs", name: "read", input: { path: "b" } },
        ],
      },
      {
        role: "user",
        blocks: [
          { type: "tool_result", id: "toolu_01A09q90qw90lq917835lq9", content: "A", images: [{ media_type: "image/png", data: PNG64 }] },
          { type: "tool_result", id: "D681PevKs", content: "B" },
        ],
      },
      { role: "assistant", blocks: [{ type: "tool_use", id: "call_larik_m1x2_0", name: "read", input: {} }] },
      { role: "user", blocks: [{ type: "tool_result", id: "call_larik_m1x2_0", content: "C" }] },
    ];
    const first = await send(request({ messages }), "mistral");
    const calls = [...first.messages[2].tool_calls, ...first.messages[6].tool_calls].map((c: any) => c.id);
    const results = first.messages.filter((m: any) => m.role === "tool").map((m: any) => m.tool_call_id);
    for (const id of calls) expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
    // pinned: the mapping is sha256-based, the same in every process and every release
    expect(calls).toEqual(["tBziUm3pE", "D681PevKs", "mKwHFHCou"]);
    expect(results).toEqual(calls);
    expect(first.messages[5].content[0].text).toBe(`<tool-images tool_call_id="${calls[0]}">The tool call ${calls[0]} returned these images.</tool-images>`);
    // the next request repeats the conversation byte for byte (the prompt prefix stays cached)
    const again = await send(request({ messages: [...messages, { role: "assistant", blocks: [{ type: "text", text: "done" }] }] }), "mistral");
    expect(JSON.stringify(again.messages.slice(0, first.messages.length))).toBe(JSON.stringify(first.messages));
    // a custom provider pointing at Mistral's API is mapped too; other servers get the ids as they are
    const custom = buildChatBody(request({ messages }), { provider: "la-plateforme", preset: GENERIC_PRESET, baseUrl: "https://api.mistral.ai/v1" });
    expect((custom.messages as any[])[2].tool_calls.map((c: any) => c.id)).toEqual(calls.slice(0, 2));
    const plain = await send(request({ messages }), "groq");
    expect(plain.messages[2].tool_calls.map((c: any) => c.id)).toEqual(["toolu_01A09q90qw90lq917835lq9", "D681PevKs"]);
  });

  it("alnum9Ids keeps two ids apart even when their hashes meet", () => {
    const ids = alnum9Ids();
    const a = ids("toolu_x");
    expect(ids("toolu_x")).toBe(a);
    // a native id equal to an earlier mapped one must not take its place
    expect(ids(a)).not.toBe(a);
    expect(ids(a)).toMatch(/^[A-Za-z0-9]{9}$/);
  });
});

describe("presets and configuration", () => {
  function registry(): Registry<ProviderFactory> {
    const reg = new Registry<ProviderFactory>("providers");
    const ctx = { providers: { register: (f: ProviderFactory) => reg.register(f, "openai-compatible") } };
    void chatPlugin.setup(ctx as never);
    return reg;
  }

  it("registers every preset of §10 with type openai-compatible", () => {
    const reg = registry();
    expect(reg.list().map((f) => f.name)).toEqual(["openai-compatible", "openrouter", "groq", "deepseek", "xai", "mistral", "together", "lmstudio", "nvidia-nim"]);
    expect(reg.list().every((f) => f.type === "openai-compatible")).toBe(true);
    expect(reg.get("lmstudio")).toMatchObject({ keyEnv: [], defaultBaseUrl: "http://localhost:1234/v1", stallTimeout: 900 });
    expect(reg.get("nvidia-nim")).toMatchObject({ keyEnv: ["NVIDIA_API_KEY"], defaultBaseUrl: "https://integrate.api.nvidia.com/v1" });
    expect(reg.get("openrouter")).toMatchObject({ keyEnv: ["OPENROUTER_API_KEY"], defaultBaseUrl: "https://openrouter.ai/api/v1" });
    expect(CHAT_PRESETS).toHaveLength(9);
  });

  it("a missing key names the preset's variable", () => {
    expect(() => resolveModel("openrouter/anthropic/claude-sonnet-5", registry(), {}, {})).toThrow(ConfigError);
    expect(() => resolveModel("openrouter/anthropic/claude-sonnet-5", registry(), {}, {})).toThrow(/OPENROUTER_API_KEY/);
    expect(() => resolveModel("openai-compatible/gpt-4o", registry(), {}, {})).toThrow(/OPENAI_API_KEY/);
  });

  it("lmstudio needs no key; OPENAI_BASE_URL moves the generic endpoint", () => {
    const lm = resolveModel("lmstudio/qwen3-8b", registry(), {}, {});
    expect([lm.config.api_key, lm.config.base_url, lm.config.stall_timeout]).toEqual([undefined, "http://localhost:1234/v1", 900]);
    const gen = resolveModel("openai-compatible/gpt-4o", registry(), {}, { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(gen.config.base_url).toBe("http://127.0.0.1:9/v1");
  });

  it("a custom providers.<name> of type openai-compatible streams under its own name", async () => {
    const settings = { providers: { "my-vllm": { type: "openai-compatible", base_url: `${server.url}/v1`, api_key_env: "MY_VLLM_KEY" } } };
    const r = resolveModel("my-vllm/qwen/qwen3-coder", registry(), settings, { MY_VLLM_KEY: "sk-vllm" });
    expect([r.provider, r.model, r.factory.name]).toEqual(["my-vllm", "qwen/qwen3-coder", "openai-compatible"]);
    server.enqueue({ status: 200, body: fixture("openai-chat/reasoning-content-tool-call-llamacpp.sse") });
    const p = await r.factory.create(r.config);
    const out = await collect(p.stream(request({ model: r.model })));
    expect(p.name).toBe("my-vllm");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-vllm");
    expect(server.requests[0]!.json().model).toBe("qwen/qwen3-coder");
    expect(out.done!.message.blocks[0]).toMatchObject({ type: "thinking", provider: "my-vllm" });
  });

  it("a 404 names the URL: a base URL without /v1 is the usual cause", async () => {
    server.enqueue(
      { status: 404, headers: { "content-type": "text/plain" }, body: "404 page not found" },
      { status: 404, headers: { "content-type": "application/json" }, body: '{"error":{"message":"The model `gpt-nope` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}' },
    );
    const bare = await factory("openai-compatible").create({ name: "openai-compatible", base_url: server.url, api_key: "k", api_key_env: "OPENAI_API_KEY" });
    const err = (await collect(bare.stream(request()))).error as ProviderError;
    expect([err.kind, err.status, err.retryable]).toEqual(["not_found", 404, false]);
    // OpenAI's SDK appends no /v1 either: the message says the base URL needs it
    expect(err.message).toBe(
      `404 page not found (${server.url}/chat/completions: /chat/completions is appended to the base URL as it is (as OpenAI's SDK does), so it must end in the API's version path, usually /v1 (check providers.openai-compatible.base_url))`,
    );
    const model = (await collect((await provider()).stream(request({ model: "gpt-nope" })))).error as ProviderError;
    // one that names the model is about the model, not the URL: where to pick another
    expect(model.message).toBe('model "gpt-nope" not found (The model `gpt-nope` does not exist or you do not have access to it.): pick another with --model openai-compatible/<model> or the model setting');
    // with a version path already, only where the path comes from and what to check
    server.enqueue({ status: 404, headers: { "content-type": "application/json" }, body: '{"detail":"Not Found"}' });
    const versioned = (await collect((await provider("openai-compatible", { base_url_env: ["OPENAI_BASE_URL"] })).stream(request()))).error as ProviderError;
    expect(versioned.message).toBe(`Not Found (${server.url}/v1/chat/completions: /chat/completions is appended to the base URL (as OpenAI's SDK does): check providers.openai-compatible.base_url or OPENAI_BASE_URL)`);
    expect(server.requests).toHaveLength(3);
  });

  it("a 404 from a base URL whose version path has a suffix (Gemini's /v1beta/openai) does not ask for /v1", async () => {
    server.enqueue({ status: 404, headers: { "content-type": "application/json" }, body: '{"detail":"Not Found"}' });
    const beta = await factory("openai-compatible").create({ name: "openai-compatible", base_url: `${server.url}/v1beta/openai`, api_key: "k", api_key_env: "OPENAI_API_KEY" });
    const err = (await collect(beta.stream(request()))).error as ProviderError;
    expect(err.message).toBe(`Not Found (${server.url}/v1beta/openai/chat/completions: /chat/completions is appended to the base URL (as OpenAI's SDK does): check providers.openai-compatible.base_url)`);
  });

  it("a redirect (an http:// base URL of an https API) is not followed but named", async () => {
    server.enqueue({ status: 301, headers: { location: "https://api.deepseek.com/chat/completions", "content-type": "text/html" }, body: "<html><head><title>301 Moved Permanently</title></head></html>" });
    const err = (await collect((await provider("deepseek")).stream(request()))).error as ProviderError;
    expect(err.message).toBe(`the server redirects to https://api.deepseek.com/chat/completions from ${server.url}/v1/chat/completions: use the new address as the base URL`);
    expect([err.status, err.retryable]).toEqual([301, false]);
    expect(server.requests).toHaveLength(1);
  });

  it("an unreachable base URL is one line naming the URL", async () => {
    const p = new ChatCompletionsProvider({ name: "lmstudio", base_url: "http://127.0.0.1:1/v1" }, CHAT_PRESETS.find((x) => x.name === "lmstudio"), { sleep: async () => {} });
    const out = await collect(p.stream(request()));
    const err = out.error as ProviderError;
    expect(err.kind).toBe("network");
    expect(err.message).toBe("cannot reach http://127.0.0.1:1/v1/chat/completions: ECONNREFUSED (check providers.lmstudio.base_url; is the server running?)");
  });
});

describe("lmstudio model prober (GET {host}/api/v0/models/{model})", () => {
  function registry(): Registry<ProviderFactory> {
    const reg = new Registry<ProviderFactory>("providers");
    void chatPlugin.setup({ providers: { register: (f: ProviderFactory) => reg.register(f, "openai-compatible") } } as never);
    return reg;
  }
  const json = (status: number, body: unknown) => ({ status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const lmInfo = {
    id: "qwen/qwen3-8b",
    object: "model",
    type: "llm",
    state: "loaded",
    loaded_context_length: 16384,
    max_context_length: 40960,
    capabilities: ["tool_use"],
  };

  it("reads the loaded window and tool_use from the native API, one GET for both questions", async () => {
    server.enqueue(json(200, lmInfo));
    const p = await provider("lmstudio");
    const [window, tools] = await Promise.all([p.contextWindow!("qwen/qwen3-8b"), p.supportsTools!("qwen/qwen3-8b")]);
    expect([window, tools]).toEqual([16384, true]);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.method).toBe("GET");
    expect(server.requests[0]!.path).toBe("/api/v0/models/qwen%2Fqwen3-8b");
    expect(server.requests[0]!.body).toBe("");
  });

  it("falls back to max_context_length when not loaded; no tool_use means false", async () => {
    server.enqueue(json(200, { ...lmInfo, state: "not-loaded", loaded_context_length: undefined, capabilities: [] }));
    const p = await provider("lmstudio");
    const [window, tools] = await Promise.all([p.contextWindow!("m"), p.supportsTools!("m")]);
    expect([window, tools]).toEqual([40960, false]);
  });

  it("a 404 or an unreachable server reads as unknown, never an error", async () => {
    server.enqueue(json(404, { error: "Model not found" }), json(404, { error: "Model not found" }));
    const p = await provider("lmstudio");
    await expect(p.contextWindow!("nope")).resolves.toBeUndefined();
    await expect(p.supportsTools!("nope")).resolves.toBeUndefined();
    expect(server.requests.map((r) => r.path)).toEqual(["/api/v0/models/nope", "/api/v0/models/nope"]);
    const gone = await factory("lmstudio").create({ name: "lmstudio", base_url: "http://127.0.0.1:1/v1" });
    await expect(gone.contextWindow!("m")).resolves.toBeUndefined();
    await expect(gone.supportsTools!("m")).resolves.toBeUndefined();
  });

  it("a custom providers.<name> of type lmstudio probes its own host; other presets have no prober", async () => {
    const settings = { providers: { "gpu-box": { type: "lmstudio", base_url: `${server.url}/v1/` } } };
    const r = resolveModel("gpu-box/qwen3-8b", registry(), settings, {});
    server.enqueue(json(200, lmInfo));
    const p = await r.factory.create(r.config);
    expect(await p.contextWindow!("qwen3-8b")).toBe(16384);
    expect(server.requests[0]!.path).toBe("/api/v0/models/qwen3-8b");
    const plain = await provider("openai-compatible");
    expect(plain.contextWindow).toBeUndefined();
    expect(plain.supportsTools).toBeUndefined();
  });
});
