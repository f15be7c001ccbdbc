/**
 * Provider requests with retries: a JSON request with the official SDKs' retry policy
 * (backoff with jitter, or the server's `Retry-After`, which kernel/kit/provider-errors.ts reads into
 * the error's `retry_after_ms`; a stall guard on the response headers), and
 * {@link streamWithRetries}, which sends a model request again when its stream fails before any
 * output. Every adapter (Anthropic, Chat Completions, Responses, Gemini, Ollama) builds on these
 * so retries behave the same everywhere; kernel/kit/http-node.ts sends the request itself.
 *
 * Sources: WIRE-FORMATS.md §0.3 (retries); anthropic-sdk-typescript `src/client.ts` and
 * openai-python `_base_client.py` (retry policy); LARIK-REFERENCE §10 (no retry once output is
 * shown; stall guard).
 */
import { nodeFetch } from "./http-node.js";
import { classifyHttpError, type HttpErrorInfo, NEVER_RETRY, networkError, singleLineExcerpt, stallError } from "./provider-errors.js";
import { endpointHint, type ProviderConfig } from "../registries.js";
import { abortReason, stallMs, type StreamReadOptions } from "./stream-read.js";
import { ProviderError, type ProviderErrorKind, type StreamEvent } from "../types.js";

/** Longest server-requested wait that is honoured silently (ms); longer waits are surfaced. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Exponential backoff with jitter, as the Stainless SDKs compute it: 0.5 s × 2^attempt capped at
 * 8 s, minus up to 25 % jitter. `attempt` counts retries already made (0 for the first). In ms.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  return Math.min(500 * 2 ** attempt, 8000) * (1 - random() * 0.25);
}

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
  /**
   * Appended to connection errors, e.g. `set ANTHROPIC_BASE_URL or providers.x.base_url`. A refused
   * connection adds "is the server running?" to it, unless the hint asks a question of its own
   * (Ollama's "is Ollama running? …"; see {@link networkError}).
   */
  hint?: string;
  /** Said after the URL of a 404 that names no model: how the adapter builds URLs from the base URL. */
  notFoundHint?: string;
  /** The model requested, named in a 404 that names it (see `HttpErrorInfo.model`). */
  model?: string;
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
    /** Replaces the endpoint hint (default: {@link endpointHint}); see {@link PostJsonOptions.hint}. */
    hint?: string;
    /** See {@link PostJsonOptions.notFoundHint}. */
    notFoundHint?: string;
    /** The request's model id, for a 404 that names it (see {@link PostJsonOptions.model}). */
    model?: string;
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
    notFoundHint: req.notFoundHint,
    model: req.model,
    classify: req.classify,
  };
}

/** Joins a base URL and a path without doubling or dropping the slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/**
 * True when the base URL's path has an API version segment (`/v1`, `/v1beta`, `/api/v2/`…).
 * OpenAI-style SDKs append only the endpoint (`/chat/completions`, `/responses`) to the base URL,
 * so a 404 from a base URL without one usually means the version path is missing. A string that
 * is no URL gives false (the request itself reports it).
 */
export function hasVersionPath(base: string): boolean {
  try {
    return /\/v\d+[a-z0-9]*(\/|$)/i.test(new URL(base).pathname);
  } catch {
    return false;
  }
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
      // the fix hint waits for the last attempt
      yield retryNotice(e.provider, networkError(opts.provider, opts.url, err, false).message, delayMs, attempt + 1, maxRetries);
      await wait(delayMs, opts.signal);
      continue;
    } finally {
      if (timer) clearTimeout(timer);
    }
    if (res.ok) return res;
    const bodyText = await res.text().catch(() => "");
    const info: HttpErrorInfo = { provider: opts.provider, status: res.status, headers: res.headers, bodyText, keyEnv: opts.keyEnv, url: opts.url, notFoundHint: opts.notFoundHint, model: opts.model };
    let err = classifyHttpError(info);
    if (opts.classify) err = opts.classify(info, err);
    if (!err.retryable || NEVER_RETRY.has(err.kind) || attempt >= maxRetries) throw err;
    if (err.retry_after_ms !== undefined && err.retry_after_ms > MAX_RETRY_AFTER_MS) throw longWait(err, err.retry_after_ms);
    const delayMs = err.retry_after_ms ?? backoffDelay(attempt, random);
    opts.onRetry?.({ attempt: attempt + 1, delayMs, error: err });
    yield retryNotice(err.provider, `HTTP ${err.status} ${RETRY_WORDS[err.kind] ?? err.kind.replace(/_/g, " ")}`, delayMs, attempt + 1, maxRetries);
    await wait(delayMs, opts.signal);
  }
}

/** How a retry notice names an HTTP error's kind where the kind's name alone reads oddly ("HTTP 500 server"). */
const RETRY_WORDS: Partial<Record<ProviderErrorKind, string>> = { server: "server error", rate_limit: "rate limited" };

/**
 * `err` with the wait the server asked for, which Larik does not sit out, in its message: "HTTP
 * 429: slow down" alone does not say that trying again in a minute is no use.
 */
function longWait(err: ProviderError, ms: number): ProviderError {
  const s = Math.ceil(ms / 1000);
  const wait = s < 120 ? `${s} s` : s < 7200 ? `${Math.ceil(s / 60)} min` : `${Math.ceil(s / 3600)} h`;
  return new ProviderError({
    provider: err.provider,
    kind: err.kind,
    message: `${err.message} (the server asks to wait ${wait} before the next request; try again then)`,
    status: err.status,
    retryable: err.retryable,
    retry_after_ms: err.retry_after_ms,
    request_id: err.request_id,
  });
}

function retryNotice(provider: string, what: string, delayMs: number, attempt: number, max: number): StreamEvent {
  return { type: "notice", text: `${provider}: ${what}; retrying in ${(delayMs / 1000).toFixed(1)} s (${attempt}/${max})` };
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
      if (err.retry_after_ms !== undefined && err.retry_after_ms > MAX_RETRY_AFTER_MS) throw longWait(err, err.retry_after_ms);
      const delayMs = err.retry_after_ms ?? backoffDelay(attempt, opts.random);
      yield {
        type: "notice",
        text: `${err.provider}: the answer failed before any output (${err.kind.replace(/_/g, " ")}: ${singleLineExcerpt(err.message, 120)}); sending the request again in ${(delayMs / 1000).toFixed(1)} s (${attempt + 1}/${maxRetries})`,
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
