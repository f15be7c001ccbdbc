/**
 * Fallbacks with cooldowns (kernel/fallback.ts): real adapters against loopback replay servers
 * for the switching rules, a fake clock for cooldowns, and the config path through openModel.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ConfigError,
  Host,
  ProviderError,
  Registry,
  type AgentEvent,
  type Message,
  type ModelRequest,
  type Provider,
  type ProviderFactory,
  type StreamEvent,
} from "../kernel/index.js";
import { cooldownFor, fallbackCooldowns, fallbackSpecs, LONG_COOLDOWN_MS, openModel, SHORT_COOLDOWN_MS, withFallbacks } from "../kernel/fallback.js";
import { ResponsesProvider } from "../plugins/openai/provider.js";
import { GeminiProvider } from "../plugins/gemini/provider.js";
import { openaiFactory } from "../plugins/openai/index.js";
import { geminiFactory } from "../plugins/gemini/index.js";
import { ollamaFactory } from "../plugins/ollama/index.js";
import { collect, ReplayServer } from "./fakes/replay-server.js";
import { fixture } from "./fakes/recordings.js";

const json = (status: number, body: unknown) => ({ status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

let a: ReplayServer;
let b: ReplayServer;
let clock: number;
let cooldowns: Map<string, number>;
const now = () => clock;

beforeEach(async () => {
  a = await ReplayServer.start();
  b = await ReplayServer.start();
  clock = 1_000_000;
  cooldowns = new Map();
});
afterEach(async () => {
  await a.close();
  await b.close();
});

const noSleep = { maxRetries: 0, sleep: async () => {} };
const openai = (stall?: number) => new ResponsesProvider({ name: "openai", base_url: a.url, api_key: "k", stall_timeout: stall }, noSleep);
const gemini = () => new GeminiProvider({ name: "gemini", base_url: b.url, api_key: "k" }, noSleep);

function pair(opts: { stall?: number } = {}): Provider {
  return withFallbacks(
    [
      { spec: "openai/gpt-5", provider: openai(opts.stall) },
      { spec: "gemini/gemini-2.5-flash", provider: gemini(), max_output: 65_536 },
    ],
    { now, cooldowns },
  );
}

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return { model: "gpt-5", system: "sys", tools: [], messages: [{ role: "user", blocks: [{ type: "text", text: "hi" }] }], ...over };
}

describe("switching", () => {
  it("a 429 before any output switches to the next model, with a notice; the answer is stamped with it", async () => {
    a.enqueue(json(429, { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }));
    b.enqueue({ status: 200, body: fixture("gemini/text.sse") });
    const out = await collect(pair().stream(request()));
    expect(out.error).toBeUndefined();
    const notice = out.events.find((e) => e.type === "notice") as { text: string };
    expect(notice.text).toMatch(/^openai\/gpt-5 failed \(rate limit 429: Rate limit reached\); switching to gemini\/gemini-2.5-flash$/);
    expect(out.done!.message.model).toBe("gemini/gemini-2.5-flash");
    expect(b.requests[0]!.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(cooldowns.get("openai/gpt-5")).toBe(clock + SHORT_COOLDOWN_MS);
  });

  for (const [label, status, body] of [
    ["401", 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } }],
    ["402/quota", 429, { error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" } }],
    ["403", 403, { error: { message: "forbidden", type: "permission_error" } }],
    ["404", 404, { error: { message: "The model `gpt-5` does not exist", type: "invalid_request_error", code: "model_not_found" } }],
    ["408", 408, { error: { message: "timeout" } }],
    ["500", 500, { error: { message: "The server had an error", type: "server_error" } }],
    ["503", 503, { error: { message: "overloaded" } }],
  ] as const) {
    it(`switches on ${label}`, async () => {
      a.enqueue(json(status, body));
      b.enqueue({ status: 200, body: fixture("gemini/text.sse") });
      const out = await collect(pair().stream(request()));
      expect(out.error).toBeUndefined();
      expect(b.requests).toHaveLength(1);
    });
  }

  it("a stall before output switches; the stalled model cools down for 10 minutes", async () => {
    a.enqueue({ status: 200, headers: { "content-type": "text/event-stream" }, body: "", hang: true });
    b.enqueue({ status: 200, body: fixture("gemini/text.sse") });
    const out = await collect(pair({ stall: 0.3 }).stream(request()));
    expect(out.error).toBeUndefined();
    expect(out.done!.message.model).toBe("gemini/gemini-2.5-flash");
    expect(cooldowns.get("openai/gpt-5")).toBe(clock + LONG_COOLDOWN_MS);
  });

  it("never switches on context overflow or a bad request", async () => {
    for (const body of [fixture("openai-responses/error-400-context-length.json"), '{"error":{"message":"Invalid value for tools[0].name","type":"invalid_request_error"}}']) {
      a.enqueue({ status: 400, headers: { "content-type": "application/json" }, body });
      const out = await collect(pair().stream(request()));
      expect(out.error).toBeInstanceOf(ProviderError);
    }
    expect(b.requests).toHaveLength(0);
    expect(cooldowns.size).toBe(0);
  });

  it("never switches once output reached the user: a cut after text is surfaced", async () => {
    const body = fixture("openai-responses/text.sse");
    a.enqueue({ status: 200, body, cutAfter: body.indexOf("response.output_text.done") });
    b.enqueue({ status: 200, body: fixture("gemini/text.sse") });
    const out = await collect(pair().stream(request()));
    expect(out.events.some((e) => e.type === "text_delta")).toBe(true);
    expect((out.error as ProviderError).kind).toBe("network");
    expect(b.requests).toHaveLength(0);
  });

  it("the last candidate's error is thrown when every candidate fails", async () => {
    a.enqueue(json(500, { error: { message: "boom" } }));
    b.enqueue(json(503, { error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } }));
    const out = await collect(pair().stream(request()));
    expect([(out.error as ProviderError).provider, (out.error as ProviderError).status]).toEqual(["gemini", 503]);
    expect(out.events.filter((e) => e.type === "notice")).toHaveLength(1);
  });

  it("an aborted request is not switched", async () => {
    const ctl = new AbortController();
    a.enqueue({ status: 200, headers: { "content-type": "text/event-stream" }, body: "", hang: true });
    setTimeout(() => ctl.abort(new Error("interrupted by user")), 100);
    const out = await collect(pair().stream(request({ signal: ctl.signal })));
    expect((out.error as Error).message).toBe("interrupted by user");
    expect(b.requests).toHaveLength(0);
  });
});

describe("cooldowns", () => {
  const failing = (name: string, err: () => Error, log: string[]): Provider => ({
    name,
    async *stream(req: ModelRequest): AsyncGenerator<StreamEvent> {
      log.push(`${name}/${req.model}`);
      throw err();
    },
  });
  const answering = (name: string, log: string[], text = "ok"): Provider => ({
    name,
    async *stream(req: ModelRequest): AsyncGenerator<StreamEvent> {
      log.push(`${name}/${req.model}`);
      yield { type: "text_delta", text };
      yield { type: "done", message: { role: "assistant", blocks: [{ type: "text", text }], model: req.model }, usage: { input: 1, output: 1, cache_read: 0, cache_write: 0 }, stop_reason: "end_turn" };
    },
  });
  const rateLimit = () => new ProviderError({ provider: "p", kind: "rate_limit", status: 429, message: "slow down", retryable: true });
  const auth = () => new ProviderError({ provider: "p", kind: "auth", status: 401, message: "bad key" });

  it("a rate-limited model is skipped for 1 minute, then tried again", async () => {
    const log: string[] = [];
    let fail = true;
    const primary: Provider = {
      name: "p",
      async *stream(req) {
        log.push(`p/${req.model}`);
        if (fail) throw rateLimit();
        yield* answering("p", [], "primary").stream(req);
      },
    };
    const w = withFallbacks([{ spec: "p/m1", provider: primary }, { spec: "q/m2", provider: answering("q", log) }], { now, cooldowns });
    await collect(w.stream(request()));
    expect(log).toEqual(["p/m1", "q/m2"]);
    fail = false;
    clock += 59_000;
    const skipped = await collect(w.stream(request()));
    expect(log).toEqual(["p/m1", "q/m2", "q/m2"]);
    expect(skipped.events[0]).toEqual({ type: "notice", text: "skipping p/m1: cooling down after a failure (1 s left)" });
    clock += 1_001;
    const back = await collect(w.stream(request()));
    expect(log.at(-1)).toBe("p/m1");
    expect(back.done!.message.model).toBe("m1");
  });

  it("an auth failure cools down for 10 minutes; a longer server-requested wait wins", () => {
    expect(cooldownFor(auth())).toBe(LONG_COOLDOWN_MS);
    expect(cooldownFor(rateLimit())).toBe(SHORT_COOLDOWN_MS);
    expect(cooldownFor(new ProviderError({ provider: "p", kind: "rate_limit", message: "x", retry_after_ms: 120_000 }))).toBe(120_000);
  });

  it("cooldowns are process-wide by default and keyed by provider/model", async () => {
    fallbackCooldowns.clear();
    const log: string[] = [];
    const w1 = withFallbacks([{ spec: "p/m1", provider: failing("p", auth, log) }, { spec: "q/m2", provider: answering("q", log) }]);
    await collect(w1.stream(request()));
    const w2 = withFallbacks([{ spec: "p/m1", provider: failing("p", auth, log) }, { spec: "q/m2", provider: answering("q", log) }]);
    await collect(w2.stream(request()));
    const w3 = withFallbacks([{ spec: "p/other", provider: failing("p", auth, log) }, { spec: "q/m2", provider: answering("q", log) }]);
    await collect(w3.stream(request()));
    expect(log).toEqual(["p/m1", "q/m2", "q/m2", "p/other", "q/m2"]);
    expect(fallbackCooldowns.has("p/m1")).toBe(true);
    fallbackCooldowns.clear();
  });

  it("the last candidate is always tried, even while cooling down", async () => {
    const log: string[] = [];
    cooldowns.set("p/m1", clock + 10_000);
    cooldowns.set("q/m2", clock + 10_000);
    const w = withFallbacks([{ spec: "p/m1", provider: answering("p", log) }, { spec: "q/m2", provider: answering("q", log) }], { now, cooldowns });
    const out = await collect(w.stream(request()));
    expect(log).toEqual(["q/m2"]);
    expect(out.done!.message.model).toBe("q/m2");
  });

  it("a failure notice names the next candidate that is not cooling down", async () => {
    const log: string[] = [];
    cooldowns.set("q/m2", clock + 10_000);
    const w = withFallbacks(
      [{ spec: "p/m1", provider: failing("p", rateLimit, log) }, { spec: "q/m2", provider: answering("q", log) }, { spec: "r/m3", provider: answering("r", log) }],
      { now, cooldowns },
    );
    const out = await collect(w.stream(request()));
    expect(out.events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toEqual([
      "p/m1 failed (rate limit 429: slow down); switching to r/m3",
      "skipping q/m2: cooling down after a failure (10 s left)",
    ]);
    expect(log).toEqual(["p/m1", "r/m3"]);
  });
});

describe("requests per candidate", () => {
  it("gives each candidate its own model id, lowers max_tokens to its cap, and unstamps its own messages", async () => {
    const seen: ModelRequest[] = [];
    const rec = (name: string, fail: boolean): Provider => ({
      name,
      async *stream(req) {
        seen.push(req);
        if (fail) throw new ProviderError({ provider: name, kind: "server", status: 500, message: "x" });
        yield { type: "done", message: { role: "assistant", blocks: [], model: req.model }, usage: { input: 0, output: 0, cache_read: 0, cache_write: 0 }, stop_reason: "end_turn" };
      },
    });
    const messages: Message[] = [
      { role: "user", blocks: [{ type: "text", text: "q" }] },
      { role: "assistant", model: "gemini/gemini-2.5-flash", blocks: [{ type: "text", text: "a", signature: "S", provider: "gemini" }] },
      { role: "user", blocks: [{ type: "text", text: "q2" }] },
    ];
    const w = withFallbacks([{ spec: "openai/gpt-5", provider: rec("openai", true) }, { spec: "gemini/gemini-2.5-flash", provider: rec("gemini", false), max_output: 1000 }], { now, cooldowns });
    await collect(w.stream(request({ messages, max_tokens: 128_000 })));
    expect(seen.map((r) => [r.model, r.max_tokens, r.messages[1]!.model])).toEqual([
      ["gpt-5", 128_000, "gemini/gemini-2.5-flash"],
      ["gemini-2.5-flash", 1000, "gemini-2.5-flash"],
    ]);
  });

  it("a fallback's own thought signatures are replayed to it on the next request", async () => {
    a.enqueue(json(500, { error: { message: "boom" } }));
    b.enqueue({ status: 200, body: fixture("gemini/parallel-function-calls.sse") });
    const w = pair();
    const first = await collect(w.stream(request()));
    const answer = first.done!.message;
    expect(answer.model).toBe("gemini/gemini-2.5-flash");
    const calls = answer.blocks.filter((x) => x.type === "tool_use") as { id: string }[];
    // the primary is cooling down: the next request goes straight to gemini, signature included
    b.enqueue({ status: 200, body: fixture("gemini/text.sse") });
    const messages: Message[] = [
      ...request().messages,
      answer,
      { role: "user", blocks: calls.map((c) => ({ type: "tool_result" as const, id: c.id, content: "ok" })) },
    ];
    const second = await collect(w.stream(request({ messages })));
    expect(second.error).toBeUndefined();
    const sent = b.requests[1]!.json();
    expect(sent.contents[1].parts[0].thoughtSignature).toHaveLength(304);
    expect(a.requests).toHaveLength(1);
  });

  it("delegates the model prober to the primary", async () => {
    const primary: Provider = { name: "ollama", stream: async function* () {}, contextWindow: async (m) => (m === "qwen3" ? 8192 : undefined), supportsTools: async () => false };
    const w = withFallbacks([{ spec: "ollama/qwen3", provider: primary }, { spec: "openai/gpt-5", provider: openai() }]);
    expect([await w.contextWindow!("qwen3"), await w.supportsTools!("qwen3"), w.name]).toEqual([8192, false, "ollama"]);
    const bare = withFallbacks([{ spec: "openai/gpt-5", provider: openai() }]);
    expect(bare.contextWindow).toBeUndefined();
    expect(() => withFallbacks([])).toThrow(ConfigError);
    expect(() => withFallbacks([{ spec: "gpt-5", provider: openai() }])).toThrow(/provider\/model/);
  });
});

describe("configuration", () => {
  function registry(): Registry<ProviderFactory> {
    const reg = new Registry<ProviderFactory>("providers");
    for (const f of [openaiFactory, geminiFactory, ollamaFactory]) reg.register(f, f.name);
    return reg;
  }
  const env = () => ({ OPENAI_API_KEY: "k1", OPENAI_BASE_URL: a.url, GEMINI_API_KEY: "k2", GOOGLE_GEMINI_BASE_URL: b.url });

  it("fallbacks[role] wins over fallbacks[spec]; roles resolve through parseSpec", async () => {
    const settings = {
      roles: { smart: "openai/gpt-5" },
      fallbacks: { smart: ["gemini/gemini-2.5-flash"], "openai/gpt-5": ["gemini/gemini-2.5-pro"] },
    };
    expect(fallbackSpecs(settings, "smart", "openai/gpt-5")).toEqual(["gemini/gemini-2.5-flash"]);
    expect(fallbackSpecs(settings, "openai/gpt-5", "openai/gpt-5")).toEqual(["gemini/gemini-2.5-pro"]);
    expect(fallbackSpecs(settings, "gpt-5", "openai/gpt-5")).toEqual(["gemini/gemini-2.5-pro"]);
    const opened = await openModel("smart", registry(), settings, env(), { now, cooldowns });
    expect([opened.resolved.provider, opened.resolved.model, opened.notices]).toEqual(["openai", "gpt-5", []]);
    // the factory-made adapter retries twice first (SDK policy); Retry-After: 0 keeps that quick
    const limited = { ...json(429, { error: { message: "Rate limit reached", code: "rate_limit_exceeded" } }), headers: { "content-type": "application/json", "retry-after": "0" } };
    a.enqueue(limited, limited, limited);
    b.enqueue({ status: 200, body: fixture("gemini/text.sse") });
    const out = await collect(opened.provider.stream(request({ model: opened.resolved.model })));
    expect(out.done!.message.model).toBe("gemini/gemini-2.5-flash");
    expect([a.requests.length, out.events.filter((e) => e.type === "notice").length]).toEqual([3, 3]);
  });

  it("no fallbacks: the plain provider; a fallback that cannot be resolved is left out with a notice", async () => {
    const plain = await openModel("openai/gpt-5", registry(), {}, env());
    expect(plain.provider.constructor.name).toBe("ResponsesProvider");
    const settings = { fallbacks: { "openai/gpt-5": ["nope/x", "gemini/gemini-2.5-flash"] } };
    const partial = await openModel("openai/gpt-5", registry(), settings, { ...env(), GEMINI_API_KEY: "" });
    expect(partial.notices).toHaveLength(2);
    expect(partial.notices[0]).toMatch(/^fallback nope\/x for openai\/gpt-5 left out: unknown provider "nope"/);
    expect(partial.notices[1]).toMatch(/GEMINI_API_KEY/);
    expect(partial.provider.constructor.name).toBe("ResponsesProvider");
    await expect(openModel("openai/gpt-5", registry(), settings, {})).rejects.toThrow(/OPENAI_API_KEY/);
  });
});

describe("through the loop", () => {
  it("usage and the stored message are attributed to the model that answered", async () => {
    const host = await Host.create({ plugins: [], cwd: mkdtempSync(join(tmpdir(), "larik-fallback-loop-")), settings: {} });
    a.enqueue(json(503, { error: { message: "overloaded" } }));
    b.enqueue({ status: 200, body: fixture("gemini/text.sse") });
    const agent = await host.openAgent({ provider: pair(), model: "openai/gpt-5", mode: "yolo" });
    const events: AgentEvent[] = [];
    for await (const e of agent.run("count")) events.push(e);
    expect(events.find((e) => e.type === "notice")).toMatchObject({ text: expect.stringContaining("switching to gemini/gemini-2.5-flash") });
    const msg = events.find((e) => e.type === "assistant_message") as Extract<AgentEvent, { type: "assistant_message" }>;
    expect(msg.message.model).toBe("gemini/gemini-2.5-flash");
    const usage = events.find((e) => e.type === "usage") as Extract<AgentEvent, { type: "usage" }>;
    expect(usage.usage.model).toBe("gemini/gemini-2.5-flash");
    expect(Object.keys(usage.usage.by_model ?? {})).toEqual(["gemini/gemini-2.5-flash"]);
    await host.dispose();
  });
});
