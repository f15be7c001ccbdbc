/**
 * The OpenAI Responses API adapter (WIRE-FORMATS §3). Loaded lazily by the factory in index.ts,
 * so registering the plugin costs nothing.
 */
import {
  endpointHint,
  hasVersionPath,
  providerRequest,
  joinUrl,
  readSseBatches,
  sendJson,
  type HttpOptions,
  type ModelRequest,
  type Provider,
  type ProviderConfig,
  type StreamEvent,
} from "../../kernel/index.js";
import { decodeResponsesStream } from "./decode.js";
import { buildResponsesBody } from "./request.js";

/** Used when neither config nor `OPENAI_BASE_URL` gives a base URL. */
const OPENAI_BASE_URL = "https://api.openai.com/v1";

/**
 * What to fix when `POST {base}/responses` answers 404 without naming a model: only `/responses`
 * is appended, as OpenAI's SDK does (no `/v1`), so a base URL without a version path misses the
 * API; with one, the server may have no Responses API at all (many Chat Completions servers).
 */
function responsesNotFoundHint(config: ProviderConfig, base: string): string {
  return hasVersionPath(base)
    ? `/responses is appended to the base URL (as OpenAI's SDK does); a server without the Responses API takes --model openai-compatible/<model> (${endpointHint(config)})`
    : `/responses is appended to the base URL as it is (as OpenAI's SDK does), so it must end in the API's version path, usually /v1 (${endpointHint(config)})`;
}

export class ResponsesProvider implements Provider {
  readonly name: string;
  readonly #config: ProviderConfig;
  readonly #opts: HttpOptions;

  /** `config.name` is `openai` or a custom `providers.<name>` of type `openai`. */
  constructor(config: ProviderConfig, opts: HttpOptions = {}) {
    this.name = config.name;
    this.#config = config;
    this.#opts = opts;
  }

  /**
   * Streams `POST {base_url}/responses` (stateless: `store: false`). Retries (before any output)
   * follow kernel/kit/http-retry.ts.
   * @throws ProviderError for HTTP errors, in-stream errors (`insufficient_quota` → `quota`),
   *   stalls and truncated streams.
   */
  async *stream(req: ModelRequest): AsyncGenerator<StreamEvent> {
    const base = this.#config.base_url ?? OPENAI_BASE_URL;
    const url = joinUrl(base, "responses");
    const body = buildResponsesBody(req, { provider: this.name });
    const post = providerRequest(this.#config, this.#opts, {
      url,
      body,
      signal: req.signal,
      headers: { accept: "text/event-stream" },
      auth: (key) => ({ authorization: `Bearer ${key}` }),
      stallTimeout: 300,
      notFoundHint: responsesNotFoundHint(this.#config, base),
      model: req.model,
    });
    const events = readSseBatches(yield* sendJson(post), post);
    yield* decodeResponsesStream(events, { provider: this.name, model: req.model });
  }
}
