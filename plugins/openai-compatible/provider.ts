/**
 * The Chat Completions adapter shared by `openai-compatible` and its presets (WIRE-FORMATS §2).
 * Loaded lazily by the factories in index.ts.
 */
import {
  endpointHint,
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
      hint: `${endpointHint(this.#config)}; is the server running?`,
    });
    const ctx = { provider: this.name, model: req.model, tools: req.tools.map((t) => t.name) };
    yield* streamWithRetries(() => sendJson(post), (res) => decodeChatStream(readSseBatches(res, post), ctx), { ...this.#opts, provider: this.name, signal: req.signal });
  }
}
