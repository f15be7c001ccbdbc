/**
 * The Anthropic Messages API adapter (WIRE-FORMATS §1). Loaded lazily by the factory in
 * index.ts, so registering the plugin costs nothing.
 */
import {
  endpointHint,
  providerRequest,
  joinUrl,
  readSseBatches,
  sendJson,
  streamWithRetries,
  type CatalogEntry,
  type HttpOptions,
  type ModelRequest,
  type Provider,
  type ProviderConfig,
  type StreamEvent,
} from "../../kernel/index.js";
import { ANTHROPIC_MODELS, DEFAULT_MAX_TOKENS } from "./catalog.js";
import { decodeAnthropicStream } from "./decode.js";
import { buildBody } from "./request.js";
import { fitMaxTokens, outputCap, outputRoom } from "./context-limit.js";
import { isThinkingRejected, stripThinking } from "./thinking-reject.js";
import { dropRejectedImages, isImageRejected } from "./image-reject.js";

/** `anthropic-version` header value; still the current one in the official SDK. */
const ANTHROPIC_VERSION = "2023-06-01";
/** Used when neither config nor `ANTHROPIC_BASE_URL` gives a base URL. */
const ANTHROPIC_BASE_URL = "https://api.anthropic.com";

/** Extra knobs for tests and embedders (retry count, fetch, sleep). */
export interface AnthropicOptions extends HttpOptions {
  /** Catalog consulted for the default `max_tokens` (defaults to the built-in one). */
  models?: CatalogEntry[];
}

/**
 * What to fix when `POST {base}/v1/messages` answers 404 without naming a model. `/v1/messages`
 * is appended to the base URL as Anthropic's SDK does (`post('/v1/messages')` on its `baseURL`),
 * so a base URL copied from an OpenAI-style setting, ending in `/v1`, requests `/v1/v1/messages`:
 * then the hint says to leave `/v1` out.
 */
function anthropicNotFoundHint(config: ProviderConfig, base: string): string {
  let path = "";
  try {
    path = new URL(base).pathname;
  } catch {
    // sendJson reports a base URL that is no URL
  }
  return /\/v1\/*$/.test(path)
    ? `the base URL ends in /v1, but /v1/messages is appended to it (as Anthropic's SDK does): leave /v1 out (${endpointHint(config)})`
    : `/v1/messages is appended to the base URL (as Anthropic's SDK does): ${endpointHint(config)}`;
}

export class AnthropicProvider implements Provider {
  readonly name: string;
  readonly #config: ProviderConfig;
  readonly #opts: AnthropicOptions;
  /** Images the API refused in this provider's lifetime (base64 data): later requests send a note instead. */
  readonly #rejectedImages = new Set<string>();
  /** Output caps the API named for models (max_tokens over them refused): later requests use them. */
  readonly #outputCaps = new Map<string, number>();

  constructor(config: ProviderConfig, opts: AnthropicOptions = {}) {
    this.name = config.name;
    this.#config = config;
    this.#opts = opts;
  }

  /**
   * Streams `POST {base_url}/v1/messages`. Retries (before any output, also of an in-stream
   * error such as `overloaded_error`) follow kernel/kit/http-retry.ts (`sendJson`, `streamWithRetries`).
   * Four HTTP 400s are answered by resending once each (a 400 comes before any output, so the
   * user sees nothing twice): replayed thinking rejected (see thinking-reject.ts) → without
   * thinking/redacted_thinking blocks, after a `notice`; prompt + `max_tokens` over the window
   * (see context-limit.ts) → with `max_tokens` lowered to the room the error names; an image
   * refused (`Could not process image`, see image-reject.ts) → with it (or, when the error does
   * not say which, every image) replaced by a note, after a `notice`; the images stay replaced in
   * later requests through this provider. And `max_tokens` over the model's own output cap (a
   * model outside the catalog, see context-limit.ts `outputCap`) → with the cap the error names,
   * after a `notice`, and later requests for that model use it from the start.
   * @throws ProviderError for HTTP errors, in-stream errors, stalls and truncated streams; the
   *   400 itself (`context_overflow`) when under 1 024 output tokens are left.
   */
  async *stream(req: ModelRequest): AsyncGenerator<StreamEvent> {
    const base = this.#config.base_url ?? ANTHROPIC_BASE_URL;
    const url = joinUrl(base, "v1/messages");
    const entry = (this.#opts.models ?? ANTHROPIC_MODELS).find((m) => m.id === req.model);
    const rejectedImages = this.#rejectedImages;
    const caps = this.#outputCaps;
    const learned = caps.get(req.model);
    const defaultMaxTokens = Math.min(entry?.max_output ?? DEFAULT_MAX_TOKENS, learned ?? Infinity);
    const body = buildBody(req, { provider: this.name, defaultMaxTokens, rejectedImages });
    // a max_tokens of the request's own is lowered too: the API would refuse it the same way
    if (learned !== undefined) fitMaxTokens(body, learned);
    const post = providerRequest(this.#config, this.#opts, {
      url,
      body,
      signal: req.signal,
      headers: { "anthropic-version": ANTHROPIC_VERSION, accept: "text/event-stream" },
      auth: (key) => ({ "x-api-key": key }),
      stallTimeout: 300,
      notFoundHint: anthropicNotFoundHint(this.#config, base),
      model: req.model,
    });
    // body is read at send time: the recoveries below change it in place, once each per stream
    let stripped = false;
    let capped = false;
    let imagesDropped = false;
    let capLowered = false;
    const name = this.name;
    async function* open(): AsyncGenerator<StreamEvent, Response, void> {
      for (;;) {
        try {
          return yield* sendJson(post);
        } catch (err) {
          const cap = capLowered ? undefined : outputCap(err);
          if (cap !== undefined && fitMaxTokens(body, cap)) {
            capLowered = true;
            caps.set(req.model, cap);
            yield {
              type: "notice",
              text: `${name}: ${req.model} allows at most ${cap} output tokens; resending with max_tokens ${cap} (models.${req.model}.max_output in your config saves this request)`,
            };
            continue;
          }
          const room = capped ? undefined : outputRoom(err);
          if (room !== undefined && fitMaxTokens(body, room)) {
            capped = true;
            continue;
          }
          if (!imagesDropped && isImageRejected(err)) {
            const dropped = dropRejectedImages(body, err as Error);
            if (dropped.length) {
              imagesDropped = true;
              for (const data of dropped) rejectedImages.add(data);
              yield {
                type: "notice",
                text: `${name}: the API could not process an image in the conversation (${(err as Error).message}); resending once with ${dropped.length} image${dropped.length === 1 ? "" : "s"} replaced by a note`,
              };
              continue;
            }
          }
          if (stripped || !isThinkingRejected(err)) throw err;
          const removed = stripThinking(body);
          if (!removed) throw err;
          stripped = true;
          yield {
            type: "notice",
            text: `${name}: the API rejected earlier thinking blocks (${(err as Error).message}); resending once without ${removed} thinking block${removed === 1 ? "" : "s"}`,
          };
        }
      }
    }
    const ctx = { provider: this.name, model: req.model };
    yield* streamWithRetries(open, (res) => decodeAnthropicStream(readSseBatches(res, post), ctx), { ...this.#opts, provider: this.name, signal: req.signal });
  }
}
