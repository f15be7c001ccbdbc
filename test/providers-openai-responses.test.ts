/**
 * The `openai` provider (Responses API) against real recordings replayed over loopback HTTP,
 * plus request body, multi-turn prefix, retry and failure-mode tests.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ConfigError,
  defineTool,
  definePlugin,
  Host,
  ProviderError,
  Registry,
  resolveModel,
  type AgentEvent,
  type Block,
  type Message,
  type ModelRequest,
  type Provider,
  type ProviderFactory,
} from "../kernel/index.js";
import openaiPlugin, { openaiFactory } from "../plugins/openai/index.js";
import { ResponsesProvider } from "../plugins/openai/provider.js";
import { isReasoningModel, reasoningEffort } from "../plugins/openai/catalog.js";
import { promptCacheKey } from "../plugins/openai/request.js";
import { collect, ReplayServer, sseBody } from "./fakes/replay-server.js";
import { fixture, manifestFor, NORMALIZED_STOP, replyFor, CHUNKINGS } from "./fakes/recordings.js";

const manifest = manifestFor("openai-responses");


let server: ReplayServer;
beforeEach(async () => {
  server = await ReplayServer.start();
});
afterEach(async () => {
  await server.close();
});

async function provider(name = "openai"): Promise<Provider> {
  return openaiFactory.create({ name, base_url: server.url, api_key: "sk-test", api_key_env: "OPENAI_API_KEY" });
}

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "gpt-4o-mini",
    system: "You are a helpful assistant",
    tools: [],
    messages: [{ role: "user", blocks: [{ type: "text", text: "hi" }] }],
    ...over,
  };
}

describe("recorded Responses streams decode to the manifest's outcome", () => {
  for (const entry of manifest) {
    for (const [label, chunking] of CHUNKINGS) {
      it(`${entry.file} — ${label}`, async () => {
        server.enqueue(replyFor(entry, chunking));
        const out = await collect((await provider()).stream(request({ model: "gpt-5" })));
        const ex = entry.expected;
        expect(server.requests).toHaveLength(1);
        if (ex.kind === "http_error") {
          const err = out.error as ProviderError;
          expect(err).toBeInstanceOf(ProviderError);
          expect([err.kind, err.status, err.retryable]).toEqual(["context_overflow", ex.status, false]);
          expect(err.message).toContain(ex.body.error.message);
          return;
        }
        if (ex.final_error) {
          // an in-stream failure: a classified error, nothing shown, not retried
          const err = out.error as ProviderError;
          expect(err).toBeInstanceOf(ProviderError);
          expect([err.kind, err.retryable]).toEqual(["quota", false]);
          expect(err.message).toContain(ex.stream_errors[0].message);
          expect(out.done).toBeUndefined();
          expect(out.events.filter((e) => e.type !== "notice")).toEqual([]);
          return;
        }
        expect(out.error).toBeUndefined();
        const done = out.done!;
        const blocks = done.message.blocks;
        const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
        expect(text).toBe(ex.text);
        expect(out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toBe(ex.text);
        const calls = blocks.filter((b) => b.type === "tool_use") as Extract<Block, { type: "tool_use" }>[];
        const exCalls = ex.output_items.filter((i: any) => i.type === "function_call");
        expect(calls.map((c) => ({ id: c.id, name: c.name, input: c.input }))).toEqual(exCalls.map((c: any) => ({ id: c.call_id, name: c.name, input: c.arguments })));
        expect(out.events.filter((e) => e.type === "tool_use_start").map((e) => (e as any).id)).toEqual(exCalls.map((c: any) => c.call_id));
        const reasoning = ex.output_items.filter((i: any) => i.type === "reasoning");
        const opaque = blocks.filter((b) => b.type === "opaque") as Extract<Block, { type: "opaque" }>[];
        expect(opaque).toHaveLength(reasoning.length);
        reasoning.forEach((r: any, i: number) => {
          const raw = opaque[i]!.raw as any;
          expect(raw.id).toBe(r.id);
          expect(raw.encrypted_content).toHaveLength(r.encrypted_content_chars);
          expect(opaque[i]!.provider).toBe("openai");
        });
        const thinking = blocks.filter((b) => b.type === "thinking").map((b) => (b as { text: string }).text);
        expect(thinking).toEqual(reasoning.map((r: any) => r.summary.join("\n\n")));
        expect(out.events.flatMap((e) => (e.type === "thinking_delta" ? [e.text] : [])).join("")).toBe(thinking.join(""));
        const cached = ex.usage.input_tokens_details.cached_tokens;
        expect(done.usage).toEqual({ input: ex.usage.input_tokens - cached, output: ex.usage.output_tokens, cache_read: cached, cache_write: 0 });
        expect(done.stop_reason).toBe(NORMALIZED_STOP[ex.normalized_stop]);
        expect(done.message.model).toBe("gpt-5");
      }, 120_000);
    }
  }
});

/** Piece sizes that cut `body` inside every multi-byte UTF-8 sequence and between every CR and LF. */
function awkwardSplits(body: string): number[] {
  const bytes = new TextEncoder().encode(body);
  const cuts = [0];
  for (let i = 1; i < bytes.length; i++) {
    if ((bytes[i]! & 0xc0) === 0x80 || (bytes[i] === 0x0a && bytes[i - 1] === 0x0d)) cuts.push(i);
  }
  cuts.push(bytes.length);
  return cuts.slice(1).map((c, i) => c - cuts[i]!);
}

describe("stream details", () => {
  const ev = (type: string, data: Record<string, unknown>) => ({ event: type, data: JSON.stringify({ type, ...data }) });

  it("a 404 naming no model says what is appended to the base URL and what to fix", async () => {
    server.enqueue({ status: 404, headers: { "content-type": "text/plain" }, body: "404 page not found" });
    server.enqueue({ status: 404, headers: { "content-type": "application/json" }, body: '{"detail":"Not Found"}' });
    const bare = (await collect((await provider()).stream(request()))).error as ProviderError;
    expect(bare.message).toBe(
      `404 page not found (${server.url}/responses: /responses is appended to the base URL as it is (as OpenAI's SDK does), so it must end in the API's version path, usually /v1 (check providers.openai.base_url))`,
    );
    const v1 = await openaiFactory.create({ name: "openai", base_url: `${server.url}/v1`, base_url_env: ["OPENAI_BASE_URL"], api_key: "k", api_key_env: "OPENAI_API_KEY" });
    const chatOnly = (await collect(v1.stream(request()))).error as ProviderError;
    expect(chatOnly.message).toBe(
      `Not Found (${server.url}/v1/responses: /responses is appended to the base URL (as OpenAI's SDK does); a server without the Responses API takes --model openai-compatible/<model> (check providers.openai.base_url or OPENAI_BASE_URL))`,
    );
  });

  it("decodes text cut inside every UTF-8 sequence, with CRLF framing cut between CR and LF", async () => {
    const text = ["Olá", " — 日本語", " 🎉 ×°’"];
    const body = sseBody([
      ev("response.output_item.added", { output_index: 0, item: { type: "message" } }),
      ...text.map((delta) => ev("response.output_text.delta", { output_index: 0, delta })),
      ev("response.completed", { response: { status: "completed", usage: { input_tokens: 1, output_tokens: 2 } } }),
    ]).replace(/\n/g, "\r\n");
    const sizes = awkwardSplits(body);
    expect(sizes.length).toBeGreaterThan(20);
    server.enqueue({ status: 200, body, chunking: sizes });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.message.blocks).toEqual([{ type: "text", text: text.join("") }]);
  });

  it("moves cached input tokens into cache_read", async () => {
    server.enqueue({
      status: 200,
      body: sseBody([
        ev("response.output_item.added", { output_index: 0, item: { type: "message", id: "m" } }),
        ev("response.output_text.delta", { output_index: 0, content_index: 0, delta: "ok" }),
        ev("response.completed", { response: { status: "completed", output: [], usage: { input_tokens: 1000, input_tokens_details: { cached_tokens: 900 }, output_tokens: 5 } } }),
      ]),
    });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.usage).toEqual({ input: 100, output: 5, cache_read: 900, cache_write: 0 });
  });

  it("maps response.incomplete: max_output_tokens → max_tokens, content_filter → refusal", async () => {
    for (const [reason, stop] of [["max_output_tokens", "max_tokens"], ["content_filter", "refusal"]]) {
      server.enqueue({
        status: 200,
        body: sseBody([
          ev("response.output_item.added", { output_index: 0, item: { type: "message" } }),
          ev("response.output_text.delta", { output_index: 0, delta: "partial" }),
          ev("response.incomplete", { response: { status: "incomplete", incomplete_details: { reason }, usage: { input_tokens: 3, output_tokens: 9 } } }),
        ]),
      });
      const out = await collect((await provider()).stream(request()));
      expect(out.done!.stop_reason).toBe(stop);
      expect(out.done!.message.blocks).toEqual([{ type: "text", text: "partial" }]);
    }
  });

  it("accepts a flat in-stream error event (the SDK's documented shape)", async () => {
    server.enqueue({
      status: 200,
      body: sseBody([ev("response.created", { response: { status: "in_progress" } }), ev("error", { code: "insufficient_quota", message: "You exceeded your current quota", param: null })]),
    });
    const out = await collect((await provider()).stream(request()));
    expect([(out.error as ProviderError).kind, (out.error as ProviderError).retryable]).toEqual(["quota", false]);
  });

  it("response.failed without an error event is a classified error", async () => {
    server.enqueue({
      status: 200,
      body: sseBody([ev("response.failed", { response: { status: "failed", error: { code: "rate_limit_exceeded", message: "Rate limit reached" }, usage: null } })]),
    });
    const out = await collect((await provider()).stream(request()));
    expect([(out.error as ProviderError).kind, (out.error as ProviderError).status]).toEqual(["rate_limit", 429]);
  });

  it("keeps raw_input for arguments that are not a JSON object", async () => {
    server.enqueue({
      status: 200,
      body: sseBody([
        ev("response.output_item.added", { output_index: 0, item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "write", arguments: "" } }),
        ev("response.function_call_arguments.delta", { output_index: 0, delta: '{"path": "a' }),
        ev("response.incomplete", { response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } } }),
      ]),
    });
    const out = await collect((await provider()).stream(request()));
    expect(out.done!.message.blocks).toEqual([{ type: "tool_use", id: "call_1", name: "write", input: {}, raw_input: '{"path": "a', provider: "openai" }]);
  });

  it("a stream without a terminal response event is truncated", async () => {
    const body = fixture("openai-responses/text.sse").replace(/event: response\.completed\ndata: [^\n]*\n\n/, "");
    expect(body).not.toContain("response.completed");
    server.enqueue({ status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.done).toBeUndefined();
    expect((out.error as ProviderError).kind).toBe("truncated");
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
  });
});

describe("request body", () => {
  async function send(req: ModelRequest, name = "openai"): Promise<any> {
    server.enqueue({ status: 200, body: fixture("openai-responses/text.sse") });
    const out = await collect((await provider(name)).stream(req));
    expect(out.error).toBeUndefined();
    return server.requests.at(-1)!.json();
  }

  it("posts to {base}/responses with a bearer key, stateless, system as instructions", async () => {
    const body = await send(request({ session_id: "sess-1" }));
    const req = server.requests[0]!;
    expect(req.path).toBe("/responses");
    expect(req.headers.authorization).toBe("Bearer sk-test");
    expect(body.store).toBe(false);
    expect(body.stream).toBe(true);
    expect(body.instructions).toBe("You are a helpful assistant");
    expect(body.input).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }]);
    expect(body.prompt_cache_key).toBe(promptCacheKey("sess-1"));
    expect(body.prompt_cache_key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(promptCacheKey("sess-2")).not.toBe(body.prompt_cache_key);
    // gpt-4o-mini does not reason: no reasoning field, no include
    expect(body.reasoning).toBeUndefined();
    expect(body.include).toBeUndefined();
  });

  it("sends flat function tools with strict: false", async () => {
    const schema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
    const body = await send(request({ tools: [{ name: "read", description: "Read a file", input_schema: schema }] }));
    expect(body.tools).toEqual([{ type: "function", name: "read", description: "Read a file", parameters: schema, strict: false }]);
  });

  it("reasoning models get include encrypted_content and reasoning.effort from --effort", async () => {
    const body = await send(request({ model: "gpt-5", effort: "high" }));
    expect(body.include).toEqual(["reasoning.encrypted_content"]);
    expect(body.reasoning).toEqual({ effort: "high", summary: "auto" });
    expect((await send(request({ model: "gpt-5" }))).reasoning).toEqual({ summary: "auto" });
    expect(reasoningEffort("gpt-5", "max")).toBe("high");
    expect(reasoningEffort("gpt-5.2", "xhigh")).toBe("xhigh");
    expect([isReasoningModel("o4-mini"), isReasoningModel("gpt-5-chat-latest"), isReasoningModel("gpt-4.1")]).toEqual([true, false, false]);
  });

  const priorTurn = (model: string, provider = "openai"): Message[] => [
    { role: "user", blocks: [{ type: "text", text: "weather?" }] },
    {
      role: "assistant",
      model,
      blocks: [
        { type: "thinking", text: "I should call weather", provider },
        { type: "opaque", provider, raw: { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "I should call weather" }], encrypted_content: "ENC==" } },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_1", name: "weather", input: { location: "Florence" }, provider },
        { type: "tool_use", id: "call_2", name: "shot", input: {}, provider },
      ],
    },
    {
      role: "user",
      blocks: [
        { type: "tool_result", id: "call_1", content: "sunny" },
        { type: "tool_result", id: "call_2", content: "screenshot", images: [{ media_type: "image/png", data: "iVBOR" }] },
        { type: "text", text: "<system-note>x</system-note>" },
      ],
    },
  ];

  it("replays reasoning items verbatim, in place, to the same provider and model; calls by call_id; outputs with images", async () => {
    const body = await send(request({ model: "gpt-5", messages: priorTurn("gpt-5") }));
    expect(body.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "weather?" }] },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "I should call weather" }], encrypted_content: "ENC==" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
      { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"location":"Florence"}' },
      { type: "function_call", call_id: "call_2", name: "shot", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "sunny" },
      {
        type: "function_call_output",
        call_id: "call_2",
        output: [
          { type: "input_text", text: "screenshot" },
          { type: "input_image", image_url: "data:image/png;base64,iVBOR" },
        ],
      },
      { type: "message", role: "user", content: [{ type: "input_text", text: "<system-note>x</system-note>" }] },
    ]);
  });

  it("drops reasoning produced by another model or another provider", async () => {
    const other = await send(request({ model: "gpt-5", messages: priorTurn("gpt-5-mini") }));
    expect(other.input.map((i: any) => i.type)).not.toContain("reasoning");
    const foreign = await send(request({ model: "gpt-5", messages: priorTurn("gpt-5", "my-proxy") }));
    expect(foreign.input.map((i: any) => i.type)).not.toContain("reasoning");
    expect(foreign.input.filter((i: any) => i.type === "function_call")).toHaveLength(2);
  });

  it("sends user images as input_image data URLs and raw_input verbatim", async () => {
    const body = await send(
      request({
        messages: [
          { role: "user", blocks: [{ type: "image", media_type: "image/jpeg", data: "/9j/" }, { type: "text", text: "what is it?" }] },
          { role: "assistant", model: "gpt-4o-mini", blocks: [{ type: "tool_use", id: "c", name: "w", input: {}, raw_input: '{"a": tru' }] },
          { role: "user", blocks: [{ type: "tool_result", id: "c", content: "bad json", is_error: true }] },
        ],
      }),
    );
    expect(body.input[0].content[0]).toEqual({ type: "input_image", image_url: "data:image/jpeg;base64,/9j/" });
    expect(body.input[1]).toEqual({ type: "function_call", call_id: "c", name: "w", arguments: '{"a": tru' });
  });
});

describe("multi-turn through the loop", () => {
  it("every request keeps the previous request's input as a byte-identical prefix, reasoning replayed", async () => {
    const host = await Host.create({
      plugins: [
        definePlugin({
          name: "weather-tool",
          setup(ctx) {
            ctx.tools.register(
              defineTool({ name: "weather", description: "Weather for a place.", input: z.object({ location: z.string() }), kind: "read", async run({ location }) {
                return { content: `sunny in ${location}` };
              } }),
            );
          },
        }),
      ],
      cwd: mkdtempSync(join(tmpdir(), "larik-openai-loop-")),
      settings: {},
    });
    server.enqueue(
      { status: 200, body: fixture("openai-responses/reasoning-summary-function-call.sse"), chunking: { seed: 3 } },
      { status: 200, body: fixture("openai-responses/text.sse") },
      { status: 200, body: fixture("openai-responses/text.sse") },
    );
    const agent = await host.openAgent({ provider: await provider(), model: "openai/gpt-5", mode: "yolo" });
    const events: AgentEvent[] = [];
    for await (const e of agent.run("What's the weather in Florence?")) events.push(e);
    for await (const e of agent.run("And tomorrow?")) events.push(e);
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(events.filter((e) => e.type === "tool_end").map((e) => (e as any).output)).toEqual(["sunny in Florence, Italy"]);
    const bodies = server.requests.map((r) => r.json());
    expect(bodies).toHaveLength(3);
    for (let i = 1; i < bodies.length; i++) {
      const prev = JSON.stringify(bodies[i - 1].input);
      expect(JSON.stringify(bodies[i].input).startsWith(prev.slice(0, -1) + ",")).toBe(true);
      expect(bodies[i].instructions).toBe(bodies[0].instructions);
      expect(bodies[i].tools).toEqual(bodies[0].tools);
      expect(bodies[i].prompt_cache_key).toBe(bodies[0].prompt_cache_key);
    }
    const second = bodies[1].input;
    const reasoning = second.find((i: any) => i.type === "reasoning");
    expect(reasoning.encrypted_content).toHaveLength(1572);
    expect(second.findIndex((i: any) => i.type === "reasoning")).toBeLessThan(second.findIndex((i: any) => i.type === "function_call"));
    expect(second.find((i: any) => i.type === "function_call_output")).toEqual({ type: "function_call_output", call_id: "call_zgUaIBRPTwxxOusyyKw5NVMH", output: "sunny in Florence, Italy" });
    await host.dispose();
  }, 60_000);
});

describe("failure modes", () => {
  it("retries a 429 with Retry-After, then streams the answer", async () => {
    server.enqueue(
      { status: 429, headers: { "retry-after": "2", "content-type": "application/json" }, body: '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}' },
      { status: 200, body: fixture("openai-responses/text.sse") },
    );
    const waits: number[] = [];
    const p = new ResponsesProvider({ name: "openai", base_url: server.url, api_key: "k" }, { sleep: async (ms) => void waits.push(ms) });
    const out = await collect(p.stream(request()));
    expect(out.error).toBeUndefined();
    expect(waits).toEqual([2000]);
    expect(server.requests).toHaveLength(2);
    expect(out.events[0]).toMatchObject({ type: "notice" });
  });

  it("does not retry an insufficient_quota 429", async () => {
    server.enqueue(
      { status: 429, headers: { "content-type": "application/json" }, body: '{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}' },
      { status: 200, body: fixture("openai-responses/text.sse") },
    );
    const p = new ResponsesProvider({ name: "openai", base_url: server.url, api_key: "k" }, { sleep: async () => {} });
    const out = await collect(p.stream(request()));
    expect([(out.error as ProviderError).kind, server.requests.length]).toEqual(["quota", 1]);
  });

  it("surfaces a connection cut after output, without retrying, partial text shown", async () => {
    const body = fixture("openai-responses/text.sse");
    server.enqueue({ status: 200, body, cutAfter: body.indexOf("response.output_text.done") }, { status: 200, body });
    const out = await collect((await provider()).stream(request()));
    expect(out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toBe('Hi in Portuguese is "Oi!"');
    expect(out.done).toBeUndefined();
    expect((out.error as ProviderError).kind).toBe("network");
    expect(server.requests).toHaveLength(1);
  });

  it("stalls after stall_timeout seconds of silence", async () => {
    const body = fixture("openai-responses/text.sse");
    server.enqueue({ status: 200, body: body.slice(0, body.indexOf("event: response.output_text.done")), hang: true });
    const p = await openaiFactory.create({ name: "openai", base_url: server.url, api_key: "k", stall_timeout: 0.3 });
    const out = await collect(p.stream(request()));
    expect((out.error as ProviderError).kind).toBe("stall");
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
  });
});

describe("configuration through resolveModel", () => {
  function registry(): Registry<ProviderFactory> {
    const reg = new Registry<ProviderFactory>("providers");
    void openaiPlugin.setup({ providers: { register: (f: ProviderFactory) => reg.register(f, "openai") } } as never);
    return reg;
  }

  it("a missing key names OPENAI_API_KEY; bare gpt ids resolve to openai with catalog data", () => {
    expect(() => resolveModel("openai/gpt-5", registry(), {}, {})).toThrow(ConfigError);
    expect(() => resolveModel("openai/gpt-5", registry(), {}, {})).toThrow(/OPENAI_API_KEY/);
    const r = resolveModel("gpt-5-mini", registry(), {}, { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url });
    expect([r.provider, r.model, r.config.base_url, r.catalog?.context_window]).toEqual(["openai", "gpt-5-mini", server.url, 400_000]);
  });

  it("a custom providers.<name> of type openai keeps its own name on blocks", async () => {
    const settings = { providers: { "corp-gpt": { type: "openai", base_url: server.url, api_key: "sk-corp" } } };
    const r = resolveModel("corp-gpt/gpt-5", registry(), settings, {});
    expect(r.factory).toBe(openaiFactory);
    server.enqueue({ status: 200, body: fixture("openai-responses/reasoning-summary-function-call.sse") });
    const p = await r.factory.create(r.config);
    const out = await collect(p.stream(request({ model: r.model })));
    expect(out.done!.message.blocks.find((b) => b.type === "opaque")).toMatchObject({ provider: "corp-gpt" });
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-corp");
  });
});

describe("a Chat Completions server behind OPENAI_BASE_URL", () => {
  it("says to use openai-compatible instead of failing on [DONE]", async () => {
    const { decodeResponsesStream } = await import("../plugins/openai/decode.js");
    async function* events() {
      yield { data: JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "hi" } }] }) };
      yield { data: "[DONE]" };
    }
    const run = async () => {
      for await (const _ of decodeResponsesStream(events(), { provider: "openai", model: "gpt-5.5" } as never)) void _;
    };
    await expect(run()).rejects.toThrow(/Chat Completions format.*--model openai-compatible\/<model>/);
  });
});
