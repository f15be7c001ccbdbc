/**
 * The `gemini` provider against real recordings replayed over loopback HTTP, plus request body,
 * schema conversion, multi-turn prefix, retry and failure-mode tests.
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
  type ProviderFactory,
} from "../kernel/index.js";
import geminiPlugin, { geminiFactory } from "../plugins/gemini/index.js";
import { GeminiProvider, streamUrl } from "../plugins/gemini/provider.js";
import { thinkingFields, thinkingStyle } from "../plugins/gemini/catalog.js";
import { toGeminiSchema } from "../plugins/gemini/schema.js";
import { collect, ReplayServer, sseBody, type Chunking } from "./fakes/replay-server.js";
import { fixture, manifestFor, NORMALIZED_STOP, replyFor } from "./fakes/recordings.js";

const manifest = manifestFor("gemini");

const ERROR_KIND: Record<string, string> = {
  "gemini/error-429-resource-exhausted.json": "rate_limit",
  "gemini/error-400-input-token-count-vertex.json": "context_overflow",
};

let server: ReplayServer;
beforeEach(async () => {
  server = await ReplayServer.start();
});
afterEach(async () => {
  await server.close();
});

/** A provider that never sleeps (a recorded 429 asks for 48 s). */
function provider(opts: { maxRetries?: number; waits?: number[]; name?: string; stall?: number } = {}): GeminiProvider {
  return new GeminiProvider(
    { name: opts.name ?? "gemini", base_url: server.url, api_key: "g-key", api_key_env: "GEMINI_API_KEY", stall_timeout: opts.stall },
    { maxRetries: opts.maxRetries, sleep: async (ms) => void opts.waits?.push(ms) },
  );
}

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "gemini-2.5-flash",
    system: "You are a helpful assistant",
    tools: [],
    messages: [{ role: "user", blocks: [{ type: "text", text: "hi" }] }],
    ...over,
  };
}

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

const CHUNKINGS: [string, (body: string) => Chunking][] = [
  ["whole", () => "whole"],
  ["1-byte writes", () => "bytes"],
  ["random splits (seed 7)", () => ({ seed: 7, max: 48 })],
  ["random splits (seed 99)", () => ({ seed: 99, max: 9 })],
  ["cut inside every UTF-8 sequence and between every CR and LF", awkwardSplits],
];

describe("recorded Gemini streams decode to the manifest's outcome", () => {
  for (const entry of manifest) {
    for (const [label, chunking] of CHUNKINGS) {
      it(`${entry.file} — ${label}`, async () => {
        server.enqueue(replyFor(entry, chunking(fixture(entry.file))));
        const requested = entry.file.includes("gemini3") ? "gemini-3-pro-preview" : "gemini-2.5-flash";
        const out = await collect(provider({ maxRetries: 0 }).stream(request({ model: requested })));
        const ex = entry.expected;
        expect(server.requests).toHaveLength(1);
        if (ex.kind === "http_error") {
          const err = out.error as ProviderError;
          expect(err).toBeInstanceOf(ProviderError);
          expect([err.kind, err.status]).toEqual([ERROR_KIND[entry.file], ex.status]);
          expect(err.message).toContain(ex.body.error.message.split("\n")[0].trim());
          if (err.kind === "rate_limit") expect([err.retryable, err.retry_after_ms]).toEqual([true, 48_000]);
          else expect(err.retryable).toBe(false);
          return;
        }
        expect(out.error).toBeUndefined();
        const done = out.done!;
        const blocks = done.message.blocks;
        const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
        expect(text).toBe(ex.text);
        expect(out.events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("")).toBe(ex.text);
        const thinking = blocks.filter((b) => b.type === "thinking") as Extract<Block, { type: "thinking" }>[];
        expect(thinking.map((b) => b.text).join("")).toBe(ex.thought_summary);
        expect(out.events.flatMap((e) => (e.type === "thinking_delta" ? [e.text] : [])).join("")).toBe(ex.thought_summary);
        for (const t of thinking) expect(t.display_only).toBe(true);
        const calls = blocks.filter((b) => b.type === "tool_use") as Extract<Block, { type: "tool_use" }>[];
        expect(calls.map((c) => ({ name: c.name, input: c.input }))).toEqual(ex.function_calls.map((c: any) => ({ name: c.name, input: c.args })));
        ex.function_calls.forEach((c: any, i: number) => {
          if (c.id) expect(calls[i]!.id).toBe(c.id);
          else expect(calls[i]!.id).toMatch(/^larik_gm_/);
          expect(calls[i]!.signature !== undefined).toBe(c.thoughtSignature_attached);
        });
        expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);
        expect(out.events.filter((e) => e.type === "tool_use_start").map((e) => (e as any).id)).toEqual(calls.map((c) => c.id));
        const sigs = blocks.flatMap((b) => ("signature" in b && b.signature ? [b.signature.length] : []));
        expect(sigs).toEqual(ex.thought_signatures.map((s: any) => s.len));
        const u = ex["usageMetadata(last chunk)"];
        expect(done.usage).toEqual({ input: u.promptTokenCount, output: u.candidatesTokenCount + (u.thoughtsTokenCount ?? 0), cache_read: 0, cache_write: 0 });
        expect(done.stop_reason).toBe(NORMALIZED_STOP[ex.normalized_stop]);
        expect(done.message.model).toBe(requested);
      }, 120_000);
    }
  }
});

describe("stream details", () => {
  const chunk = (o: unknown) => ({ data: JSON.stringify(o) });

  it("takes usage from the last chunk only, cached tokens as cache_read", async () => {
    server.enqueue({
      status: 200,
      body: sseBody([
        chunk({ candidates: [{ content: { role: "model", parts: [{ text: "a" }] } }], usageMetadata: { promptTokenCount: 500, candidatesTokenCount: 1 } }),
        chunk({ candidates: [{ content: { role: "model", parts: [{ text: "b" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 400, cachedContentTokenCount: 300, candidatesTokenCount: 2, thoughtsTokenCount: 7 } }),
      ]),
    });
    const out = await collect(provider().stream(request()));
    expect(out.done!.usage).toEqual({ input: 100, output: 9, cache_read: 300, cache_write: 0 });
    expect(out.done!.message.blocks).toEqual([{ type: "text", text: "ab" }]);
  });

  it("maps finish reasons: MAX_TOKENS → max_tokens, SAFETY → refusal, MALFORMED_FUNCTION_CALL → error with a notice", async () => {
    for (const [reason, stop] of [["MAX_TOKENS", "max_tokens"], ["SAFETY", "refusal"], ["RECITATION", "refusal"], ["MALFORMED_FUNCTION_CALL", "error"]]) {
      server.enqueue({ status: 200, body: sseBody([chunk({ candidates: [{ content: { parts: [{ text: "x" }] }, finishReason: reason, finishMessage: "why" }] })]) });
      const out = await collect(provider().stream(request()));
      expect(out.done!.stop_reason).toBe(stop);
      if (stop === "error") expect(out.events.find((e) => e.type === "notice")).toMatchObject({ text: expect.stringContaining("MALFORMED_FUNCTION_CALL: why") });
    }
  });

  it("keeps signed text parts apart and joins unsigned ones", async () => {
    server.enqueue({
      status: 200,
      body: sseBody([
        chunk({ candidates: [{ content: { parts: [{ text: "Hel" }, { text: "lo" }] } }] }),
        chunk({ candidates: [{ content: { parts: [{ text: " there", thoughtSignature: "SIG1" }, { text: "!" }] } }] }),
        chunk({ candidates: [{ content: { parts: [{ text: "", thoughtSignature: "SIG2" }] }, finishReason: "STOP" }] }),
      ]),
    });
    const out = await collect(provider().stream(request({ model: "gemini-3-pro-preview" })));
    expect(out.done!.message.blocks).toEqual([
      { type: "text", text: "Hello" },
      { type: "text", text: " there", signature: "SIG1", provider: "gemini" },
      { type: "text", text: "!" },
      { type: "text", text: "", signature: "SIG2", provider: "gemini" },
    ]);
  });

  it("a blocked prompt finishes as a refusal", async () => {
    server.enqueue({ status: 200, body: sseBody([chunk({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 9 } })]) });
    const out = await collect(provider().stream(request()));
    expect(out.done!.stop_reason).toBe("refusal");
  });

  it("an error chunk inside the 200 stream is a classified error", async () => {
    server.enqueue({
      status: 200,
      body: sseBody([chunk({ candidates: [{ content: { parts: [{ text: "par" }] } }] }), chunk({ error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } })]),
    });
    const out = await collect(provider().stream(request()));
    expect([(out.error as ProviderError).kind, (out.error as ProviderError).status]).toEqual(["overloaded", 503]);
    expect(server.requests).toHaveLength(1);
  });

  it("a stream that ends without a finishReason is truncated", async () => {
    const body = fixture("gemini/gemini3-function-call-id-signature.sse");
    server.enqueue({ status: 200, body: body.slice(0, body.indexOf("data:", 10)) });
    const out = await collect(provider().stream(request()));
    expect(out.done).toBeUndefined();
    expect((out.error as ProviderError).kind).toBe("truncated");
  });
});

describe("request body", () => {
  async function send(req: ModelRequest, name = "gemini"): Promise<any> {
    server.enqueue({ status: 200, body: fixture("gemini/text.sse") });
    const out = await collect(provider({ name }).stream(req));
    expect(out.error).toBeUndefined();
    return server.requests.at(-1)!.json();
  }

  it("posts to /v1beta/models/{model}:streamGenerateContent?alt=sse with x-goog-api-key and systemInstruction", async () => {
    const body = await send(request());
    const req = server.requests[0]!;
    expect(req.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(req.headers["x-goog-api-key"]).toBe("g-key");
    expect(body.systemInstruction).toEqual({ parts: [{ text: "You are a helpful assistant" }] });
    expect(body.contents).toEqual([{ role: "user", parts: [{ text: "hi" }] }]);
    expect(body.generationConfig).toEqual({ thinkingConfig: { includeThoughts: true } });
    expect(streamUrl("https://proxy.example/v1beta/", "gemini-x")).toBe("https://proxy.example/v1beta/models/gemini-x:streamGenerateContent?alt=sse");
  });

  it("sends tools as functionDeclarations with schemas cut to Gemini's subset", async () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      additionalProperties: false,
      properties: {
        path: { type: "string", format: "uri", description: "file" },
        mode: { type: ["string", "null"], enum: ["r", "w"] },
        tags: { type: "array", items: { $ref: "#/$defs/tag" } },
        kind: { const: "x" },
      },
      required: ["path", "ghost"],
      $defs: { tag: { type: "object", additionalProperties: false, properties: { name: { type: "string" } } } },
    };
    const body = await send(request({ tools: [{ name: "read", description: "Read", input_schema: schema }, { name: "now", description: "Time", input_schema: { type: "object", properties: {} } }] }));
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: "read",
            description: "Read",
            parameters: {
              type: "object",
              properties: {
                path: { type: "string", description: "file" },
                mode: { type: "string", enum: ["r", "w"], nullable: true },
                tags: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
                kind: { enum: ["x"], type: "string" },
              },
              required: ["path"],
            },
          },
          { name: "now", description: "Time" },
        ],
      },
    ]);
    expect(toGeminiSchema({ type: "object", properties: { a: { anyOf: [{ type: "integer" }, { type: "null" }] } } })).toEqual({
      type: "object",
      properties: { a: { type: "integer", nullable: true } },
    });
  });

  const priorTurn = (model: string, provider = "gemini"): Message[] => [
    { role: "user", blocks: [{ type: "text", text: "add and multiply" }] },
    {
      role: "assistant",
      model,
      blocks: [
        { type: "thinking", text: "**Planning**", provider, display_only: true },
        { type: "text", text: "Sure.", signature: "TXT-SIG", provider },
        { type: "tool_use", id: "larik_gm_abc_0", name: "add", input: { a: 2, b: 3 }, signature: "CALL-SIG", provider },
        { type: "tool_use", id: "89nz05jy", name: "multiply", input: { a: 2, b: 3 }, provider },
      ],
    },
    {
      role: "user",
      blocks: [
        { type: "tool_result", id: "larik_gm_abc_0", content: "5" },
        { type: "tool_result", id: "89nz05jy", content: "boom", is_error: true, images: [{ media_type: "image/png", data: "iVBOR" }] },
        { type: "text", text: "note" },
      ],
    },
  ];

  it("replays a model turn part for part with signatures to the same model; never thought summaries", async () => {
    const body = await send(request({ model: "gemini-2.5-flash", messages: priorTurn("gemini-2.5-flash") }));
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "add and multiply" }] },
      {
        role: "model",
        parts: [
          { text: "Sure.", thoughtSignature: "TXT-SIG" },
          { functionCall: { name: "add", args: { a: 2, b: 3 } }, thoughtSignature: "CALL-SIG" },
          { functionCall: { name: "multiply", args: { a: 2, b: 3 }, id: "89nz05jy" } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "add", response: { output: "5" } } },
          { functionResponse: { name: "multiply", id: "89nz05jy", response: { error: "boom" } } },
          { inlineData: { mimeType: "image/png", data: "iVBOR" } },
          { text: "note" },
        ],
      },
    ]);
  });

  it("sends no signature to another model or provider", async () => {
    const other = await send(request({ model: "gemini-2.5-pro", messages: priorTurn("gemini-2.5-flash") }));
    expect(JSON.stringify(other.contents)).not.toContain("thoughtSignature");
    const foreign = await send(request({ model: "gemini-2.5-flash", messages: priorTurn("gemini-2.5-flash", "my-gemini") }));
    expect(JSON.stringify(foreign.contents)).not.toContain("thoughtSignature");
    // ids of calls made by another provider are not echoed either
    expect(foreign.contents[1].parts[2]).toEqual({ functionCall: { name: "multiply", args: { a: 2, b: 3 } } });
  });

  it("user images go as inlineData; --effort sets thinkingBudget (2.5) or thinkingLevel (3)", async () => {
    const body = await send(request({ effort: "high", max_tokens: 1000, messages: [{ role: "user", blocks: [{ type: "image", media_type: "image/jpeg", data: "/9j/" }, { type: "text", text: "what?" }] }] }));
    expect(body.contents[0].parts).toEqual([{ inlineData: { mimeType: "image/jpeg", data: "/9j/" } }, { text: "what?" }]);
    expect(body.generationConfig).toEqual({ maxOutputTokens: 1000, thinkingConfig: { includeThoughts: true, thinkingBudget: 16_384 } });
    const g3 = await send(request({ model: "gemini-3-pro-preview", effort: "low" }));
    expect(g3.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingLevel: "low" });
    const old = await send(request({ model: "gemini-2.0-flash", effort: "high" }));
    expect(old.generationConfig).toBeUndefined();
    expect([thinkingStyle("gemini-2.5-pro"), thinkingStyle("gemini-1.5-pro"), thinkingFields("gemini-2.5-flash", "max")]).toEqual(["budget", "none", { thinkingBudget: 24_576 }]);
  });
});

describe("multi-turn through the loop", () => {
  it("every request keeps the previous request's contents as a byte-identical prefix, signatures replayed", async () => {
    const host = await Host.create({
      plugins: [
        definePlugin({
          name: "math-tools",
          setup(ctx) {
            for (const name of ["add", "multiply"]) {
              ctx.tools.register(
                defineTool({ name, description: `${name} two numbers`, input: z.object({ a: z.number(), b: z.number() }), kind: "read", async run({ a, b }) {
                  return { content: String(name === "add" ? a + b : a * b) };
                } }),
              );
            }
          },
        }),
      ],
      cwd: mkdtempSync(join(tmpdir(), "larik-gemini-loop-")),
      settings: {},
    });
    server.enqueue(
      { status: 200, body: fixture("gemini/parallel-function-calls.sse"), chunking: { seed: 5 } },
      { status: 200, body: fixture("gemini/text.sse") },
      { status: 200, body: fixture("gemini/text.sse") },
    );
    const agent = await host.openAgent({ provider: provider(), model: "gemini/gemini-2.5-flash", mode: "yolo" });
    const events: AgentEvent[] = [];
    for await (const e of agent.run("Add and multiply 2 and 3")) events.push(e);
    for await (const e of agent.run("Count")) events.push(e);
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(events.filter((e) => e.type === "tool_end").map((e) => (e as any).output)).toEqual(["5", "6"]);
    const bodies = server.requests.map((r) => r.json());
    expect(bodies).toHaveLength(3);
    for (let i = 1; i < bodies.length; i++) {
      const prev = JSON.stringify(bodies[i - 1].contents);
      expect(JSON.stringify(bodies[i].contents).startsWith(prev.slice(0, -1) + ",")).toBe(true);
      expect(bodies[i].systemInstruction).toEqual(bodies[0].systemInstruction);
      expect(bodies[i].tools).toEqual(bodies[0].tools);
    }
    const model = bodies[1].contents[1];
    expect(model.role).toBe("model");
    expect(model.parts[0].thoughtSignature).toHaveLength(304);
    expect(model.parts[1].thoughtSignature).toBeUndefined();
    expect(bodies[1].contents[2].parts.map((p: any) => p.functionResponse)).toEqual([
      { name: "add", response: { output: "5" } },
      { name: "multiply", response: { output: "6" } },
    ]);
    await host.dispose();
  }, 60_000);
});

describe("failure modes", () => {
  it("retries a 429 RESOURCE_EXHAUSTED after its RetryInfo delay, then streams", async () => {
    server.enqueue(
      { status: 429, headers: { "content-type": "application/json" }, body: fixture("gemini/error-429-resource-exhausted.json") },
      { status: 200, body: fixture("gemini/text.sse") },
    );
    const waits: number[] = [];
    const out = await collect(provider({ waits }).stream(request()));
    expect(out.error).toBeUndefined();
    expect(waits).toEqual([48_000]);
    expect(server.requests).toHaveLength(2);
    expect(out.events[0]).toMatchObject({ type: "notice", text: expect.stringContaining("429") });
  });

  it("a bad key (400 API_KEY_INVALID) is an auth error naming GEMINI_API_KEY", async () => {
    server.enqueue({
      status: 400,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT", details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID" }] } }),
    });
    const out = await collect(provider().stream(request()));
    const err = out.error as ProviderError;
    expect([err.kind, err.retryable]).toEqual(["auth", false]);
    expect(err.message).toContain("GEMINI_API_KEY");
  });

  it("surfaces a connection cut after output, without retrying, partial text shown", async () => {
    const body = fixture("gemini/text.sse");
    const second = body.indexOf("data:", 10);
    server.enqueue({ status: 200, body, cutAfter: second + 20 }, { status: 200, body });
    const out = await collect(provider().stream(request()));
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
    expect(out.done).toBeUndefined();
    expect((out.error as ProviderError).kind).toBe("network");
    expect(server.requests).toHaveLength(1);
  });

  it("stalls after stall_timeout seconds of silence", async () => {
    const body = fixture("gemini/text.sse");
    server.enqueue({ status: 200, body: body.slice(0, body.indexOf("data:", 10)), hang: true });
    const out = await collect(provider({ stall: 0.3 }).stream(request()));
    expect((out.error as ProviderError).kind).toBe("stall");
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
  });
});

describe("configuration through resolveModel", () => {
  function registry(): Registry<ProviderFactory> {
    const reg = new Registry<ProviderFactory>("providers");
    void geminiPlugin.setup({ providers: { register: (f: ProviderFactory) => reg.register(f, "gemini") } } as never);
    return reg;
  }

  it("a missing key names GEMINI_API_KEY; GOOGLE_GEMINI_BASE_URL moves the endpoint", async () => {
    expect(() => resolveModel("gemini/gemini-2.5-flash", registry(), {}, {})).toThrow(ConfigError);
    expect(() => resolveModel("gemini-2.5-flash", registry(), {}, {})).toThrow(/GEMINI_API_KEY/);
    const r = resolveModel("gemini-2.5-pro", registry(), {}, { GEMINI_API_KEY: "k-env", GOOGLE_GEMINI_BASE_URL: server.url });
    expect([r.provider, r.config.base_url, r.catalog?.context_window]).toEqual(["gemini", server.url, 1_048_576]);
    server.enqueue({ status: 200, body: fixture("gemini/text.sse") });
    const out = await collect((await r.factory.create(r.config)).stream(request({ model: r.model })));
    expect(out.error).toBeUndefined();
    expect(server.requests[0]!.headers["x-goog-api-key"]).toBe("k-env");
    expect(geminiFactory.models?.length).toBeGreaterThan(3);
  });
});
