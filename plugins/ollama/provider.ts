/**
 * The Ollama native `/api/chat` adapter (WIRE-FORMATS §5) with the model prober of
 * kernel/types.ts `Provider`. Loaded lazily by the factory in index.ts.
 */
import {
  endpointHint,
  providerRequest,
  joinUrl,
  ProviderError,
  readNdjsonBatches,
  sendJson,
  type HttpErrorInfo,
  type HttpOptions,
  type ModelRequest,
  type Provider,
  type ProviderConfig,
  type StreamEvent,
} from "../../kernel/index.js";
import { decodeOllamaStream } from "./decode.js";
import { loadedContext, showModel, type ProbeOptions, type ShowInfo } from "./probe.js";
import { buildOllamaBody, DEFAULT_NUM_CTX, thinkValue } from "./request.js";

/** Used when neither config nor `OLLAMA_HOST` gives a base URL. */
const OLLAMA_BASE_URL = "http://localhost:11434";

/**
 * The server root from `OLLAMA_HOST`-style values, as the Ollama CLI reads them: a missing
 * scheme means `http://`, a missing port 11434 (`0.0.0.0` → `http://0.0.0.0:11434`).
 */
export function ollamaBaseUrl(raw: string | undefined): string {
  let s = (raw ?? "").trim();
  if (!s) return OLLAMA_BASE_URL;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) s = `http://${s}`;
  try {
    const u = new URL(s);
    if (!u.port && u.protocol === "http:" && !/^https?:\/\/[^/]*:\d+/i.test(s)) u.port = "11434";
    return u.toString().replace(/\/+$/, "");
  } catch {
    return s;
  }
}

export class OllamaProvider implements Provider {
  readonly name: string;
  readonly #config: ProviderConfig;
  readonly #opts: HttpOptions;
  readonly #base: string;
  readonly #shown = new Map<string, Promise<ShowInfo | undefined>>();

  /** `config.name` is `ollama` or a custom `providers.<name>` of type `ollama`. */
  constructor(config: ProviderConfig, opts: HttpOptions = {}) {
    this.name = config.name;
    this.#config = config;
    this.#opts = opts;
    this.#base = ollamaBaseUrl(config.base_url);
  }

  #headers(): Record<string, string> {
    const h: Record<string, string> = { ...this.#config.headers };
    if (this.#config.api_key) h.authorization = `Bearer ${this.#config.api_key}`;
    return h;
  }

  #probe(signal?: AbortSignal): ProbeOptions {
    return { ...this.#opts, provider: this.name, base: this.#base, headers: this.#headers(), signal };
  }

  /** `/api/show` once per model; a server that cannot be reached is asked again next time. */
  #show(model: string, signal?: AbortSignal): Promise<ShowInfo | undefined> {
    let p = this.#shown.get(model);
    if (!p) {
      p = showModel(model, this.#probe(signal)).catch((err: unknown) => {
        this.#shown.delete(model);
        if (err instanceof ProviderError && err.kind === "network") return undefined;
        throw err;
      });
      this.#shown.set(model, p);
    }
    return p;
  }

  /** `num_ctx` to send: `context_length` or 32 768, capped at the model's trained maximum. */
  async #numCtx(model: string, signal?: AbortSignal): Promise<number> {
    const want = this.#config.context_length ?? DEFAULT_NUM_CTX;
    const max = (await this.#show(model, signal))?.contextLength;
    return max ? Math.min(want, max) : want;
  }

  /** The window the loaded model has (`/api/ps`), else the `num_ctx` requests will ask for (tokens). */
  async contextWindow(model: string): Promise<number | undefined> {
    return (await loadedContext(model, this.#probe())) ?? (await this.#numCtx(model));
  }

  /** Whether `/api/show` lists the `tools` capability; undefined when the server does not say. */
  async supportsTools(model: string): Promise<boolean | undefined> {
    const caps = (await this.#show(model))?.capabilities;
    return caps ? caps.includes("tools") : undefined;
  }

  /**
   * Streams `POST {host}/api/chat` (NDJSON). Asks `/api/show` first (once per model) for the
   * context cap, tool and thinking capabilities.
   * @throws ProviderError `capability` before sending when tools are offered to a model without
   *   them; `context_overflow` for "the input length exceeds the context length"; in-stream
   *   `{"error"}` lines; stalls (default 900 s) and truncated streams.
   */
  async *stream(req: ModelRequest): AsyncGenerator<StreamEvent> {
    const show = await this.#show(req.model, req.signal);
    const numCtx = await this.#numCtx(req.model, req.signal);
    if (req.tools.length && show?.capabilities && !show.capabilities.includes("tools")) {
      throw new ProviderError({
        provider: this.name,
        kind: "capability",
        message: `${req.model} does not support tools (ollama show ${req.model} lists its capabilities): pick a model that can call tools`,
      });
    }
    const url = joinUrl(this.#base, "api/chat");
    const body = buildOllamaBody(req, { provider: this.name, numCtx, think: thinkValue(req.model, req.effort, show?.capabilities) });
    const name = this.name;
    const post = providerRequest(this.#config, this.#opts, {
      url,
      body,
      signal: req.signal,
      headers: { accept: "application/x-ndjson" },
      auth: (key) => ({ authorization: `Bearer ${key}` }),
      stallTimeout: 900,
      hint: `is Ollama running? ${endpointHint(this.#config)}`,
      classify: (_info: HttpErrorInfo, base: ProviderError) => {
        let extra = "";
        if (base.kind === "capability") extra = " (pick a model that can call tools)";
        else if (base.kind === "context_overflow") extra = ` (num_ctx ${numCtx}; raise providers.${name}.context_length or compact)`;
        else if (base.kind === "not_found") extra = ` (ollama pull ${req.model})`;
        return extra
          ? new ProviderError({ provider: base.provider, kind: base.kind, status: base.status, retryable: base.retryable, retry_after_ms: base.retry_after_ms, request_id: base.request_id, message: base.message + extra })
          : base;
      },
    });
    const lines = readNdjsonBatches(yield* sendJson(post), post);
    yield* decodeOllamaStream(lines, { provider: this.name, model: req.model, tools: req.tools.map((t) => t.name), numCtx });
  }
}
