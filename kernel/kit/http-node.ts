/**
 * A `fetch` for provider requests built on `node:http`/`node:https`. Node 20's global fetch
 * loads its bundled undici on first use, which costs ~30 ms of start-up before the first model
 * request; `node:http` costs a fifth of that (bench/startup.mjs measures start-up). It
 * implements the subset the provider layer uses: method, headers, a string body and an
 * AbortSignal in; `ok`, `status`, `headers.get`, a body with `getReader()` (not a whole web
 * `ReadableStream`), `text()` and `json()` out.
 * Connection failures reject like fetch does: a TypeError whose `cause` carries the system
 * error (`ECONNREFUSED`, ...). With HTTPS_PROXY or HTTP_PROXY set, requests go through that
 * proxy (NO_PROXY honoured) by undici instead, except to this machine's own loopback addresses.
 */
import type { IncomingMessage } from "node:http";
import { startupMark } from "./startup-probe.js";

// getBuiltinModule at the first request, not an import: node:https (TLS) costs ~3 ms to load and
// a plain-http local server never needs it, and an ES import of a built-in builds a facade of
// all its exports.
const transport = (protocol: string): typeof import("node:http") =>
  process.getBuiltinModule(protocol === "https:" ? "node:https" : "node:http") as typeof import("node:http");

/** The part of `RequestInit` that {@link nodeFetch} honours. */
export interface NodeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

class MinimalHeaders {
  constructor(private readonly raw: IncomingMessage["headers"]) {}
  get(name: string): string | null {
    const v = this.raw[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(", ") : v;
  }
  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }
}

/**
 * The part of a web `ReadableStreamDefaultReader` that `readChunks` (http.ts) uses, over the
 * `IncomingMessage`. `cancel()` destroys the response, and with it the socket, even while a
 * `read()` waits: an async iterator's `return()` would wait for that read, which never settles
 * when the stream stalls.
 */
class MessageReader {
  readonly #res: IncomingMessage;
  readonly #chunks: AsyncIterator<Uint8Array>;
  constructor(res: IncomingMessage) {
    this.#res = res;
    this.#chunks = res[Symbol.asyncIterator]();
  }
  read(): Promise<IteratorResult<Uint8Array, undefined>> {
    return this.#chunks.next();
  }
  async cancel(): Promise<void> {
    this.#res.destroy();
  }
  releaseLock(): void {}
}

class MinimalResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: MinimalHeaders;
  /**
   * `getReader()` only, the part of a web `ReadableStream` the provider layer reads. Node's
   * `Readable.toWeb` would load its web streams, ~8 ms at the first response of every run.
   */
  readonly body: { getReader(): MessageReader };
  constructor(res: IncomingMessage) {
    this.status = res.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = new MinimalHeaders(res.headers);
    this.body = { getReader: () => new MessageReader(res) };
  }
  async text(): Promise<string> {
    const reader = this.body.getReader();
    const chunks: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    return Buffer.concat(chunks).toString("utf8");
  }
  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

/**
 * Sends one request; resolves when the response headers arrive (the body streams after).
 * @throws TypeError("fetch failed") with the socket error as `cause`; the abort reason when
 *   `init.signal` aborts.
 */
export function nodeFetch(url: string, init: NodeFetchInit = {}): Promise<Response> {
  const u = new URL(url);
  if (proxyConfigured(process.env) && !isLoopbackHost(u.hostname)) return proxiedFetch(url, init);
  return new Promise((resolve, reject) => {
    const send = transport(u.protocol).request;
    startupMark("http loaded");
    const headers = { ...init.headers };
    if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
    const signal = init.signal;
    if (signal?.aborted) return reject(signal.reason);
    const req = send(u, { method: init.method ?? "GET", headers });
    const onAbort = () => {
      req.destroy(signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason)));
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("response", (res) => {
      // an abort after the headers ends the body stream, which the reader reports
      res.on("close", () => signal?.removeEventListener("abort", onAbort));
      resolve(new MinimalResponse(res) as unknown as Response);
    });
    req.on("error", (err) => {
      if (signal?.aborted) return reject(signal.reason);
      reject(Object.assign(new TypeError("fetch failed"), { cause: err }));
    });
    req.end(init.body);
    startupMark("request queued");
  });
}

/** The variables curl, Claude Code and undici read for a proxy (either case). */
const PROXY_VARS = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"];

/** True when `env` names an HTTP(S) proxy (HTTPS_PROXY, HTTP_PROXY, either case). */
function proxyConfigured(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARS.some((v) => !!env[v]);
}

/**
 * True for a host name that means this machine: `localhost`, `*.localhost`, 127.0.0.0/8 and
 * `[::1]` (as `URL.hostname` spells them). A proxy cannot reach the loopback of the machine that
 * asked (its own is another one), so a local model server (llama.cpp, Ollama, LM Studio) is
 * always asked directly, whatever NO_PROXY says; Go's `ProxyFromEnvironment` does the same.
 */
function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost") || h === "[::1]" || /^127(\.\d{1,3}){3}$/.test(h);
}

let proxyAgent: { key: string; made: Promise<{ fetch: typeof import("undici").fetch; agent: import("undici").Dispatcher }> } | undefined;

/**
 * The proxy variables' values as undici needs them: curl takes `proxy.corp:3128` for
 * `http://proxy.corp:3128`, and so does Larik.
 * @throws TypeError naming the variable when a value is not a URL even then.
 */
function proxyOptions(env: NodeJS.ProcessEnv): { httpProxy?: string; httpsProxy?: string; noProxy?: string } {
  const pick = (...names: string[]) => {
    const name = names.find((n) => env[n]);
    if (!name) return undefined;
    const raw = env[name]!.trim();
    const value = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw Object.assign(new TypeError("bad proxy"), { cause: { code: `${name}=${redactProxy(raw)} is not a proxy URL: write it as http://host:port`, badProxy: true } });
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw Object.assign(new TypeError("bad proxy"), { cause: { code: `${name}=${redactProxy(raw)}: only http:// and https:// proxies are supported`, badProxy: true } });
    }
    return value;
  };
  const httpProxy = pick("HTTP_PROXY", "http_proxy");
  return { httpProxy, httpsProxy: pick("HTTPS_PROXY", "https_proxy") ?? httpProxy, noProxy: env.NO_PROXY ?? env.no_proxy };
}

/**
 * The proxy variable that applies to `url` and its value, as undici picks it (for messages), its
 * user and password (`http://user:secret@proxy:3128`) shown as `***`: errors reach the terminal,
 * CI logs and the session.
 */
function proxyFor(url: URL, env: NodeJS.ProcessEnv): string {
  const names = url.protocol === "https:" ? ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] : ["HTTP_PROXY", "http_proxy"];
  const name = names.find((n) => env[n]);
  return name ? `${name}=${redactProxy(env[name]!)}` : "the proxy";
}

/** A proxy value with its user and password (`user:secret@`) as `***@`. */
function redactProxy(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/@]*@/i, "$1***@");
}

/**
 * {@link nodeFetch} through the proxy the environment names (HTTPS_PROXY / HTTP_PROXY, either
 * case, a value without a scheme taken as http:// as curl does; NO_PROXY honoured), by undici's
 * `EnvHttpProxyAgent`, tunnelling with CONNECT. Loaded only when a proxy is set, so a run without
 * one pays nothing for it; made again when those variables change.
 * @throws TypeError("fetch failed") whose cause's `code` names the proxy (and `proxy` is set),
 *   a bad proxy value naming its variable, or the abort reason.
 */
async function proxiedFetch(url: string, init: NodeFetchInit): Promise<Response> {
  const env = process.env;
  const key = [...PROXY_VARS, "NO_PROXY", "no_proxy"].map((v) => env[v] ?? "").join("\0");
  if (proxyAgent?.key !== key) {
    const options = proxyOptions(env);
    proxyAgent = { key, made: import("undici").then((u) => ({ fetch: u.fetch, agent: new u.EnvHttpProxyAgent(options) })) };
  }
  const { fetch, agent } = await proxyAgent.made;
  try {
    return (await fetch(url, { method: init.method ?? "GET", headers: init.headers, body: init.body, signal: init.signal, dispatcher: agent })) as unknown as Response;
  } catch (err) {
    if (init.signal?.aborted) throw init.signal.reason;
    // "ECONNREFUSED" alone would send the user to check the provider's URL, not the proxy
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const what = cause?.code ?? cause?.message ?? (err as Error).message;
    throw Object.assign(new TypeError("fetch failed"), { cause: { code: what, proxy: proxyFor(new URL(url), env) } });
  }
}
