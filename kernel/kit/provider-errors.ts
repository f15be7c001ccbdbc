/**
 * Provider errors: classifying a failed response or an in-stream error into a
 * {@link ProviderError} (kind, `retryable`, `retry_after_ms`, `request_id`), the one-line
 * messages for connection failures, stalls and truncated streams, and the parse of every
 * provider's error body envelope.
 *
 * Sources: WIRE-FORMATS.md §0.3 (which errors the official SDKs retry), §0.4 (overflow
 * patterns), §1.5 (Anthropic in-stream error types), §1.7, §2.6, §3.4, §4.5 and §5.7 (each API's
 * error envelope), §6.16 (429s that no retry fixes).
 */
import { ProviderError, type ProviderErrorKind } from "../types.js";

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
export const NEVER_RETRY: ReadonlySet<ProviderErrorKind> = new Set(["quota", "too_large", "context_overflow"]);

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
  /**
   * What to fix when such a 404 comes, put after the URL: the adapter's word on its base URL
   * (`/chat/completions is appended to the base URL …`).
   */
  notFoundHint?: string;
  /**
   * The model requested (the request's own id, without the provider prefix). A 404 whose message
   * names it, or names a model at all, says the model was not found and how to pick another.
   */
  model?: string;
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
 * `{error:{code,message,status,details}}` (Gemini, possibly wrapped in an array),
 * `{error:"text"}` (Ollama) and `{detail:"text"}` (FastAPI servers). Returns `{}` for anything else.
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
  } else if (typeof b.detail === "string") {
    // FastAPI's error body (LiteLLM, vLLM's router, many proxies): `{"detail":"Not Found"}`
    out.message = b.detail;
  } else if (b.message && typeof b.message === "object") {
    // Mistral puts pydantic's validation detail object here
    out.message = JSON.stringify(b.message);
  }
  if (!out.type && typeof b.type === "string" && b.type !== "error") out.type = b.type;
  return out;
}

/**
 * `s` with its whitespace runs (newlines included) made single spaces, cut to `max` characters
 * with an ellipsis: a quote of a body or message that fits in a one-line error.
 */
export function singleLineExcerpt(s: string, max = 300): string {
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
 * The message of a 404 that names the requested model: that the model was not found, the
 * provider's own words (`detail`), and where to pick another (`--model`, the `model` setting).
 * The provider and status are not repeated: errorText (kernel/kit/one-line.ts) puts them in front.
 */
function modelNotFoundMessage(provider: string, model: string, detail: string): string {
  return `model "${model}" not found (${detail}): pick another with --model ${provider}/<model> or the model setting`;
}

/**
 * Classifies a failed HTTP response (or an in-stream error mapped to a status) into a
 * {@link ProviderError} with a one-line message, `request_id` and retry hints. The message is
 * the provider's own, plus the key variable for auth errors, for a 404 that names the requested
 * `model` that it was not found and how to pick another, the URL (and `notFoundHint`) for a
 * 404 that does not name a model, and what usually makes a request too large (HTTP 413); a
 * redirect (never followed) names where it points.
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
  const firstLine = bodyText.trim() && parsed === undefined ? singleLineExcerpt(bodyText) : "";
  let message = body.message ? singleLineExcerpt(body.message) : firstLine || `HTTP ${status}`;
  // requests do not follow redirects (the key would go along to wherever they point)
  const location = status >= 300 && status < 400 ? headers?.get("location") : undefined;
  if (location) message = `the server redirects to ${location}${info.url ? ` from ${info.url}` : ""}: use the new address as the base URL`;
  const haystack = [body.message ?? bodyText, body.code ?? "", body.type ?? ""].join(" ");
  const kind = kindOf(status, haystack, body.type);
  const request_id = body.request_id ?? headers?.get("request-id") ?? headers?.get("x-request-id") ?? undefined;
  if (kind === "auth" && info.keyEnv) message += ` (check ${info.keyEnv})`;
  // the same request fails the same way (never retried), and the message (Anthropic: "Request
  // exceeds the maximum allowed number of bytes", a proxy's "413 Request Entity Too Large") does
  // not say what made it big or what to do
  if (kind === "too_large") message += " (the request is larger than the server takes, mostly because of images or long tool output in the conversation: /clear or a new session starts a smaller one)";
  // OpenAI "The model `x` does not exist…", Anthropic "model: x", Gemini "models/x is not found…"
  const namesModel = /\bmodels?\b/i.test(message) || (!!info.model && message.includes(info.model));
  // the provider's words on an unknown model say nothing of where the model was chosen
  if (kind === "not_found" && namesModel && info.model) message = modelNotFoundMessage(info.provider, info.model, message);
  // a 404 that does not name a model is mostly a wrong base URL (one without `/v1`): show it
  else if (kind === "not_found" && info.url && !namesModel) message += ` (${info.url}${info.notFoundHint ? `: ${info.notFoundHint}` : ""})`;
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
 * kernel/kit/http-node.ts) is the variable's own line, not retryable. A refused connection
 * (ECONNREFUSED: nothing listens on that port) adds "is the server running?" unless `hint`
 * already asks something.
 * @param hint what to check; false for the bare line, with no hint at all (a retry notice's)
 */
export function networkError(provider: string, url: string, err: unknown, hint?: string | false): ProviderError {
  const cause = (err as { cause?: unknown })?.cause as { code?: string; message?: string; proxy?: string; badProxy?: boolean } | undefined;
  const detail = singleLineExcerpt(cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err)), 200);
  // a proxy variable that is not a URL: no retry mends it, and the base URL is not to blame
  if (cause?.badProxy) return new ProviderError({ provider, kind: "network", message: detail, retryable: false });
  // A host name that does not resolve (getaddrinfo's EAI_NONAME, which Node calls ENOTFOUND) is a
  // mistyped URL, which no retry mends; EAI_AGAIN, a resolver that did not answer, is retried.
  const noSuchHost = cause?.code === "ENOTFOUND";
  const what = noSuchHost ? `${detail}, no such host name` : detail;
  // a local model server that is not started is the common case; a provider's own hint may ask
  // it better ("is Ollama running?")
  const fixHint =
    hint === false ? undefined
    : cause?.proxy ? "check the proxy, or list the host in NO_PROXY to go direct"
    : cause?.code === "ECONNREFUSED" && !hint?.includes("?") ? [hint, "is the server running?"].filter(Boolean).join("; ")
    : hint;
  const where = cause?.proxy ? `${url} through the proxy ${cause.proxy}` : url;
  const message = `cannot reach ${where}: ${what}${fixHint ? ` (${fixHint})` : ""}`;
  return new ProviderError({ provider, kind: "network", message, retryable: !noSuchHost });
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

/** The error for `seconds` without data (the stall guard, LARIK-REFERENCE §10); `what` says what was awaited. */
export function stallError(provider: string, seconds: number, what: string): ProviderError {
  return new ProviderError({
    provider,
    kind: "stall",
    message: `no data for ${seconds} s ${what} (stall_timeout; raise it in providers.<name>.stall_timeout, negative waits forever)`,
    retryable: true,
  });
}
