/**
 * Shared HTTP machinery for provider adapters: a JSON POST with the official SDKs' retry
 * policy, error classification into {@link ProviderError}, SSE and NDJSON decoding, and the
 * stall guard. Every adapter (Anthropic, Chat Completions, Responses, Gemini, Ollama) builds on
 * these so retry, overflow and truncation behave the same everywhere.
 *
 * Sources: WIRE-FORMATS.md §0 (SSE/NDJSON parsing, retries, overflow patterns);
 * anthropic-sdk-typescript `src/client.ts` and openai-python `_base_client.py` (retry policy);
 * the WHATWG HTML "server-sent events" parsing algorithm (via eventsource-parser);
 * LARIK-REFERENCE §10 (no retry once output is shown; stall guard).
 */
import { nodeFetch } from "./http-node.js";
import { endpointHint, type ProviderConfig } from "./registries.js";
import { ProviderError, type ProviderErrorKind, type StreamEvent } from "./types.js";

/* ------------------------------------------------------------------------------------------ */
/* Error classification                                                                        */
/* ------------------------------------------------------------------------------------------ */

/**
 * Messages that mean "the prompt does not fit the model's context window", across providers
 * (WIRE-FORMATS §0.4). Matched case-insensitively against the error message and code.
 */
const CONTEXT_OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i,
  /context_length_exceeded/i,
  /exceeds the context window/i,
  /maximum context length/i,
  /input length exceeds the context length/i,
  /input token count.*exceeds the maximum/i,
  /input length and .max_tokens. exceed context limit/i,
  /reduce the length of the messages/i,
  /exceeded max context length/i,
  /exceeds the available context size/i,
  // OpenAI answers a single request larger than the per-minute token budget with a 429 that
  // can never succeed (fixture openai-chat/error-429-request-too-large.json).
  /request too large for .* tokens per min/i,
];

/** True when `text` (an error message or code) says the prompt overflowed the context window. */
export function isContextOverflow(text: string): boolean {
  return CONTEXT_OVERFLOW_PATTERNS.some((re) => re.test(text));
}

// Not "exceeded your current quota": Gemini words its per-minute 429s the same way; OpenAI's
// billing case is told apart by its code.
const QUOTA_PATTERNS: readonly RegExp[] = [
  /insufficient_quota/i,
  /enforced_spend_limit_reached/i,
  /billing_error/i,
  /credit balance is too low/i,
];

const CAPABILITY_PATTERNS: readonly RegExp[] = [
  /does not support tools/i,
  /tools? (use )?(is|are) not supported/i,
  /does not support (image|vision)/i,
];

/** Kinds that no retry can fix: the same request fails the same way (WIRE-FORMATS §0.3, §6.16). */
const NEVER_RETRY: ReadonlySet<ProviderErrorKind> = new Set(["quota", "too_large", "context_overflow"]);

/** Longest server-requested wait that is honoured silently (ms); longer waits are surfaced. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** What {@link classifyHttpError} looks at. */
export interface HttpErrorInfo {
  provider: string;
  /** HTTP status of the response (or the status an in-stream error type stands for). */
  status: number;
  headers?: Headers;
  /** The raw body text (any content-type: DeepSeek sends JSON as application/octet-stream). */
  bodyText?: string;
  /** Environment variable holding the key, named in auth errors. */
  keyEnv?: string;
  /** The URL requested, named in a 404 error that does not name a model (a base URL missing `/v1`). */
  url?: string;
}

/** The parsed parts of a provider error body, whatever its envelope. */
interface ErrorBody {
  message?: string;
  /** `error.type` (Anthropic/OpenAI) or `error.status` (Gemini). */
  type?: string;
  /** `error.code` (OpenAI; OpenRouter's numeric status as text) or Anthropic `error.details.error_code`. */
  code?: string;
  request_id?: string;
  /** A delay hint inside the body (Gemini `RetryInfo.retryDelay`), in ms. */
  retry_after_ms?: number;
}

/**
 * Reads the known error envelopes: `{type:"error", error:{type,message}, request_id}`
 * (Anthropic), `{error:{message,type,param,code}}` (OpenAI and compatibles),
 * `{error:{code,message,status,details}}` (Gemini, possibly wrapped in an array) and
 * `{error:"text"}` (Ollama). Returns `{}` for anything else.
 */
function parseErrorBody(body: unknown): ErrorBody {
  if (Array.isArray(body)) body = body[0];
  if (!body || typeof body !== "object") return {};
  const b = body as Record<string, unknown>;
  const out: ErrorBody = {};
  if (typeof b.request_id === "string") out.request_id = b.request_id;
  const e = b.error;
  if (typeof e === "string") {
    out.message = e;
  } else if (e && typeof e === "object") {
    const err = e as Record<string, unknown>;
    if (typeof err.message === "string") out.message = err.message;
    if (typeof err.type === "string") out.type = err.type;
    else if (typeof err.status === "string") out.type = err.status;
    if (typeof err.code === "string") out.code = err.code;
    // OpenRouter's code is the HTTP status as a number, also inside a 200 stream
    else if (typeof err.code === "number" && Number.isInteger(err.code)) out.code = String(err.code);
    const details = err.details;
    if (details && typeof details === "object" && !Array.isArray(details)) {
      const code = (details as Record<string, unknown>).error_code;
      if (typeof code === "string") out.code = code;
    }
    if (Array.isArray(details)) {
      for (const d of details) {
        const delay = d && typeof d === "object" ? (d as Record<string, unknown>).retryDelay : undefined;
        if (typeof delay === "string" && /^\d+(\.\d+)?s$/.test(delay)) out.retry_after_ms = parseFloat(delay) * 1000;
      }
    }
  } else if (typeof b.message === "string") {
    out.message = b.message;
  } else if (b.message && typeof b.message === "object") {
    // Mistral puts pydantic's validation detail object here
    out.message = JSON.stringify(b.message);
  }
  if (!out.type && typeof b.type === "string" && b.type !== "error") out.type = b.type;
  return out;
}

function oneLine(s: string, max = 300): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/**
 * Reads `retry-after-ms` (milliseconds, non-standard, sent by OpenAI) then `Retry-After`
 * (seconds or an HTTP date). Returns the delay in ms, or undefined when absent or invalid.
 */
export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "") {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = headers.get("retry-after");
  if (ra === null || ra.trim() === "") return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs)) return secs >= 0 ? secs * 1000 : undefined;
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Exponential backoff with jitter, as the Stainless SDKs compute it: 0.5 s × 2^attempt capped at
 * 8 s, minus up to 25 % jitter. `attempt` counts retries already made (0 for the first). In ms.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  return Math.min(500 * 2 ** attempt, 8000) * (1 - random() * 0.25);
}

/** The HTTP status an Anthropic in-stream `error.type` stands for (WIRE-FORMATS §1.5, §1.7). */
const ERROR_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
  insufficient_quota: 429,
  server_error: 500,
};

function kindOf(status: number, text: string, type: string | undefined): ProviderErrorKind {
  if (isContextOverflow(text)) return "context_overflow";
  if (QUOTA_PATTERNS.some((re) => re.test(text)) || status === 402) return "quota";
  if (status === 413 || type === "request_too_large") return "too_large";
  if (CAPABILITY_PATTERNS.some((re) => re.test(text))) return "capability";
  if (status === 401 || status === 403) return "auth";
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limit";
  if (status === 529 || type === "overloaded_error" || /overloaded/i.test(type ?? "")) return "overloaded";
  if (status === 503 && /overloaded|slow down/i.test(text)) return "overloaded";
  if (status === 408 || status === 409 || status >= 500) return "server";
  return "bad_request";
}

/**
 * Classifies a failed HTTP response (or an in-stream error mapped to a status) into a
 * {@link ProviderError} with a one-line message, `request_id` and retry hints. The message is
 * the provider's own, plus the key variable for auth errors and the URL for a 404 that does not
 * name a model; a redirect (never followed) names where it points.
 *
 * `retryable` follows the SDK policy: never for quota, too-large or context overflow; else
 * `x-should-retry: true|false` when present; else 408, 409, 429 and ≥ 500.
 */
export function classifyHttpError(info: HttpErrorInfo): ProviderError {
  const { status, headers, bodyText = "" } = info;
  let parsed: unknown;
  try {
    parsed = bodyText ? JSON.parse(bodyText) : undefined;
  } catch {
    parsed = undefined;
  }
  const body = parseErrorBody(parsed);
  const firstLine = bodyText.trim() && parsed === undefined ? oneLine(bodyText) : "";
  let message = body.message ? oneLine(body.message) : firstLine || `HTTP ${status}`;
  // requests do not follow redirects (the key would go along to wherever they point)
  const location = status >= 300 && status < 400 ? headers?.get("location") : undefined;
  if (location) message = `the server redirects to ${location}${info.url ? ` from ${info.url}` : ""}: use the new address as the base URL`;
  const haystack = [body.message ?? bodyText, body.code ?? "", body.type ?? ""].join(" ");
  const kind = kindOf(status, haystack, body.type);
  const request_id = body.request_id ?? headers?.get("request-id") ?? headers?.get("x-request-id") ?? undefined;
  if (kind === "auth" && info.keyEnv) message += ` (check ${info.keyEnv})`;
  // a 404 that does not name a model is mostly a wrong base URL (one without `/v1`): show it
  if (kind === "not_found" && info.url && !/\bmodel\b/i.test(message)) message += ` (${info.url})`;
  if (request_id) message += ` [request_id ${request_id}]`;
  let retryable: boolean;
  if (NEVER_RETRY.has(kind)) retryable = false;
  else {
    const should = headers?.get("x-should-retry");
    if (should === "true") retryable = true;
    else if (should === "false") retryable = false;
    else retryable = status === 408 || status === 409 || status === 429 || status >= 500;
  }
  return new ProviderError({
    provider: info.provider,
    kind,
    message,
    status,
    retryable,
    retry_after_ms: parseRetryAfter(headers) ?? body.retry_after_ms,
    request_id,
  });
}

/**
 * Turns an error object that arrived inside a 200 stream into a {@link ProviderError}:
 * Anthropic `{type:"error", error:{type, message}}`, OpenAI `{error:{message, type, code}}`,
 * Ollama `{error:"text"}`, OpenRouter `{error:{code:<HTTP status>, message}}`. The status is the
 * one the error type stands for (overloaded_error → 529, rate_limit_error → 429, …;
 * WIRE-FORMATS §1.5), else a numeric code (OpenRouter), 500 when unknown. It is resent only
 * while no output was shown ({@link streamWithRetries}).
 */
export function streamError(provider: string, payload: unknown): ProviderError {
  const body = parseErrorBody(payload);
  const status =
    (body.type && ERROR_TYPE_STATUS[body.type]) ||
    (body.code && ERROR_TYPE_STATUS[body.code]) ||
    (typeof body.code === "string" && /^\d{3}$/.test(body.code) ? Number(body.code) : 500);
  return classifyHttpError({ provider, status, bodyText: JSON.stringify(payload) });
}

/**
 * A connection-level failure as one line naming the URL, and the proxy when the request went
 * through one (then the fix hint is the proxy's, not `hint`). A bad proxy variable (see
 * kernel/http-node.ts) is the variable's own line, not retryable.
 */
function networkError(provider: string, url: string, err: unknown, hint?: string): ProviderError {
  const cause = (err as { cause?: unknown })?.cause as { code?: string; message?: string; proxy?: string; badProxy?: boolean } | undefined;
  const detail = oneLine(cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)), 200);
  // a proxy variable that is not a URL: no retry mends it, and the base URL is not to blame
  if (cause?.badProxy) return new ProviderError({ provider, kind: "network", message: detail, retryable: false });
  const message = cause?.proxy
    ? `cannot reach ${url} through the proxy ${cause.proxy}: ${detail} (check the proxy, or list the host in NO_PROXY to go direct)`
    : `cannot reach ${url}: ${detail}${hint ? ` (${hint})` : ""}`;
  return new ProviderError({ provider, kind: "network", message, retryable: true });
}

/** The error for a stream that closed without its terminator (WIRE-FORMATS §0.1, §6.6). */
export function truncatedError(provider: string, expected: string): ProviderError {
  return new ProviderError({
    provider,
    kind: "truncated",
    message: `the response stream ended before ${expected}: the answer is incomplete`,
    retryable: true,
  });
}

/* ------------------------------------------------------------------------------------------ */
/* Requests with retries                                                                       */
/* ------------------------------------------------------------------------------------------ */

/** Test and tuning seams shared by every request. */
export interface HttpOptions {
  /** Retries after the first attempt (default 2, as the official SDKs). */
  maxRetries?: number;
  /** The fetch to use (default {@link nodeFetch}, which starts faster than the global one). */
  fetch?: typeof fetch;
  /** Waits `ms` milliseconds; rejects when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Random source for jitter, in [0, 1). */
  random?: () => number;
}

/** One JSON request (a POST unless `method` says otherwise). */
export interface PostJsonOptions extends HttpOptions {
  /** Provider name put on errors. */
  provider: string;
  url: string;
  /** `POST` (default) or `GET` (model probing: Ollama `/api/show`, LM Studio `/api/v0/models`). */
  method?: "POST" | "GET";
  headers?: Record<string, string>;
  /** Serialized with JSON.stringify; omitted (no body, no content-type) when undefined. */
  body?: unknown;
  signal?: AbortSignal;
  /** Seconds to wait for the response headers; ≤ 0 or undefined waits forever. */
  stallTimeout?: number;
  /** Variable holding the key, named in auth errors. */
  keyEnv?: string;
  /** Appended to connection errors, e.g. `set ANTHROPIC_BASE_URL or providers.x.base_url`. */
  hint?: string;
  /** Refines the shared classification (a provider's own codes). */
  classify?: (info: HttpErrorInfo, base: ProviderError) => ProviderError;
  /** Called before each retry wait. */
  onRetry?: (info: { attempt: number; delayMs: number; error: ProviderError }) => void;
}

/**
 * The request options an adapter derives from its resolved {@link ProviderConfig}: the provider
 * name, its headers (the adapter's own, then the configured `headers`, then the key under the
 * adapter's auth header), the stall timeout (the configured one, else the adapter's default, in
 * seconds), what to check on auth errors (the key variable, else `providers.<name>.api_key`) and
 * {@link endpointHint}. The result also serves as the {@link StreamReadOptions} of the response
 * body.
 */
export function providerRequest(
  config: ProviderConfig,
  http: HttpOptions,
  req: {
    url: string;
    body: unknown;
    signal?: AbortSignal;
    /** The adapter's headers (`accept`, a version header). */
    headers?: Record<string, string>;
    /** The header that carries the key; omitted when no key is configured. */
    auth?: (key: string) => Record<string, string>;
    /** Seconds, used when the config sets no `stall_timeout`. */
    stallTimeout: number;
    /** Replaces the endpoint hint (default: {@link endpointHint}). */
    hint?: string;
    classify?: PostJsonOptions["classify"];
  },
): PostJsonOptions & StreamReadOptions {
  return {
    ...http,
    provider: config.name,
    url: req.url,
    headers: { ...req.headers, ...config.headers, ...(config.api_key && req.auth ? req.auth(config.api_key) : {}) },
    body: req.body,
    signal: req.signal,
    stallTimeout: config.stall_timeout ?? req.stallTimeout,
    keyEnv: config.api_key_env ?? `providers.${config.name}.api_key`,
    hint: req.hint ?? endpointHint(config),
    classify: req.classify,
  };
}

/** Resolves after `ms` ms, or rejects with the abort reason. */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(t);
      reject(abortReason(signal!));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function stallError(provider: string, seconds: number, what: string): ProviderError {
  return new ProviderError({
    provider,
    kind: "stall",
    message: `no data for ${seconds} s ${what} (stall_timeout; raise it in providers.<name>.stall_timeout, negative waits forever)`,
    retryable: true,
  });
}

function stallMs(seconds: number | undefined): number | undefined {
  return seconds !== undefined && seconds > 0 ? seconds * 1000 : undefined;
}

/**
 * Sends a JSON request and returns the successful (2xx) response with its body unread, retrying
 * 408/409/429/5xx and connection errors before any byte of a successful body was seen
 * (so never after output reached the user). Yields a `notice` event before each wait, and
 * returns the response as the generator's value: `const res = yield* sendJson(opts)`.
 *
 * Delay: `retry-after-ms`, else `Retry-After` (seconds or HTTP date), else a body hint, else
 * {@link backoffDelay}. A server-requested wait over {@link MAX_RETRY_AFTER_MS} is not waited
 * out silently: the error is thrown with `retry_after_ms` set (a fallback may take over).
 *
 * @throws ProviderError (classified) when the final attempt fails; `kind: "network"` with a
 *   one-line message naming the URL when it cannot be reached; `kind: "stall"` when no
 *   response headers came within `stallTimeout`; the abort reason when `signal` aborts.
 */
export async function* sendJson(opts: PostJsonOptions): AsyncGenerator<StreamEvent, Response, void> {
  const maxRetries = opts.maxRetries ?? 2;
  const doFetch = opts.fetch ?? (nodeFetch as typeof fetch);
  const wait = opts.sleep ?? abortableSleep;
  const random = opts.random ?? Math.random;
  let protocol = "";
  try {
    protocol = new URL(opts.url).protocol;
  } catch {
    // reported below
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new ProviderError({
      provider: opts.provider,
      kind: "bad_request",
      message: `invalid base URL: "${opts.url}" is not an absolute http(s) URL${opts.hint ? ` (${opts.hint})` : ""}`,
    });
  }
  const method = opts.method ?? "POST";
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { accept: "application/json", ...(body !== undefined ? { "content-type": "application/json" } : {}), ...opts.headers };
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    const limit = stallMs(opts.stallTimeout);
    const stall = new AbortController();
    const timer = limit
      ? setTimeout(() => stall.abort(stallError(opts.provider, opts.stallTimeout!, "waiting for the response")), limit)
      : undefined;
    const signal = opts.signal ? AbortSignal.any([opts.signal, stall.signal]) : stall.signal;
    try {
      res = await doFetch(opts.url, { method, headers, body, signal });
    } catch (err) {
      if (opts.signal?.aborted) throw abortReason(opts.signal);
      if (err instanceof ProviderError) throw err;
      if (stall.signal.aborted) throw stall.signal.reason;
      const e = networkError(opts.provider, opts.url, err, opts.hint);
      if (attempt >= maxRetries || !e.retryable) throw e;
      const delayMs = backoffDelay(attempt, random);
      opts.onRetry?.({ attempt: attempt + 1, delayMs, error: e });
      yield retryNotice(e, delayMs, attempt + 1, maxRetries);
      await wait(delayMs, opts.signal);
      continue;
    } finally {
      if (timer) clearTimeout(timer);
    }
    if (res.ok) return res;
    const bodyText = await res.text().catch(() => "");
    const info: HttpErrorInfo = { provider: opts.provider, status: res.status, headers: res.headers, bodyText, keyEnv: opts.keyEnv, url: opts.url };
    let err = classifyHttpError(info);
    if (opts.classify) err = opts.classify(info, err);
    if (!err.retryable || NEVER_RETRY.has(err.kind) || attempt >= maxRetries) throw err;
    if (err.retry_after_ms !== undefined && err.retry_after_ms > MAX_RETRY_AFTER_MS) throw err;
    const delayMs = err.retry_after_ms ?? backoffDelay(attempt, random);
    opts.onRetry?.({ attempt: attempt + 1, delayMs, error: err });
    yield retryNotice(err, delayMs, attempt + 1, maxRetries);
    await wait(delayMs, opts.signal);
  }
}

function retryNotice(err: ProviderError, delayMs: number, attempt: number, max: number): StreamEvent {
  // without a status the kind alone ("network") hides what failed; the fix hint waits for the last attempt
  const what = err.status ? `HTTP ${err.status} ${err.kind.replace(/_/g, " ")}` : err.message.replace(/ \((?:check|is the server)[^)]*\)$/, "");
  return { type: "notice", text: `${err.provider}: ${what}; retrying in ${(delayMs / 1000).toFixed(1)} s (${attempt}/${max})` };
}

/** Events that show the answer: once one was yielded, a request is never sent again. */
const OUTPUT_EVENTS: ReadonlySet<StreamEvent["type"]> = new Set(["text_delta", "thinking_delta", "tool_use_start"]);

/**
 * Stream failures worth sending the request again for while nothing was shown: an in-stream
 * overload, rate limit or server error (Anthropic's `overloaded_error` event right after
 * `message_start`), a connection cut or a stream closed early. Not `stall`: stall_timeout seconds
 * were waited already.
 */
const RESEND_KINDS: ReadonlySet<ProviderErrorKind> = new Set(["overloaded", "rate_limit", "server", "network", "truncated"]);

/**
 * One model request with the retry policy carried into its stream: `send` opens it (its HTTP
 * retries are {@link sendJson}'s), `read` decodes the body. When `read` fails with a retryable
 * {@link ProviderError} of an overload, rate-limit, server, connection or truncation kind before
 * any output event (text, thinking or tool-use start; notices do not count), the request is sent
 * again, up to `maxRetries` (default 2) times, after a notice and a wait of the error's
 * `retry_after_ms` or {@link backoffDelay}. An error after output, any other error, an abort and
 * a requested wait over {@link MAX_RETRY_AFTER_MS} are thrown as they are (LARIK-REFERENCE
 * invariant 12: retry only before any output reached the user; WIRE-FORMATS §1.5: an in-stream
 * error type stands for the status it names, for retry decisions).
 * @throws what `send` and `read` throw, and the abort reason when `signal` aborts during a wait.
 */
export async function* streamWithRetries(
  send: () => AsyncGenerator<StreamEvent, Response, void>,
  read: (res: Response) => AsyncIterable<StreamEvent>,
  opts: HttpOptions & { provider: string; signal?: AbortSignal },
): AsyncGenerator<StreamEvent> {
  const maxRetries = opts.maxRetries ?? 2;
  const wait = opts.sleep ?? abortableSleep;
  for (let attempt = 0; ; attempt++) {
    const res = yield* send();
    let shown = false;
    try {
      for await (const ev of read(res)) {
        if (OUTPUT_EVENTS.has(ev.type)) shown = true;
        yield ev;
      }
      return;
    } catch (err) {
      if (shown || opts.signal?.aborted || attempt >= maxRetries) throw err;
      if (!(err instanceof ProviderError) || !err.retryable || !RESEND_KINDS.has(err.kind)) throw err;
      if (err.retry_after_ms !== undefined && err.retry_after_ms > MAX_RETRY_AFTER_MS) throw err;
      const delayMs = err.retry_after_ms ?? backoffDelay(attempt, opts.random);
      yield {
        type: "notice",
        text: `${err.provider}: the answer failed before any output (${err.kind.replace(/_/g, " ")}: ${oneLine(err.message, 120)}); sending the request again in ${(delayMs / 1000).toFixed(1)} s (${attempt + 1}/${maxRetries})`,
      };
      await wait(delayMs, opts.signal);
    }
  }
}

/**
 * {@link sendJson} without the notices: resolves to the successful response.
 * @throws as {@link sendJson}.
 */
export async function postJson(opts: PostJsonOptions): Promise<Response> {
  const gen = sendJson(opts);
  for (;;) {
    const r = await gen.next();
    if (r.done) return r.value;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Stream decoding                                                                             */
/* ------------------------------------------------------------------------------------------ */

/** How a response body is read. */
export interface StreamReadOptions {
  provider: string;
  /** Seconds of silence (no bytes at all; keep-alive comments count) before giving up; ≤ 0 or undefined waits forever. */
  stallTimeout?: number;
  signal?: AbortSignal;
  /** Named in the error when the connection drops mid-stream. */
  url?: string;
}

/**
 * Yields the body's byte chunks as they arrive, with the stall guard.
 * @throws ProviderError `stall` after `stallTimeout` seconds without a byte; `network` when the
 *   connection drops mid-body (not retried: output may have been shown); the abort reason.
 */
export async function* readChunks(res: Response, opts: StreamReadOptions): AsyncGenerator<Uint8Array> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const limit = stallMs(opts.stallTimeout);
  let finished = false;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const guards: Promise<never>[] = [];
      if (limit) {
        guards.push(
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(stallError(opts.provider, opts.stallTimeout!, "from the model")), limit);
          }),
        );
      }
      if (opts.signal) {
        const signal = opts.signal;
        if (signal.aborted) throw abortReason(signal);
        guards.push(
          new Promise<never>((_, reject) => {
            onAbort = () => reject(abortReason(signal));
            signal.addEventListener("abort", onAbort, { once: true });
          }),
        );
      }
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = guards.length ? await Promise.race([reader.read(), ...guards]) : await reader.read();
      } catch (err) {
        if (opts.signal?.aborted) throw abortReason(opts.signal);
        if (err instanceof ProviderError) throw err;
        const cause = (err as { cause?: { message?: string; code?: string } }).cause;
        const detail = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
        throw new ProviderError({
          provider: opts.provider,
          kind: "network",
          message: `connection lost mid-response${opts.url ? ` from ${opts.url}` : ""}: ${oneLine(detail, 200)}`,
          retryable: true,
        });
      } finally {
        if (timer) clearTimeout(timer);
        if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
      }
      if (r.done) {
        finished = true;
        return;
      }
      yield r.value;
    }
  } finally {
    if (!finished) reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
}

/** One server-sent event. `event` is undefined when the server sent no `event:` field. */
export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
}

/**
 * Decodes a `text/event-stream` body per the WHATWG algorithm (eventsource-parser 3) and yields,
 * for each network read, the events that read completed, in order (never an empty array): lines
 * end at CRLF, LF or CR, even when split across chunks; `:` comments are skipped; multi-line
 * `data:` is joined with `\n`; UTF-8 is decoded with a streaming decoder so a character split
 * between chunks survives. An event not closed by a blank line at EOF is dropped, as the spec
 * says; adapters detect truncation by their own terminator. A body with no event at all that is
 * not an event stream (a JSON error with status 200, a gateway's page) is reported as what it is.
 *
 * Batches exist for speed: a fast stream brings hundreds of events per read, and one async step
 * per read instead of one per event is most of what an adapter costs (bench/providers.mjs).
 * Feed them to {@link runStreamDecoder}.
 * @throws as {@link readChunks}; at the end of a body without events, the error a JSON error body
 *   stands for ({@link streamError}), or ProviderError `server` quoting a body that is no event
 *   stream.
 */
export async function* readSseBatches(res: Response, opts: StreamReadOptions): AsyncGenerator<SseEvent[]> {
  const { createParser } = await import("eventsource-parser");
  let batch: SseEvent[] = [];
  // the parser's messages already have the SseEvent shape: no copy per event
  const parser = createParser({ onEvent: (e) => void batch.push(e) });
  const decoder = new TextDecoder("utf-8");
  const streaming = { stream: true };
  let continues = false;
  // the body's start while no event has come, to explain a body that is no event stream at all
  let head: string | undefined = "";
  const feed = (text: string) => {
    if (head !== undefined && head.length < HEAD_CHARS) head += text;
    parser.feed(text);
  };
  for await (const chunk of readChunks(res, opts)) {
    // a short read (the usual one from a network) is decoded whole
    if (chunk.length <= PIECE_BYTES) feed(decoder.decode(chunk, streaming));
    else for (const piece of linePieces(chunk, continues)) feed(decoder.decode(piece, streaming));
    if (chunk.length) continues = chunk[chunk.length - 1] !== LF;
    if (batch.length) {
      head = undefined;
      const done = batch;
      batch = [];
      yield done;
    }
  }
  const rest = decoder.decode();
  if (rest) feed(rest);
  if (batch.length) {
    yield batch;
    return;
  }
  const notStream = head === undefined ? undefined : notAnEventStream(opts.provider, head);
  if (notStream) throw notStream;
}

/** How much of a body without events {@link readSseBatches} keeps to explain it (characters). */
const HEAD_CHARS = 65_536;

/**
 * The error for a 2xx body that held no event: a JSON error object (OpenRouter documents errors
 * "emitted in the response body" with status 200) as that error, other JSON or text (a gateway's
 * page, a server that ignored `stream: true`) as a `server` error quoting its start. Undefined
 * for an empty body or one that is an event stream without events (keep-alive comments only):
 * the adapter reports the missing terminator.
 */
function notAnEventStream(provider: string, text: string): ProviderError | undefined {
  const body = text.trim();
  if (!body) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const first = Array.isArray(parsed) ? parsed[0] : parsed;
  if (first && typeof first === "object" && "error" in first) return streamError(provider, parsed);
  if (parsed === undefined && /^(:|(data|event|id|retry)(:|$))/.test(body.split(/\r\n|\r|\n/, 1)[0]!)) return undefined;
  return new ProviderError({
    provider,
    kind: "server",
    message: `the server answered with ${parsed === undefined ? "text" : "JSON"} instead of an event stream: ${oneLine(body, 200)}`,
  });
}

/** Longest piece {@link linePieces} cuts, in bytes. */
const PIECE_BYTES = 16384;
const LF = 10;

/**
 * A read longer than {@link PIECE_BYTES} cut into pieces of at most that size that end right
 * after an LF where there is one; when the previous read ended inside a line (`continues`), the
 * first piece ends at the chunk's first LF. Where the cuts fall changes nothing in what is decoded (one streaming
 * TextDecoder sees the bytes in order, and the SSE parser and the NDJSON reader take any split);
 * it is for speed. A piece that ends a line leaves the parser no partial line, which it would
 * otherwise copy together with the whole next read; only the first piece continues a partial
 * line, and it is short. Small pieces also decode into strings that V8 keeps in its young
 * generation instead of its large-object space (over 128 KB, which a 64 KB read of non-Latin-1
 * text reaches).
 */
function linePieces(chunk: Uint8Array, continues: boolean): Uint8Array[] {
  const n = chunk.length;
  const pieces: Uint8Array[] = [];
  let start = 0;
  if (continues) {
    const first = chunk.indexOf(LF);
    if (first >= 0 && first < PIECE_BYTES && first < n - 1) {
      pieces.push(chunk.subarray(0, first + 1));
      start = first + 1;
    }
  }
  while (start < n) {
    let end = n;
    if (n - start > PIECE_BYTES) {
      const lf = chunk.lastIndexOf(LF, start + PIECE_BYTES - 1);
      end = lf >= start ? lf + 1 : start + PIECE_BYTES;
    }
    pieces.push(chunk.subarray(start, end));
    start = end;
  }
  return pieces;
}

/**
 * {@link readSseBatches} one event at a time, for callers that want no batches.
 * @throws as {@link readChunks}.
 */
export async function* readSse(res: Response, opts: StreamReadOptions): AsyncGenerator<SseEvent> {
  for await (const batch of readSseBatches(res, opts)) yield* batch;
}

/**
 * Decodes an `application/x-ndjson` body (Ollama) and yields, for each network read, the JSON
 * values of the lines that read completed, in order (never an empty array): one value per
 * LF-terminated line, CR and surrounding whitespace stripped, empty lines skipped. A final line
 * without LF is accepted when it parses. Values decoded before a bad line are yielded before the
 * error is thrown, so output already received is still shown.
 * @throws ProviderError `server` for a line that is not JSON, `truncated` for an unparsable
 *   partial last line, and as {@link readChunks}.
 */
export async function* readNdjsonBatches(res: Response, opts: StreamReadOptions): AsyncGenerator<unknown[]> {
  const decoder = new TextDecoder("utf-8");
  const streaming = { stream: true };
  let buf = "";
  for await (const chunk of readChunks(res, opts)) {
    const batch: unknown[] = [];
    let failure: ProviderError | undefined;
    for (const piece of chunk.length <= PIECE_BYTES ? [chunk] : linePieces(chunk, buf !== "")) {
      const text = decoder.decode(piece, streaming);
      buf = buf ? buf + text : text;
      let start = 0;
      let nl: number;
      // one slice per line and one per piece, instead of re-slicing the whole buffer per line
      while ((nl = buf.indexOf("\n", start)) >= 0) {
        const line = buf.slice(start, nl);
        start = nl + 1;
        if (!line) continue;
        const value = parseNdjsonLine(line);
        if (value === SKIP) continue;
        if (value === BAD) {
          failure = new ProviderError({ provider: opts.provider, kind: "server", message: `invalid JSON line in the response stream: ${oneLine(line, 120)}` });
          break;
        }
        batch.push(value);
      }
      if (failure) break;
      buf = start ? buf.slice(start) : buf;
    }
    if (batch.length) yield batch;
    if (failure) throw failure;
  }
  buf += decoder.decode();
  const last = buf.trim();
  if (last) {
    let value: unknown;
    try {
      value = JSON.parse(last);
    } catch {
      throw truncatedError(opts.provider, "its last line was complete");
    }
    yield [value];
  }
}

const SKIP: unique symbol = Symbol("blank line");
const BAD: unique symbol = Symbol("invalid line");

/**
 * One NDJSON line (without its LF) as a value, {@link SKIP} when blank, {@link BAD} when not JSON.
 * JSON.parse already allows the CR and the spaces around a value, so the common line is parsed as
 * it is; only a failure pays for `trim()`, whose wider notion of white space (NBSP, BOM…) the line
 * format has always accepted.
 */
function parseNdjsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    const t = line.trim();
    if (!t) return SKIP;
    try {
      return JSON.parse(t);
    } catch {
      return BAD;
    }
  }
}

/**
 * {@link readNdjsonBatches} one value at a time, for callers that want no batches.
 * @throws as {@link readNdjsonBatches}.
 */
export async function* readNdjson(res: Response, opts: StreamReadOptions): AsyncGenerator<unknown> {
  for await (const batch of readNdjsonBatches(res, opts)) yield* batch;
}

/** Pieces between two joins in {@link TextAccumulator}. */
const JOIN_EVERY = 256;

// Module-private hooks between StreamOutput and TextAccumulator: a delta's pieces are joined
// once, for the event and the accumulated text alike.
const OPEN = Symbol("open");
const SETTLE = Symbol("settle");

/** A text or thinking delta whose pieces are still being gathered (see {@link StreamOutput}). */
class PendingDelta {
  /** Set once `into` stopped taking these pieces as its end (it was read, appended to or set). */
  detached = false;

  constructor(
    readonly type: "text_delta" | "thinking_delta",
    readonly pieces: string[],
    readonly into: TextAccumulator | undefined,
  ) {}
}

/**
 * A string built from many small appends (a block's text from its deltas, a tool call's
 * arguments from their fragments). `a += piece` per delta would keep one rope node and one tiny
 * string per delta alive until the message is done; for a long answer that is hundreds of
 * thousands of objects the garbage collector copies again and again (a fifth of the decoding
 * time in bench/providers.mjs). Pieces are instead joined into flat strings every
 * {@link JOIN_EVERY} pieces, so they die young; text shown through {@link StreamOutput.delta}
 * is joined once per network read, for the event and the accumulator together.
 */
export class TextAccumulator {
  #text: string;
  readonly #parts: string[] = [];
  // the delta StreamOutput is gathering for this text right now: its pieces are part of the text
  #open: PendingDelta | undefined;

  /** `initial`: the text to start from (a block start's own text). */
  constructor(initial = "") {
    this.#text = initial;
  }

  /** Adds `piece` at the end. */
  append(piece: string): void {
    this.#close();
    this.#parts.push(piece);
    if (this.#parts.length >= JOIN_EVERY) this.#join();
  }

  /** Replaces the whole text (a final value that supersedes the streamed pieces). */
  set(text: string): void {
    if (this.#open) this.#open.detached = true;
    this.#open = undefined;
    this.#parts.length = 0;
    this.#text = text;
  }

  /** The text so far. */
  toString(): string {
    this.#close();
    if (this.#parts.length) this.#join();
    return this.#text;
  }

  #close(): void {
    const open = this.#open;
    if (!open) return;
    // the event joins its pieces again at the flush: rare (the text was read or appended to
    // before the end of the read)
    this.#parts.push(open.pieces.join(""));
    open.detached = true;
    this.#open = undefined;
  }

  #join(): void {
    this.#text += this.#parts.join("");
    this.#parts.length = 0;
  }

  /** StreamOutput starts gathering `delta`'s pieces for this text. */
  [OPEN](delta: PendingDelta): void {
    this.#close();
    this.#open = delta;
  }

  /** `delta`'s pieces were joined into `joined` for its event: take that string too. */
  [SETTLE](delta: PendingDelta, joined: string): void {
    if (this.#open !== delta) return;
    this.#open = undefined;
    if (this.#parts.length) this.#join();
    // one rope node per network read is cheap; joining these larger strings again is not (each
    // join allocates fresh pages for the whole text so far)
    this.#text += joined;
  }
}

/**
 * The events one step of a {@link StreamDecoder} produces, in order. Consecutive text (or
 * thinking) deltas of the same block are merged into one event: what {@link runStreamDecoder}
 * drains at once is what one network read brought, so the pieces arrived together and the user
 * sees the same text at the same moment, and hundreds of events per read become one for
 * everything downstream.
 */
export class StreamOutput {
  readonly #items: (StreamEvent | PendingDelta)[] = [];
  // the last item when it is a delta that may take more pieces
  #last: PendingDelta | undefined;

  /** How many events (merged deltas count once) are waiting. */
  get length(): number {
    return this.#items.length;
  }

  /** Adds a non-delta event (tool start, notice, done); it ends any delta being merged. */
  push(event: StreamEvent): void {
    this.#items.push(event);
    this.#last = undefined;
  }

  /**
   * Adds `text` as a delta of `type`, and to `into` (the block's text) when given: the deltas
   * shown are then exactly the text kept. Merged into the previous delta when that has the same
   * type and block. Empty text is dropped.
   */
  delta(type: "text_delta" | "thinking_delta", text: string, into?: TextAccumulator): void {
    if (!text) return;
    const last = this.#last;
    if (last !== undefined && last.type === type && last.into === into && !last.detached) {
      last.pieces.push(text);
      return;
    }
    const delta = new PendingDelta(type, [text], into);
    this.#items.push(delta);
    this.#last = delta;
    into?.[OPEN](delta);
  }

  /** Takes the waiting events, deltas joined. */
  drain(): StreamEvent[] {
    const items = this.#items;
    const events = new Array<StreamEvent>(items.length);
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (item instanceof PendingDelta) {
        const text = item.pieces.length === 1 ? item.pieces[0]! : item.pieces.join("");
        item.into?.[SETTLE](item, text);
        events[i] = { type: item.type, text };
      } else events[i] = item;
    }
    items.length = 0;
    this.#last = undefined;
    return events;
  }
}

/**
 * A provider's stream decoder as a synchronous state machine, driven by {@link runStreamDecoder}:
 * `T` is one wire item (an {@link SseEvent}, an NDJSON value).
 */
export interface StreamDecoder<T> {
  /**
   * Decodes one item, adding the events it means to `out`. Returns true at the stream's
   * terminator: nothing after it is read.
   * @throws ProviderError for an in-stream error or an invalid payload.
   */
  feed(item: T, out: StreamOutput): boolean;
  /**
   * The body ended before `feed` returned true: adds the closing events (a stream whose end is
   * its terminator, as Gemini's) or throws.
   * @throws ProviderError `truncated` when the terminator is missing.
   */
  end(out: StreamOutput): void;
}

/**
 * Runs `decoder` over `source` (batches from {@link readSseBatches}/{@link readNdjsonBatches}, or
 * single items; `T` must not itself be an array) and yields its events: those of a batch once the
 * batch is decoded, except that the stream's first event is yielded as soon as it exists, so the
 * first text is not held back behind the rest of its read. Events decoded before an error are
 * yielded before it is thrown. Returns after the terminator (the source is closed, which cancels
 * the body) or at the source's end after `decoder.end`.
 * @throws what `decoder.feed`/`decoder.end` throw, and what `source` throws.
 */
export async function* runStreamDecoder<T>(source: AsyncIterable<T | readonly T[]>, decoder: StreamDecoder<T>): AsyncGenerator<StreamEvent> {
  const out = new StreamOutput();
  let first = true;
  for await (const item of source) {
    const batch: readonly T[] = Array.isArray(item) ? item : [item as T];
    let i = 0;
    while (i < batch.length) {
      let finished = false;
      let failed = false;
      let failure: unknown;
      try {
        while (i < batch.length) {
          if (decoder.feed(batch[i++]!, out)) {
            finished = true;
            break;
          }
          if (first && out.length) break;
        }
      } catch (err) {
        failed = true;
        failure = err;
      }
      if (out.length) {
        first = false;
        const events = out.drain();
        for (let k = 0; k < events.length; k++) yield events[k]!;
      }
      if (failed) throw failure;
      if (finished) return;
    }
  }
  let failed = false;
  let failure: unknown;
  try {
    decoder.end(out);
  } catch (err) {
    failed = true;
    failure = err;
  }
  const events = out.drain();
  for (let k = 0; k < events.length; k++) yield events[k]!;
  if (failed) throw failure;
}

/**
 * Parses one stream payload as JSON (whitespace padding inside is fine).
 * @throws ProviderError `server` naming the bad payload.
 */
export function parseJsonEvent(provider: string, data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new ProviderError({ provider, kind: "server", message: `invalid JSON in the response stream: ${oneLine(data, 120)}` });
  }
}

/**
 * Parses streamed tool-call arguments once the call is complete. Empty text means `{}` (the
 * Anthropic first delta is usually `""`). The object encoded twice, as a JSON string holding
 * it (`"{\"path\": \"a.ts\"}"`, which some models and OpenAI-compatible servers send), is
 * taken as that object. Other text that is not a JSON object is kept verbatim in `raw_input`
 * with `input: {}`, so the loop can ask the model to resend the call.
 */
export function parseToolInput(raw: string): { input: unknown; raw_input?: string } {
  if (raw.trim() === "") return { input: {} };
  try {
    let v: unknown = JSON.parse(raw);
    if (typeof v === "string" && v.trimStart().startsWith("{")) v = JSON.parse(v);
    if (v && typeof v === "object" && !Array.isArray(v)) return { input: v };
  } catch {
    // fall through: truncated or malformed arguments
  }
  return { input: {}, raw_input: raw };
}

/** Joins a base URL and a path without doubling or dropping the slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/* ------------------------------------------------------------------------------------------ */
/* Tool-call text salvage                                                                      */
/* ------------------------------------------------------------------------------------------ */

const OPEN_TAG = "<tool_call>";
const CLOSE_TAG = "</tool_call>";

/** A tool call recovered from answer text. `input` is the parsed arguments object. */
export interface SalvagedCall {
  name: string;
  input: Record<string, unknown>;
}

let minted = 0;

/**
 * An id for a tool call whose API gave none (Gemini, Ollama, salvaged text calls):
 * `<prefix><ms since epoch, base 36>_<counter, base 36>`, unique within the process and unlikely
 * to meet a vendor's own ids. Adapters that must recognise their minted ids pass a prefix.
 */
export function mintToolCallId(prefix = "call_larik_"): string {
  return `${prefix}${Date.now().toString(36)}_${(minted++).toString(36)}`;
}

/** The notice shown once per response when a call was recovered from text (LARIK-REFERENCE §2). */
function salvageNotice(provider: string): string {
  return `${provider} sent a tool call as <tool_call> text instead of a real call; it was recovered. Fix the server's tool-call parsing (llama.cpp: --jinja; vLLM: --enable-auto-tool-choice --tool-call-parser <parser>).`;
}

/**
 * Recovers tool calls that a local server left in the answer text as
 * `<tool_call>{"name": …, "arguments": …}</tool_call>` (Hermes/Qwen templates without server-side
 * parsing; LARIK-REFERENCE §2 "Tool-call text salvage"). A call is recovered only when the markup
 * is closed, its JSON parses, and it names one of the offered tools; recovered markup is never
 * shown, even when the tags arrive split across deltas (a possible tag prefix is held back until
 * the next delta decides it). Anything else passes through as text.
 */
export class ToolCallSalvage {
  readonly #offered: ReadonlySet<string>;
  #held = "";
  #recovered = 0;

  /** `offered`: names of the tools in the request; with none, nothing is ever recovered. */
  constructor(offered: Iterable<string>) {
    this.#offered = new Set(offered);
  }

  /** Feeds one text delta; returns the text that is safe to show now and any recovered calls. */
  push(piece: string): { text: string; calls: SalvagedCall[] } {
    // Fast path: nothing held and no "<" means no tag can start or finish in this piece.
    if (this.#offered.size === 0 || (!this.#held && !piece.includes("<"))) return { text: piece, calls: [] };
    let buf = this.#held + piece;
    let text = "";
    const calls: SalvagedCall[] = [];
    for (;;) {
      const open = buf.indexOf(OPEN_TAG);
      if (open < 0) {
        const keep = partialTagSuffix(buf);
        text += buf.slice(0, buf.length - keep);
        this.#held = buf.slice(buf.length - keep);
        return { text, calls };
      }
      text += buf.slice(0, open);
      const close = buf.indexOf(CLOSE_TAG, open + OPEN_TAG.length);
      if (close < 0) {
        this.#held = buf.slice(open);
        return { text, calls };
      }
      const markup = buf.slice(open, close + CLOSE_TAG.length);
      const call = this.#parse(buf.slice(open + OPEN_TAG.length, close));
      if (call) calls.push(call);
      else text += markup;
      buf = buf.slice(close + CLOSE_TAG.length);
    }
  }

  /**
   * {@link push}, written to `out`: the safe text as a `text_delta` kept in `text`, each recovered
   * call as a `tool_use_start` under a minted id, after the notice ({@link salvageNotice}) that
   * goes before the first call recovered in this response. Returns the recovered calls with their
   * ids, for the assembled message.
   */
  feed(piece: string, out: StreamOutput, text: TextAccumulator, provider: string): (SalvagedCall & { id: string })[] {
    const r = this.push(piece);
    out.delta("text_delta", r.text, text);
    const calls = r.calls.map((c) => ({ id: mintToolCallId(), ...c }));
    for (const call of calls) {
      if (!this.#recovered++) out.push({ type: "notice", text: salvageNotice(provider) });
      out.push({ type: "tool_use_start", id: call.id, name: call.name });
    }
    return calls;
  }

  /** End of the answer: returns held text (an unclosed `<tool_call>` stays text). */
  end(): string {
    const rest = this.#held;
    this.#held = "";
    return rest;
  }

  #parse(inner: string): SalvagedCall | undefined {
    let v: unknown;
    try {
      v = JSON.parse(inner.trim());
    } catch {
      return undefined;
    }
    if (!v || typeof v !== "object") return undefined;
    const o = v as Record<string, unknown>;
    if (typeof o.name !== "string" || !this.#offered.has(o.name)) return undefined;
    let args = o.arguments ?? o.parameters ?? {};
    if (typeof args === "string") {
      try {
        args = JSON.parse(args);
      } catch {
        return undefined;
      }
    }
    if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
    return { name: o.name, input: args as Record<string, unknown> };
  }
}

/** Length of the longest suffix of `s` that is a proper prefix of `<tool_call>`. */
function partialTagSuffix(s: string): number {
  for (let n = Math.min(OPEN_TAG.length - 1, s.length); n > 0; n--) {
    if (OPEN_TAG.startsWith(s.slice(s.length - n))) return n;
  }
  return 0;
}
