/**
 * The Chat Completions adapter shared by `openai-compatible` and its presets (WIRE-FORMATS §2).
 * Loaded lazily by the factories in index.ts.
 */
import {
  endpointHint,
  hasVersionPath,
  providerRequest,
  joinUrl,
  readSseBatches,
  sendJson,
  streamWithRetries,
  type HttpOptions,
  type ModelRequest,
  type Provider,
  type ProviderConfig,
  type StreamEvent,
} from "../../kernel/index.js";
import { decodeChatStream } from "./decode.js";
import { GENERIC_PRESET, type ChatPreset } from "./presets.js";
import { buildChatBody } from "./request.js";

/**
 * What to fix when `POST {base}/chat/completions` answers 404 without naming a model. Only
 * `/chat/completions` is appended, as OpenAI's SDK does (it adds no `/v1`), so a base URL without
 * a version path (`http://gpu-box:8000` for vLLM's `http://gpu-box:8000/v1`) misses the API: then
 * the hint says to add it.
 */
function chatNotFoundHint(config: ProviderConfig, base: string): string {
  return hasVersionPath(base)
    ? `/chat/completions is appended to the base URL (as OpenAI's SDK does): ${endpointHint(config)}`
    : `/chat/completions is appended to the base URL as it is (as OpenAI's SDK does), so it must end in the API's version path, usually /v1 (${endpointHint(config)})`;
}

export class ChatCompletionsProvider implements Provider {
  readonly name: string;
  readonly #config: ProviderConfig;
  readonly #preset: ChatPreset;
  readonly #opts: HttpOptions;

  /** `preset` is the factory's; `config.name` may differ (a custom `providers.<name>`). */
  constructor(config: ProviderConfig, preset: ChatPreset = GENERIC_PRESET, opts: HttpOptions = {}) {
    this.name = config.name;
    this.#config = config;
    this.#preset = preset;
    this.#opts = opts;
  }

  /**
   * Streams `POST {base_url}/chat/completions`. Retries (before any output, also of an in-stream
   * error chunk) follow kernel/kit/http-retry.ts (`sendJson`, `streamWithRetries`).
   * @throws ProviderError for HTTP errors, in-stream errors, stalls and truncated streams.
   */
  async *stream(req: ModelRequest): AsyncGenerator<StreamEvent> {
    const baseUrl = this.#config.base_url ?? this.#preset.baseUrl;
    const url = joinUrl(baseUrl, "chat/completions");
    const body = buildChatBody(req, { provider: this.name, preset: this.#preset, baseUrl });
    const post = providerRequest(this.#config, this.#opts, {
      url,
      body,
      signal: req.signal,
      headers: { accept: "text/event-stream" },
      auth: (key) => ({ authorization: `Bearer ${key}` }),
      stallTimeout: this.#preset.stallTimeout,
      notFoundHint: chatNotFoundHint(this.#config, baseUrl),
      model: req.model,
    });
    const ctx = { provider: this.name, model: req.model, tools: req.tools.map((t) => t.name) };
    yield* streamWithRetries(() => sendJson(post), (res) => decodeChatStream(readSseBatches(res, post), ctx), { ...this.#opts, provider: this.name, signal: req.signal });
  }
}
