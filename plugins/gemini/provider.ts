/**
 * The Gemini API adapter (`streamGenerateContent?alt=sse`, WIRE-FORMATS §4). Loaded lazily by
 * the factory in index.ts, so registering the plugin costs nothing.
 */
import {
  providerRequest,
  joinUrl,
  ProviderError,
  readSseBatches,
  sendJson,
  type HttpErrorInfo,
  type HttpOptions,
  type ModelRequest,
  type Provider,
  type ProviderConfig,
  type StreamEvent,
} from "../../kernel/index.js";
import { decodeGeminiStream } from "./decode.js";
import { buildGeminiBody } from "./request.js";

/** Used when neither config nor `GOOGLE_GEMINI_BASE_URL` gives a base URL. */
const GEMINI_BASE_URL = "https://generativelanguage.googleapis.com";

/**
 * The stream URL. The base is the API root (`https://generativelanguage.googleapis.com`, as
 * `GOOGLE_GEMINI_BASE_URL` is in Google's own tools); a base that already ends in a version
 * (`…/v1beta`, `…/v1`) is used as is.
 */
export function streamUrl(base: string, model: string): string {
  const id = model.replace(/^models\//, "").split("/").map(encodeURIComponent).join("/");
  const root = /\/v1(alpha|beta\d*)?\/*$/.test(base) ? base : joinUrl(base, "v1beta");
  return joinUrl(root, `models/${id}:streamGenerateContent?alt=sse`);
}

/**
 * Gemini answers a bad key with 400 INVALID_ARGUMENT (`API key not valid`, reason
 * `API_KEY_INVALID`), which the shared classifier would call a bad request.
 */
function classify(info: HttpErrorInfo, base: ProviderError): ProviderError {
  if (base.kind === "bad_request" && /API key not valid|API_KEY_INVALID/i.test(info.bodyText ?? "")) {
    return new ProviderError({
      provider: info.provider,
      kind: "auth",
      status: info.status,
      message: `${base.message}${info.keyEnv ? ` (check ${info.keyEnv})` : ""}`,
      request_id: base.request_id,
    });
  }
  return base;
}

export class GeminiProvider implements Provider {
  readonly name: string;
  readonly #config: ProviderConfig;
  readonly #opts: HttpOptions;

  /** `config.name` is `gemini` or a custom `providers.<name>` of type `gemini`. */
  constructor(config: ProviderConfig, opts: HttpOptions = {}) {
    this.name = config.name;
    this.#config = config;
    this.#opts = opts;
  }

  /**
   * Streams `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse` with the key in
   * `x-goog-api-key`. Retries (before any output) follow kernel/kit/http-retry.ts; a 429's
   * `RetryInfo.retryDelay` is the wait.
   * @throws ProviderError for HTTP errors (`The input token count … exceeds the maximum` →
   *   `context_overflow`), in-stream errors, stalls and streams without a `finishReason`.
   */
  async *stream(req: ModelRequest): AsyncGenerator<StreamEvent> {
    const url = streamUrl(this.#config.base_url ?? GEMINI_BASE_URL, req.model);
    const body = buildGeminiBody(req, { provider: this.name });
    const post = providerRequest(this.#config, this.#opts, {
      url,
      body,
      signal: req.signal,
      headers: { accept: "text/event-stream" },
      auth: (key) => ({ "x-goog-api-key": key }),
      stallTimeout: 300,
      classify,
      model: req.model,
    });
    const events = readSseBatches(yield* sendJson(post), post);
    yield* decodeGeminiStream(events, { provider: this.name, model: req.model });
  }
}
