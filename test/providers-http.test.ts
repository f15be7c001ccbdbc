/**
 * kernel/kit/http-retry.ts, provider-errors.ts, stream-read.ts, stream-decoder.ts: retry policy, error
 * classification, SSE/NDJSON decoding and the stall guard, over real HTTP on loopback
 * (test/fakes/replay-server.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  backoffDelay,
  classifyHttpError,
  isContextOverflow,
  parseRetryAfter,
  parseToolInput,
  postJson,
  ProviderError,
  readNdjson,
  readNdjsonBatches,
  readSse,
  readSseBatches,
  runStreamDecoder,
  sendJson,
  streamError,
  streamWithRetries,
  TextAccumulator,
  ToolCallSalvage,
  type SseEvent,
  StreamOutput,
  type StreamDecoder,
  type StreamEvent,
} from "../kernel/index.js";
import { ReplayServer } from "./fakes/replay-server.js";
import { startConnectProxy } from "./fakes/connect-proxy.js";
import { fixture, manifestFor } from "./fakes/recordings.js";

const manifest = manifestFor();
const headersOf = (file: string) => new Headers(manifest.find((m) => m.file === file)!.response_headers);

let server: ReplayServer;
const sleeps: number[] = [];
const fastSleep = async (ms: number) => {
  sleeps.push(ms);
};
beforeEach(async () => {
  server = await ReplayServer.start();
  sleeps.length = 0;
});
afterEach(async () => {
  await server.close();
});

async function caught(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ProviderError) return e;
    throw e;
  }
  throw new Error("expected a ProviderError");
}

describe("classification of recorded error bodies", () => {
  const cases: [file: string, kind: string, retryable: boolean][] = [
    ["anthropic/error-400-prompt-too-long.json", "context_overflow", false],
    ["anthropic/error-401-authentication.json", "auth", false],
    ["openai-chat/error-429-request-too-large.json", "context_overflow", false],
    ["openai-chat/error-400-context-length-deepseek.json", "context_overflow", false],
    ["openai-responses/error-400-context-length.json", "context_overflow", false],
    ["gemini/error-400-input-token-count-vertex.json", "context_overflow", false],
    ["gemini/error-429-resource-exhausted.json", "rate_limit", true],
    ["ollama/error-400-context-length.json", "context_overflow", false],
    ["ollama/error-400-model-does-not-support-tools.json", "capability", false],
  ];
  for (const [file, kind, retryable] of cases) {
    it(`${file} → ${kind}`, () => {
      const status = manifest.find((m) => m.file === file)!.http_status;
      const err = classifyHttpError({ provider: "p", status, headers: headersOf(file), bodyText: fixture(file) });
      expect(err.kind).toBe(kind);
      expect(err.retryable).toBe(retryable);
      expect(err.status).toBe(status);
      expect(err.message).not.toMatch(/\n/);
    });
  }

  it("surfaces the Anthropic request id from the body", () => {
    const file = "anthropic/error-400-prompt-too-long.json";
    const err = classifyHttpError({ provider: "anthropic", status: 400, headers: headersOf(file), bodyText: fixture(file) });
    expect(err.request_id).toBe("req_011CeCGmMJJGRCp7xgjqapmJ");
    expect(err.message).toContain("prompt is too long: 3333404 tokens > 200000 maximum");
    expect(err.message).toContain("req_011CeCGmMJJGRCp7xgjqapmJ");
  });

  it("names the key variable on auth errors", () => {
    const file = "anthropic/error-401-authentication.json";
    const err = classifyHttpError({ provider: "anthropic", status: 401, bodyText: fixture(file), keyEnv: "ANTHROPIC_API_KEY" });
    expect(err.message).toContain("ANTHROPIC_API_KEY");
  });

  it("takes Gemini's RetryInfo delay from the body", () => {
    const file = "gemini/error-429-resource-exhausted.json";
    const err = classifyHttpError({ provider: "gemini", status: 429, bodyText: fixture(file) });
    expect(err.retry_after_ms).toBe(48_000);
  });

  it("never retries quota exhaustion, even when x-should-retry says true", () => {
    const body = JSON.stringify({ error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" } });
    const err = classifyHttpError({ provider: "openai", status: 429, headers: new Headers({ "x-should-retry": "true" }), bodyText: body });
    expect(err.kind).toBe("quota");
    expect(err.retryable).toBe(false);
  });

  it("treats the Anthropic spend cap 429 as quota", () => {
    const body = JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "spend limit", details: { error_code: "enforced_spend_limit_reached" } } });
    expect(classifyHttpError({ provider: "anthropic", status: 429, bodyText: body }).kind).toBe("quota");
  });

  it("maps statuses: 413 too_large, 529 overloaded, 404 not_found, 502 server, 422 bad_request", () => {
    expect(classifyHttpError({ provider: "p", status: 413, bodyText: "" }).kind).toBe("too_large");
    expect(classifyHttpError({ provider: "p", status: 413, bodyText: "" }).retryable).toBe(false);
    const over = classifyHttpError({ provider: "p", status: 529, bodyText: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' });
    expect([over.kind, over.retryable]).toEqual(["overloaded", true]);
    expect(classifyHttpError({ provider: "p", status: 404, bodyText: "" }).kind).toBe("not_found");
    expect(classifyHttpError({ provider: "p", status: 502, bodyText: "<html>bad gateway</html>" }).kind).toBe("server");
    expect(classifyHttpError({ provider: "p", status: 422, bodyText: "{}" }).kind).toBe("bad_request");
  });

  it("a 404 that names the requested model says it was not found and where to pick another; one that names none keeps the URL", () => {
    // Gemini's unknown model: the model is in the URL, the message says models/<id>
    const gemini = JSON.stringify({ error: { code: 404, message: "models/gemini-nope is not found for API version v1beta, or is not supported for generateContent.", status: "NOT_FOUND" } });
    const err = classifyHttpError({ provider: "gemini", status: 404, bodyText: gemini, model: "gemini-nope", url: "https://x/v1beta/models/gemini-nope:streamGenerateContent" });
    expect([err.kind, err.retryable, err.message]).toEqual([
      "not_found",
      false,
      'model "gemini-nope" not found (models/gemini-nope is not found for API version v1beta, or is not supported for generateContent.): pick another with --model gemini/<model> or the model setting',
    ]);
    const path = classifyHttpError({ provider: "p", status: 404, bodyText: '{"detail":"Not Found"}', model: "m", url: "http://h/chat/completions", notFoundHint: "check the base URL" });
    expect(path.message).toBe("Not Found (http://h/chat/completions: check the base URL)");
  });

  it("retries 408, 409, 429 and 5xx by default, and no other 4xx (the SDKs' policy)", () => {
    const retryable = (status: number) => classifyHttpError({ provider: "p", status, bodyText: "" }).retryable;
    expect([408, 409, 429, 500, 503].map(retryable)).toEqual([true, true, true, true, true]);
    expect([400, 401, 403, 404, 422].map(retryable)).toEqual([false, false, false, false, false]);
  });

  it("obeys x-should-retry: false on a 500", () => {
    expect(classifyHttpError({ provider: "p", status: 500, headers: new Headers({ "x-should-retry": "false" }) }).retryable).toBe(false);
    expect(classifyHttpError({ provider: "p", status: 400, headers: new Headers({ "x-should-retry": "true" }) }).retryable).toBe(true);
  });

  it("knows every overflow pattern of the brief", () => {
    for (const msg of [
      "prompt is too long: 5 tokens > 4 maximum",
      "context_length_exceeded",
      "Your input exceeds the context window of this model.",
      "This endpoint's maximum context length is 8192 tokens",
      "the input length exceeds the context length",
      "The input token count (1250074) exceeds the maximum number of tokens allowed (1048576).",
      "input length and `max_tokens` exceed context limit: 188059 + 20000 > 200000",
      "prompt too long; exceeded max context length by 12 tokens",
      "the request exceeds the available context size, try increasing it",
    ]) {
      expect(isContextOverflow(msg), msg).toBe(true);
    }
    expect(isContextOverflow("rate limit exceeded")).toBe(false);
  });

  it("maps in-stream error events to the status they stand for", () => {
    const e = streamError("anthropic", { type: "error", error: { details: null, type: "overloaded_error", message: "Overloaded" } });
    expect([e.kind, e.status, e.message]).toEqual(["overloaded", 529, "Overloaded"]);
    expect(streamError("openai", { error: { message: "boom", type: "server_error", code: null } }).kind).toBe("server");
    expect(streamError("ollama", { error: "the input length exceeds the context length" }).kind).toBe("context_overflow");
    // OpenRouter's code is the HTTP status, a number (openrouter.ai/docs/api/errors)
    const or = streamError("openrouter", { error: { code: 429, message: "Rate limit exceeded: free-models-per-min" } });
    expect([or.kind, or.status, or.retryable]).toEqual(["rate_limit", 429, true]);
    expect(streamError("openrouter", { error: { code: 502, message: "Provider returned error" } }).status).toBe(502);
  });
});

describe("retry delays", () => {
  it("reads retry-after-ms, Retry-After seconds and HTTP dates", () => {
    expect(parseRetryAfter(new Headers({ "retry-after-ms": "250", "retry-after": "9" }))).toBe(250);
    expect(parseRetryAfter(new Headers({ "retry-after": "1.5" }))).toBe(1500);
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(parseRetryAfter(new Headers({ "retry-after": "Wed, 21 Oct 2015 07:28:03 GMT" }), now)).toBe(3000);
    expect(parseRetryAfter(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(parseRetryAfter(new Headers())).toBeUndefined();
  });

  it("backs off exponentially from 0.5 s to at most 8 s with up to 25 % jitter", () => {
    expect(backoffDelay(0, () => 0)).toBe(500);
    expect(backoffDelay(2, () => 0)).toBe(2000);
    expect(backoffDelay(10, () => 0)).toBe(8000);
    expect(backoffDelay(1, () => 0.999)).toBeGreaterThan(750);
    expect(backoffDelay(1, () => 0.999)).toBeLessThan(1000);
  });
});

describe("postJson", () => {
  const ok = { status: 200, headers: { "content-type": "application/json" }, body: '{"ok":true}' };

  it("retries a 429 after its Retry-After, then succeeds", async () => {
    server.enqueue({ status: 429, headers: { "retry-after": "2" }, body: '{"error":{"message":"slow down","type":"rate_limit_error"}}' }, ok);
    const notices: string[] = [];
    const gen = sendJson({ provider: "p", url: `${server.url}/x`, body: { a: 1 }, sleep: fastSleep });
    let r = await gen.next();
    while (!r.done) {
      if (r.value.type === "notice") notices.push(r.value.text);
      r = await gen.next();
    }
    expect(await r.value.json()).toEqual({ ok: true });
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([2000]);
    expect(notices[0]).toBe("p: HTTP 429 rate limited; retrying in 2.0 s (1/2)");
    expect(server.requests[1]!.json()).toEqual({ a: 1 });
  });

  it("gives up after maxRetries and throws the last error", async () => {
    for (let i = 0; i < 3; i++) server.enqueue({ status: 503, headers: { "retry-after-ms": "5" }, body: "upstream down" });
    const err = await caught(postJson({ provider: "p", url: `${server.url}/x`, body: {}, sleep: fastSleep }));
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toEqual([5, 5]);
    expect([err.kind, err.status, err.message]).toEqual(["server", 503, "upstream down"]);
  });

  it("uses exponential backoff when no delay is given", async () => {
    server.enqueue({ status: 500 }, { status: 500 }, ok);
    await postJson({ provider: "p", url: `${server.url}/x`, body: {}, sleep: fastSleep, random: () => 0 });
    expect(sleeps).toEqual([500, 1000]);
  });

  it("honours maxRetries: 0", async () => {
    server.enqueue({ status: 500 }, ok);
    await caught(postJson({ provider: "p", url: `${server.url}/x`, body: {}, maxRetries: 0, sleep: fastSleep }));
    expect(server.requests).toHaveLength(1);
  });

  it("does not retry quota, overflow, too-large or x-should-retry: false", async () => {
    server.enqueue(
      { status: 429, headers: { "retry-after": "1" }, body: '{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}' },
      { status: 429, body: fixture("openai-chat/error-429-request-too-large.json") },
      { status: 413, body: "too big" },
      { status: 500, headers: { "x-should-retry": "false" }, body: "no" },
    );
    const kinds = [];
    for (let i = 0; i < 4; i++) kinds.push((await caught(postJson({ provider: "p", url: `${server.url}/x`, body: {}, sleep: fastSleep }))).kind);
    expect(kinds).toEqual(["quota", "context_overflow", "too_large", "server"]);
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([]);
  });

  it("surfaces a Retry-After beyond a minute instead of waiting", async () => {
    server.enqueue({ status: 429, headers: { "retry-after": "3600" }, body: "later" });
    const err = await caught(postJson({ provider: "p", url: `${server.url}/x`, body: {}, sleep: fastSleep }));
    expect([err.kind, err.retry_after_ms]).toEqual(["rate_limit", 3_600_000]);
    expect(err.message).toMatch(/ \(the server asks to wait 60 min before the next request; try again then\)$/);
    expect(server.requests).toHaveLength(1);
  });

  it("sends the JSON body and headers", async () => {
    server.enqueue(ok);
    await postJson({ provider: "p", url: `${server.url}/v1/x`, headers: { "x-api-key": "k" }, body: { hello: "wörld" } });
    const req = server.requests[0]!;
    expect([req.method, req.path, req.headers["x-api-key"], req.headers["content-type"]]).toEqual(["POST", "/v1/x", "k", "application/json"]);
    expect(req.json()).toEqual({ hello: "wörld" });
  });

  it("an unreachable base URL is a one-line network error naming the URL, after retries", async () => {
    const url = "http://127.0.0.1:1/v1/messages";
    const err = await caught(postJson({ provider: "p", url, body: {}, sleep: fastSleep, hint: "check base_url" }));
    expect(err.kind).toBe("network");
    expect(err.message).toContain(url);
    expect(err.message).toContain("check base_url");
    expect(err.message).not.toMatch(/\n/);
    expect(sleeps).toHaveLength(2);
    // each retry says what failed; the fix hint waits for the final error
    const notices: string[] = [];
    const gen = sendJson({ provider: "p", url, body: {}, sleep: fastSleep, random: () => 0, hint: "check base_url" });
    await caught(
      (async () => {
        for (let r = await gen.next(); !r.done; r = await gen.next()) if (r.value.type === "notice") notices.push(r.value.text);
      })(),
    );
    expect(notices).toEqual([
      `p: cannot reach ${url}: ECONNREFUSED; retrying in 0.5 s (1/2)`,
      `p: cannot reach ${url}: ECONNREFUSED; retrying in 1.0 s (2/2)`,
    ]);
    // a hint of any wording waits too (Ollama's asks a question first)
    const asked: string[] = [];
    const ollama = sendJson({ provider: "p", url, body: {}, sleep: fastSleep, random: () => 0, hint: "is Ollama running? check OLLAMA_HOST" });
    const last = await caught(
      (async () => {
        for (let r = await ollama.next(); !r.done; r = await ollama.next()) if (r.value.type === "notice") asked.push(r.value.text);
      })(),
    );
    expect(asked).toEqual(notices);
    expect(last.message).toBe(`cannot reach ${url}: ECONNREFUSED (is Ollama running? check OLLAMA_HOST)`);
  });

  it("a host name that does not resolve (ENOTFOUND) fails at once, without retries: a typo no retry mends; EAI_AGAIN is retried", async () => {
    // what Node's http client rejects with for a name getaddrinfo does not know (no DNS is asked here)
    const dnsError = (code: string) => () =>
      Promise.reject(Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error(`getaddrinfo ${code} modle.example`), { code, hostname: "modle.example" }) }));
    const url = "http://modle.example/v1/messages";
    const err = await caught(postJson({ provider: "p", url, body: {}, sleep: fastSleep, hint: "check base_url", fetch: dnsError("ENOTFOUND") as unknown as typeof fetch }));
    expect([err.kind, err.message, sleeps]).toEqual(["network", `cannot reach ${url}: ENOTFOUND, no such host name (check base_url)`, []]);
    const again = await caught(postJson({ provider: "p", url, body: {}, sleep: fastSleep, fetch: dnsError("EAI_AGAIN") as unknown as typeof fetch }));
    expect([again.message, sleeps]).toEqual([`cannot reach ${url}: EAI_AGAIN`, [500, 1000].map(() => expect.any(Number))]);
  });

  describe("through a proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY, as curl reads them)", () => {
    const saved = { ...process.env };
    afterEach(() => {
      for (const v of ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"]) if (saved[v] === undefined) delete process.env[v];
    });
    // A name only the proxy resolves: loopback addresses are never proxied.
    const viaProxy = () => `http://model.test:${new URL(server.url).port}/x`;

    it("sends the request through the proxy, unless NO_PROXY names the host", async () => {
      const proxy = await startConnectProxy({ "model.test": "127.0.0.1" });
      try {
        process.env.HTTP_PROXY = proxy.url;
        server.enqueue(ok);
        const res = await postJson({ provider: "p", url: viaProxy(), body: { a: 1 } });
        expect(await res.json()).toEqual({ ok: true });
        expect(proxy.targets).toEqual([new URL(viaProxy()).host]);
        expect(server.requests[0]!.json()).toEqual({ a: 1 });
        // TEST-NET-1 (RFC 5737) is reachable by no one: without the proxy the request only fails
        process.env.NO_PROXY = "192.0.2.1";
        const direct = await postJson({ provider: "p", url: "http://192.0.2.1:8080/x", body: {}, maxRetries: 0, signal: AbortSignal.timeout(300) }).catch((e: unknown) => e);
        expect(direct).toBeInstanceOf(Error);
        expect(proxy.targets).toHaveLength(1);
      } finally {
        await proxy.close();
      }
    });

    it("asks a server on this machine's loopback directly: a proxy cannot reach it", async () => {
      process.env.HTTP_PROXY = process.env.HTTPS_PROXY = "http://127.0.0.1:1";
      for (const host of ["127.0.0.1", "localhost"]) {
        server.enqueue(ok);
        const res = await postJson({ provider: "p", url: `http://${host}:${new URL(server.url).port}/x`, body: {}, maxRetries: 0 });
        expect(await res.json()).toEqual({ ok: true });
      }
      expect(server.requests).toHaveLength(2);
    });

    it("a proxy that cannot be reached is named in the one-line error", async () => {
      process.env.HTTP_PROXY = "http://127.0.0.1:1";
      const url = viaProxy();
      const err = await caught(postJson({ provider: "p", url, body: {}, sleep: fastSleep, hint: "check base_url" }));
      expect(err.kind).toBe("network");
      expect(err.message).toBe(`cannot reach ${url} through the proxy HTTP_PROXY=http://127.0.0.1:1: ECONNREFUSED (check the proxy, or list the host in NO_PROXY to go direct)`);
      expect(server.requests).toHaveLength(0);
    });

    it("takes a proxy without a scheme as http:// (as curl does); one that is no URL is named, without retries", async () => {
      const proxy = await startConnectProxy({ "model.test": "127.0.0.1" });
      try {
        process.env.HTTP_PROXY = proxy.url.replace("http://", "");
        server.enqueue(ok);
        await postJson({ provider: "p", url: viaProxy(), body: {} });
        expect(proxy.targets).toHaveLength(1);
      } finally {
        await proxy.close();
      }
      process.env.HTTP_PROXY = "http://[bad";
      const err = await caught(postJson({ provider: "p", url: viaProxy(), body: {}, sleep: fastSleep, hint: "check base_url" }));
      expect([err.message, sleeps]).toEqual(["HTTP_PROXY=http://[bad is not a proxy URL: write it as http://host:port", []]);
    });

    it("never shows the proxy's user and password in the error", async () => {
      process.env.HTTP_PROXY = "http://alice:s3cret@127.0.0.1:1";
      const err = await caught(postJson({ provider: "p", url: viaProxy(), body: {}, maxRetries: 0 }));
      expect(err.message).toContain("through the proxy HTTP_PROXY=http://***@127.0.0.1:1:");
      expect(err.message).not.toMatch(/alice|s3cret/);
    });
  });

  it("sends a GET without a body when asked (model probing)", async () => {
    server.enqueue(ok);
    await postJson({ provider: "p", url: `${server.url}/api/ps`, method: "GET" });
    expect([server.requests[0]!.method, server.requests[0]!.body, server.requests[0]!.headers["content-type"]]).toEqual(["GET", "", undefined]);
  });

  it("rejects a base URL that is not absolute with a clear message", async () => {
    const err = await caught(postJson({ provider: "p", url: "localhost:1234/v1/chat/completions", body: {} }));
    expect(err.message).toMatch(/invalid base URL/);
  });

  it("stops waiting for headers after the stall timeout", async () => {
    server.enqueue({ status: 200, headerDelayMs: 2000, body: "late" });
    const err = await caught(postJson({ provider: "p", url: `${server.url}/x`, body: {}, stallTimeout: 0.2 }));
    expect(err.kind).toBe("stall");
  });

  it("aborts a retry wait when the signal aborts", async () => {
    server.enqueue({ status: 503, headers: { "retry-after": "30" } });
    const ctrl = new AbortController();
    // abort once the retry is announced, i.e. during the 30 s wait
    const p = postJson({ provider: "p", url: `${server.url}/x`, body: {}, signal: ctrl.signal, onRetry: () => setImmediate(() => ctrl.abort()) });
    await expect(p).rejects.toThrow(/abort/i);
    expect(server.requests).toHaveLength(1);
  });
});

async function collectSse(body: string, chunking: Parameters<ReplayServer["enqueue"]>[0]["chunking"]): Promise<SseEvent[]> {
  server.enqueue({ status: 200, headers: { "content-type": "text/event-stream" }, body, chunking });
  const res = await postJson({ provider: "p", url: `${server.url}/sse`, body: {} });
  const out: SseEvent[] = [];
  for await (const e of readSse(res, { provider: "p" })) out.push(e);
  return out;
}

describe("readSse", () => {
  const body = ": keep-alive\r\nevent: a\r\ndata: {\"t\":\"Olá °×’\"}\r\n\r\ndata: line1\rdata: line2\r\r: comment\n\ndata:x\n\ndata: trailing-unterminated";
  const expected = [
    { event: "a", data: '{"t":"Olá °×’"}', id: undefined },
    { event: undefined, data: "line1\nline2", id: undefined },
    { event: undefined, data: "x", id: undefined },
  ];
  for (const chunking of ["whole", "bytes", { seed: 1, max: 7 }, { seed: 2, max: 3 }] as const) {
    it(`handles CRLF/CR, comments, multi-line data and split UTF-8 (${JSON.stringify(chunking)})`, async () => {
      expect(await collectSse(body, chunking)).toEqual(expected);
    });
  }

  it("splits exactly between \\r and \\n and inside a multi-byte character", async () => {
    const b = 'data: {"x":"á"}\r\n\r\ndata: 2\r\n\r\n';
    const bytes = new TextEncoder().encode(b);
    const cr = bytes.indexOf(13);
    const a = bytes.indexOf(0xc3);
    const events = await collectSse(b, [a + 1, cr - a - 1 + 1, 1000]);
    expect(events.map((e) => e.data)).toEqual(['{"x":"á"}', "2"]);
  });

  it("raises a stall after stall_timeout seconds of silence mid-stream", async () => {
    server.enqueue({ status: 200, body: "data: 1\n\n", hang: true });
    const res = await postJson({ provider: "p", url: `${server.url}/sse`, body: {} });
    const seen: string[] = [];
    const err = await caught(
      (async () => {
        for await (const e of readSse(res, { provider: "p", stallTimeout: 0.2 })) seen.push(e.data);
      })(),
    );
    expect(seen).toEqual(["1"]);
    expect(err.kind).toBe("stall");
  });

  it("closes the connection of a stalled stream, though a read is still waiting on it", async () => {
    const { createServer } = await import("node:http");
    let closed!: Promise<void>;
    const hanging = createServer((req, res) => {
      closed = new Promise((done) => req.socket.once("close", () => done()));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: 1\n\n"); // then nothing, ever
    });
    await new Promise<void>((done) => hanging.listen(0, "127.0.0.1", done));
    try {
      const url = `http://127.0.0.1:${(hanging.address() as { port: number }).port}/sse`;
      const res = await postJson({ provider: "p", url, body: {} });
      const err = await caught(
        (async () => {
          for await (const _ of readSse(res, { provider: "p", stallTimeout: 0.2 })) void _;
        })(),
      );
      expect(err.kind).toBe("stall");
      const timeout = new Promise<string>((done) => setTimeout(() => done("still open"), 2000).unref());
      expect(await Promise.race([closed.then(() => "closed"), timeout])).toBe("closed");
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((done) => hanging.close(() => done()));
    }
  });

  it("a negative stall_timeout waits for slow data instead of failing", async () => {
    server.enqueue({ status: 200, body: "data: 1\n\ndata: 2\n\n", chunking: [9], delayMs: 300 });
    const res = await postJson({ provider: "p", url: `${server.url}/sse`, body: {}, stallTimeout: -1 });
    const seen: string[] = [];
    for await (const e of readSse(res, { provider: "p", stallTimeout: -1 })) seen.push(e.data);
    expect(seen).toEqual(["1", "2"]);
  });

  it("reports a 200 body that is no event stream as what it is, not as a cut stream", async () => {
    const read = async (body: string, contentType = "application/json") => {
      server.enqueue({ status: 200, headers: { "content-type": contentType }, body, chunking: { seed: 4, max: 5 } });
      const res = await postJson({ provider: "openrouter", url: `${server.url}/sse`, body: {} });
      const seen: SseEvent[] = [];
      try {
        for await (const e of readSse(res, { provider: "openrouter" })) seen.push(e);
      } catch (err) {
        return { seen, err: err as ProviderError };
      }
      return { seen, err: undefined };
    };
    // OpenRouter: errors "emitted in the response body" with status 200 (openrouter.ai/docs/api/errors)
    const json = await read('{"error":{"message":"Provider returned error","code":502,"metadata":{"provider_name":"Chutes"}}}');
    expect([json.err?.kind, json.err?.status, json.err?.message]).toEqual(["server", 502, "Provider returned error"]);
    const rate = await read('{"error":{"message":"Rate limit exceeded","code":429}}');
    expect([rate.err?.kind, rate.err?.status]).toEqual(["rate_limit", 429]);
    const page = await read("<html><body>Please sign in to the proxy</body></html>\n", "text/html");
    expect(page.err?.message).toBe("the server answered with text instead of an event stream: <html><body>Please sign in to the proxy</body></html>");
    const whole = await read('{"id":"chatcmpl-1","object":"chat.completion","choices":[]}');
    expect(whole.err?.message).toMatch(/^the server answered with JSON instead of an event stream: \{"id":"chatcmpl-1"/);
    // an event stream that brought nothing but keep-alives, or nothing at all, is left to the
    // adapter, which reports its missing terminator
    expect(await read(": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n", "text/event-stream")).toEqual({ seen: [], err: undefined });
    expect(await read("", "text/event-stream")).toEqual({ seen: [], err: undefined });
    // a stream that had events is never second-guessed
    expect((await read('data: {"error_free":true}\n\n', "text/event-stream")).seen).toHaveLength(1);
  });

  it("reports a connection cut mid-body as a network error", async () => {
    server.enqueue({ status: 200, body: "data: 1\n\ndata: 2\n\n", cutAfter: 12 });
    const res = await postJson({ provider: "p", url: `${server.url}/sse`, body: {} });
    const err = await caught(
      (async () => {
        for await (const _ of readSse(res, { provider: "p", url: server.url })) void _;
      })(),
    );
    expect(err.kind).toBe("network");
    expect(err.message).toMatch(/connection lost/);
  });
});

describe("readNdjson", () => {
  it("decodes the recorded Ollama stream in 1-byte writes", async () => {
    server.enqueue({ status: 200, body: fixture("ollama/text.ndjson"), chunking: "bytes" });
    const res = await postJson({ provider: "p", url: `${server.url}/api/chat`, body: {} });
    const lines: any[] = [];
    for await (const l of readNdjson(res, { provider: "p" })) lines.push(l);
    expect(lines.at(-1)).toMatchObject({ done: true, prompt_eval_count: 16, eval_count: 22 });
    expect(lines.map((l) => l.message.content).join("")).toBe("Okay, here we go!\n\n1, 2, 3, 4, 5\n");
  });

  it("a cut final line is a truncated error", async () => {
    server.enqueue({ status: 200, body: '{"a":1}\n{"b":' });
    const res = await postJson({ provider: "p", url: `${server.url}/api/chat`, body: {} });
    const err = await caught(
      (async () => {
        for await (const _ of readNdjson(res, { provider: "p" })) void _;
      })(),
    );
    expect(err.kind).toBe("truncated");
  });
});

/** A response whose body arrives as exactly these reads. */
function bodyOf(reads: string[]): Response {
  const enc = new TextEncoder();
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        if (i < reads.length) c.enqueue(enc.encode(reads[i++]));
        else c.close();
      },
    }),
  );
}

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("readSseBatches", () => {
  it("yields the events of each read together, in order, and no empty batch", async () => {
    const reads = ["data: 1\n\ndata: 2\n\nda", "ta: 3\n", "\n", ": keep-alive\n\n", "data: 4\r\n\r\ndata: 5\n\n"];
    const batches = await all(readSseBatches(bodyOf(reads), { provider: "p" }));
    expect(batches.map((b) => b.map((e) => e.data))).toEqual([["1", "2"], ["3"], ["4", "5"]]);
  });

  it("decodes big reads exactly: long lines, multi-byte characters and CRLF across its internal cuts", async () => {
    const long = "é€🎉x".repeat(9000); // ~80 KB of 1- to 4-byte characters on one line
    const events = [`data: ${long}\r\n\r\n`, "data: a\n\n", `event: e\ndata: ${long.slice(7)}\ndata: 2\n\n`];
    for (let i = 0; i < 400; i++) events.push(`data: {"i":${i},"t":"ü€"}\r\n\r\n`);
    const body = events.join("");
    const bytes = new TextEncoder().encode(body);
    const want = (await all(readSse(bodyOf([body]), { provider: "p" }))).map((e) => [e.event, e.data]);
    expect(want).toHaveLength(403);
    expect(want[0]).toEqual([undefined, long]);
    expect(want[1]).toEqual([undefined, "a"]);
    expect(want[2]).toEqual(["e", `${long.slice(7)}\n2`]);
    expect(want.slice(3)).toEqual(Array.from({ length: 400 }, (_, i) => [undefined, `{"i":${i},"t":"ü€"}`]));
    // the same body in reads of 70 000 and 1 000 bytes (cut anywhere, even inside a character)
    for (const size of [70_000, 1_000]) {
      const reads: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) reads.push(bytes.subarray(i, i + size));
      const res = new Response(new ReadableStream<Uint8Array>({ pull: (c) => (reads.length ? c.enqueue(reads.shift()!) : c.close()) }));
      expect((await all(readSse(res, { provider: "p" }))).map((e) => [e.event, e.data])).toEqual(want);
    }
  });

  it("readSse is the same events one at a time", async () => {
    const reads = ["event: a\ndata: x\n\nevent: b\ndata: y\ndata: z\n\n"];
    expect(await all(readSse(bodyOf(reads), { provider: "p" }))).toEqual([
      { event: "a", data: "x", id: undefined },
      { event: "b", data: "y\nz", id: undefined },
    ]);
  });
});

describe("readNdjsonBatches", () => {
  it("parses the lines of each read together; CR, blank and padded lines are fine", async () => {
    const reads = ['{"a":1}\r\n\n  {"b":2}  \n{"c"', ':3}\n\u00a0{"d":4}\u00a0\n \r\n', '{"e":5}'];
    const batches = await all(readNdjsonBatches(bodyOf(reads), { provider: "p" }));
    expect(batches).toEqual([[{ a: 1 }, { b: 2 }], [{ c: 3 }, { d: 4 }], [{ e: 5 }]]);
  });

  it("yields the lines before a bad one, then throws naming it", async () => {
    const seen: unknown[] = [];
    const err = await caught(
      (async () => {
        for await (const b of readNdjsonBatches(bodyOf(['{"a":1}\n{"b":2}\nnot json\n{"c":3}\n']), { provider: "p" })) seen.push(...b);
      })(),
    );
    expect(seen).toEqual([{ a: 1 }, { b: 2 }]);
    expect([err.kind, err.message]).toEqual(["server", "invalid JSON line in the response stream: not json"]);
  });

  it("decodes a big read with a line longer than its internal cuts", async () => {
    const long = "ä€🎉".repeat(12_000);
    const lines = [JSON.stringify({ t: long }), ...Array.from({ length: 300 }, (_, i) => JSON.stringify({ i, t: "ö€" })), JSON.stringify({ end: long.slice(3) })];
    const values = (await all(readNdjsonBatches(bodyOf([`${lines.join("\n")}\n`]), { provider: "p" }))).flat();
    expect(values).toEqual(lines.map((l) => JSON.parse(l)));
  });

  it("readNdjson is the same values one at a time", async () => {
    expect(await all(readNdjson(bodyOf(['{"a":1}\n[2]\n', "3\n"]), { provider: "p" }))).toEqual([{ a: 1 }, [2], 3]);
  });
});

describe("runStreamDecoder", () => {
  /** Items are `t:…` (text), `k:…` (thinking), `s:…` (tool start), `!` (error), `.` (terminator). */
  class Fake implements StreamDecoder<string> {
    fed: string[] = [];
    text = new TextAccumulator();
    feed(item: string, out: StreamOutput): boolean {
      this.fed.push(item);
      const [kind, rest = ""] = item.split(":");
      if (kind === "t") out.delta("text_delta", rest, this.text);
      else if (kind === "k") out.delta("thinking_delta", rest);
      else if (kind === "s") out.push({ type: "tool_use_start", id: rest, name: "n" });
      else if (kind === "!") throw new Error("boom");
      else if (kind === ".") return true;
      return false;
    }
    end(out: StreamOutput): void {
      out.push({ type: "notice", text: `end: ${this.text}` });
    }
  }
  async function* source(...batches: string[][]) {
    yield* batches;
  }

  it("merges adjacent deltas of one batch, never across a tool start, a type change or a batch", async () => {
    const events = await all(runStreamDecoder(source(["t:a"], ["t:b", "t:c", "k:x", "k:y", "t:d", "s:1", "t:e", "t:"], ["t:f"]), new Fake()));
    expect(events).toEqual([
      { type: "text_delta", text: "a" },
      { type: "text_delta", text: "bc" },
      { type: "thinking_delta", text: "xy" },
      { type: "text_delta", text: "d" },
      { type: "tool_use_start", id: "1", name: "n" },
      { type: "text_delta", text: "e" },
      { type: "text_delta", text: "f" },
      { type: "notice", text: "end: abcdef" },
    ]);
  });

  it("yields the stream's first event before decoding the rest of its batch", async () => {
    const fake = new Fake();
    const it = runStreamDecoder(source(["s:0", "t:a", "t:b"]), fake);
    expect((await it.next()).value).toEqual({ type: "tool_use_start", id: "0", name: "n" });
    expect(fake.fed).toEqual(["s:0"]);
    expect((await it.next()).value).toEqual({ type: "text_delta", text: "ab" });
  });

  it("yields what was decoded before an error, then throws it; stops reading at the terminator", async () => {
    const got: StreamEvent[] = [];
    const run = async () => {
      for await (const e of runStreamDecoder(source(["t:a"], ["t:b", "t:c", "!", "t:never"]), new Fake())) got.push(e);
    };
    await expect(run()).rejects.toThrow("boom");
    expect(got.map((e) => (e as { text: string }).text)).toEqual(["a", "bc"]);
    const fake = new Fake();
    expect(await all(runStreamDecoder(source(["t:a", "."], ["t:never"]), fake))).toEqual([{ type: "text_delta", text: "a" }]);
    expect(fake.fed).toEqual(["t:a", "."]);
  });

  it("takes single items as well as batches", async () => {
    async function* single() {
      yield "t:a";
      yield "t:b";
    }
    expect(await all(runStreamDecoder(single(), new Fake()))).toEqual([
      { type: "text_delta", text: "a" },
      { type: "text_delta", text: "b" },
      { type: "notice", text: "end: ab" },
    ]);
  });
});

describe("StreamOutput with TextAccumulator", () => {
  it("keeps the accumulated text exact however deltas, appends, reads and set() interleave", () => {
    const out = new StreamOutput();
    const acc = new TextAccumulator("0");
    out.delta("text_delta", "a", acc);
    out.delta("text_delta", "b", acc);
    expect(acc.toString()).toBe("0ab"); // a read before the flush
    out.delta("text_delta", "c", acc); // lands after the read: a new event
    acc.append("(hidden)");
    out.delta("text_delta", "d", acc);
    out.delta("text_delta", "", acc);
    const other = new TextAccumulator();
    out.delta("text_delta", "x", other); // another block: not merged
    out.delta("text_delta", "e", acc);
    expect(out.drain()).toEqual([
      { type: "text_delta", text: "ab" },
      { type: "text_delta", text: "c" },
      { type: "text_delta", text: "d" },
      { type: "text_delta", text: "x" },
      { type: "text_delta", text: "e" },
    ]);
    expect(out.length).toBe(0);
    expect([acc.toString(), other.toString()]).toEqual(["0abc(hidden)de", "x"]);
    out.delta("thinking_delta", "p", acc);
    acc.set("replaced");
    out.delta("thinking_delta", "q", acc);
    expect(out.drain()).toEqual([
      { type: "thinking_delta", text: "p" },
      { type: "thinking_delta", text: "q" },
    ]);
    expect(acc.toString()).toBe("replacedq");
  });

  it("holds the text of many reads of many pieces", () => {
    const out = new StreamOutput();
    const acc = new TextAccumulator();
    let shown = "";
    let want = "";
    for (let read = 0; read < 300; read++) {
      for (let i = 0; i < 7; i++) {
        out.delta("text_delta", `${read}.${i} `, acc);
        want += `${read}.${i} `;
      }
      const events = out.drain();
      expect(events).toHaveLength(1);
      shown += (events[0] as { text: string }).text;
    }
    expect([shown, acc.toString()]).toEqual([want, want]);
  });
});

describe("TextAccumulator", () => {
  it("joins any number of pieces in order; set() replaces them", () => {
    const pieces = Array.from({ length: 1000 }, (_, i) => `${i},`);
    const t = new TextAccumulator("start:");
    for (const p of pieces) t.append(p);
    expect(t.toString()).toBe(`start:${pieces.join("")}`);
    t.append("more");
    expect(t.toString()).toBe(`start:${pieces.join("")}more`);
    t.append("x");
    t.set("final");
    expect(t.toString()).toBe("final");
    expect(new TextAccumulator().toString()).toBe("");
  });
});

describe("parseToolInput", () => {
  it("empty → {}, object → object, truncated → raw_input", () => {
    expect(parseToolInput("")).toEqual({ input: {} });
    expect(parseToolInput(' {"a": 1} ')).toEqual({ input: { a: 1 } });
    expect(parseToolInput('{"a": ')).toEqual({ input: {}, raw_input: '{"a": ' });
    expect(parseToolInput("[1]")).toEqual({ input: {}, raw_input: "[1]" });
  });

  it("takes the object encoded twice (a JSON string holding it) as the object", () => {
    expect(parseToolInput(JSON.stringify(JSON.stringify({ path: "a.ts" })))).toEqual({ input: { path: "a.ts" } });
    // a string that holds no object, or a cut one, is still sent back to the model
    expect(parseToolInput('"a.ts"')).toEqual({ input: {}, raw_input: '"a.ts"' });
    expect(parseToolInput('"{\\"path\\": \\"a"')).toEqual({ input: {}, raw_input: '"{\\"path\\": \\"a"' });
  });
});

describe("ToolCallSalvage", () => {
  const text = 'Sure.\n<tool_call>{"name": "read", "arguments": "{\\"path\\": \\"x\\"}"}</tool_call> done <tool';
  it("recovers the call and hides its markup wherever the deltas split", () => {
    for (let cut = 0; cut <= text.length; cut++) {
      for (const cut2 of [cut, Math.min(text.length, cut + 3)]) {
        const s = new ToolCallSalvage(["read"]);
        const parts = [text.slice(0, cut), text.slice(cut, cut2), text.slice(cut2)];
        let shown = "";
        const calls = [];
        for (const p of parts) {
          const r = s.push(p);
          shown += r.text;
          calls.push(...r.calls);
        }
        shown += s.end();
        expect(shown, `cut at ${cut}/${cut2}`).toBe("Sure.\n done <tool");
        expect(calls).toEqual([{ name: "read", input: { path: "x" } }]);
      }
    }
  });
});

describe("streamWithRetries", () => {
  const fail = (kind: "stall" | "network" | "bad_request") => new ProviderError({ provider: "p", kind, message: kind, retryable: kind !== "bad_request" });
  /** Runs streamWithRetries over real requests whose streams do what `script` says, in turn. */
  async function run(script: (StreamEvent | ProviderError)[][]) {
    for (let i = 0; i < script.length; i++) server.enqueue({ status: 200, body: "x" });
    let n = 0;
    const events: StreamEvent[] = [];
    let error: unknown;
    const read = async function* (res: Response): AsyncGenerator<StreamEvent> {
      await res.text();
      for (const step of script[n++]!) {
        if (step instanceof ProviderError) throw step;
        yield step;
      }
    };
    try {
      for await (const e of streamWithRetries(() => sendJson({ provider: "p", url: `${server.url}/s`, body: {} }), read, { provider: "p", sleep: fastSleep })) events.push(e);
    } catch (err) {
      error = err;
    }
    return { events, error, sent: server.requests.length };
  }
  const done: StreamEvent = { type: "done", message: { role: "assistant", blocks: [] }, usage: { input: 0, output: 0, cache_read: 0, cache_write: 0 }, stop_reason: "end_turn" };

  it("resends a connection cut before output, notices not counting as output", async () => {
    const r = await run([[{ type: "notice", text: "n" }, fail("network")], [done]]);
    expect([r.error, r.sent, r.events.map((e) => e.type)]).toEqual([undefined, 2, ["notice", "notice", "done"]]);
  });

  it("never resends after output, after a stall, or for an error no retry can fix", async () => {
    expect((await run([[{ type: "thinking_delta", text: "t" }, fail("network")], [done]])).sent).toBe(1);
    server.requests.length = 0;
    expect((await run([[fail("stall")], [done]])).sent).toBe(1);
    server.requests.length = 0;
    expect((await run([[fail("bad_request")], [done]])).sent).toBe(1);
    expect(sleeps).toEqual([]);
  });
});
