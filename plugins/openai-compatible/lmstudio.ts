/**
 * The model prober for LM Studio (LARIK-REFERENCE §10 "Model probing interface"): its native
 * REST API `GET {host}/api/v0/models/{model}` answers
 * `{ id, state: "loaded"|"not-loaded", loaded_context_length?, max_context_length, capabilities?: ["tool_use"] }`
 * (lmstudio.ai/docs/app/api/endpoints/rest). The native API lives on the same host as the
 * OpenAI-compatible one, without `/v1`.
 */
import { joinUrl, postJson, type HttpOptions, type ProviderConfig } from "../../kernel/index.js";
import { ChatCompletionsProvider } from "./provider.js";
import type { ChatPreset } from "./presets.js";

/** Seconds to wait for the probe's response headers: a local server answers at once or not at all. */
const PROBE_TIMEOUT_S = 5;

/** What the prober reads from `/api/v0/models/{model}`. */
export interface LmStudioModelInfo {
  /** Window of the loaded instance (tokens); absent while the model is not loaded. */
  loaded_context_length?: number;
  /** The model's trained maximum window (tokens). */
  max_context_length?: number;
  capabilities?: string[];
  state?: string;
}

/** `http://host:1234/v1` → `http://host:1234` (the native API's root). */
function nativeRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/**
 * A Chat Completions provider that also reports the loaded context window and tool support of
 * LM Studio models. Probes never throw: a server without the native API (llama.cpp, vLLM behind
 * `type: "lmstudio"`), a 404 or a network error all read as "unknown" (undefined).
 */
export class LmStudioProvider extends ChatCompletionsProvider {
  readonly #config: ProviderConfig;
  readonly #baseUrl: string;
  readonly #opts: HttpOptions;
  /** In-flight probes by model, so the agent's parallel window + tools questions cost one GET. */
  readonly #inflight = new Map<string, Promise<LmStudioModelInfo | undefined>>();

  constructor(config: ProviderConfig, preset: ChatPreset, opts: HttpOptions = {}) {
    super(config, preset, opts);
    this.#config = config;
    this.#baseUrl = config.base_url ?? preset.baseUrl;
    this.#opts = opts;
  }

  /** `loaded_context_length`, else `max_context_length` (tokens); undefined when unknown. */
  async contextWindow(model: string): Promise<number | undefined> {
    const info = await this.#info(model);
    const n = info?.loaded_context_length ?? info?.max_context_length;
    return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
  }

  /** True when `capabilities` lists `tool_use`; undefined when the server does not say. */
  async supportsTools(model: string): Promise<boolean | undefined> {
    const caps = (await this.#info(model))?.capabilities;
    return Array.isArray(caps) ? caps.includes("tool_use") : undefined;
  }

  // Not cached past the request: the user may reload the model with another window in LM Studio.
  #info(model: string): Promise<LmStudioModelInfo | undefined> {
    let p = this.#inflight.get(model);
    if (!p) {
      p = this.#fetch(model).finally(() => this.#inflight.delete(model));
      this.#inflight.set(model, p);
    }
    return p;
  }

  async #fetch(model: string): Promise<LmStudioModelInfo | undefined> {
    const headers: Record<string, string> = { ...this.#config.headers };
    if (this.#config.api_key) headers.authorization = `Bearer ${this.#config.api_key}`;
    try {
      const res = await postJson({
        ...this.#opts,
        maxRetries: 0,
        provider: this.name,
        method: "GET",
        url: joinUrl(nativeRoot(this.#baseUrl), `api/v0/models/${encodeURIComponent(model)}`),
        headers,
        stallTimeout: PROBE_TIMEOUT_S,
        // also bounds reading the body, which the stall timeout does not cover
        signal: AbortSignal.timeout(PROBE_TIMEOUT_S * 1000),
      });
      const body: unknown = await res.json();
      return body && typeof body === "object" && !Array.isArray(body) ? (body as LmStudioModelInfo) : undefined;
    } catch {
      // never fail a run because a probe failed (LARIK-REFERENCE §10)
      return undefined;
    }
  }
}
