/**
 * Model probing against a running Ollama server (ollama/ollama `server/routes.go`,
 * `api/types.go`): `POST /api/show` for the model's capabilities and trained context length,
 * `GET /api/ps` for the window the loaded model actually has.
 */
import { joinUrl, postJson, ProviderError, type HttpOptions } from "../../kernel/index.js";

/** What `/api/show` tells about a model. */
export interface ShowInfo {
  /** `completion`, `tools`, `thinking`, `vision`, … (absent on servers before 0.6.4). */
  capabilities?: string[];
  /** The trained maximum from `model_info["<arch>.context_length"]`, in tokens. */
  contextLength?: number;
}

/** Where and how to probe. */
export interface ProbeOptions extends HttpOptions {
  provider: string;
  base: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Seconds to wait for a probe's response headers; probing must not hold a request up long. */
const PROBE_TIMEOUT = 30;

/**
 * `POST {base}/api/show {model}`. Resolves to undefined when the server has no such route or
 * the model is unknown (the chat request then reports the real error).
 * @throws ProviderError `network` when the server cannot be reached, so the caller can tell
 *   "unknown" from "down"; the abort reason when `signal` aborts.
 */
export async function showModel(model: string, opts: ProbeOptions): Promise<ShowInfo | undefined> {
  let res: Response;
  try {
    res = await postJson({ ...opts, maxRetries: 0, url: joinUrl(opts.base, "api/show"), body: { model }, stallTimeout: PROBE_TIMEOUT });
  } catch (err) {
    if (!(err instanceof ProviderError) || err.kind === "network") throw err;
    return undefined;
  }
  const body = (await res.json().catch(() => undefined)) as Record<string, any> | undefined;
  if (!body || typeof body !== "object") return undefined;
  const info: ShowInfo = {};
  if (Array.isArray(body.capabilities)) info.capabilities = body.capabilities.filter((c: unknown): c is string => typeof c === "string");
  const mi = body.model_info && typeof body.model_info === "object" ? (body.model_info as Record<string, unknown>) : {};
  const arch = typeof mi["general.architecture"] === "string" ? mi["general.architecture"] : undefined;
  let ctx = arch ? mi[`${arch}.context_length`] : undefined;
  if (typeof ctx !== "number") ctx = Object.entries(mi).find(([k, v]) => k.endsWith(".context_length") && typeof v === "number")?.[1];
  if (typeof ctx === "number" && ctx > 0) info.contextLength = ctx;
  return info;
}

/** Whether two Ollama model names are the same model (`qwen3` is `qwen3:latest`). */
function sameModel(a: string, b: string): boolean {
  const norm = (s: string) => (s.includes(":") ? s : `${s}:latest`);
  return norm(a) === norm(b);
}

/**
 * `GET {base}/api/ps`: the context window (tokens) of `model` as currently loaded, or undefined
 * when it is not loaded, the server is older than the `context_length` field, or unreachable.
 */
export async function loadedContext(model: string, opts: ProbeOptions): Promise<number | undefined> {
  try {
    const res = await postJson({ ...opts, maxRetries: 0, method: "GET", url: joinUrl(opts.base, "api/ps"), stallTimeout: PROBE_TIMEOUT });
    const body = (await res.json()) as { models?: { name?: string; model?: string; context_length?: number }[] };
    const hit = body.models?.find((m) => (m.name && sameModel(m.name, model)) || (m.model && sameModel(m.model, model)));
    return typeof hit?.context_length === "number" && hit.context_length > 0 ? hit.context_length : undefined;
  } catch {
    return undefined;
  }
}
