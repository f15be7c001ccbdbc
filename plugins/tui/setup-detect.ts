/**
 * First-run setup, the non-visual half (LARIK-REFERENCE §1 "First run in a TTY with no
 * model ... → setup wizard"): find API keys in the environment and a running Ollama
 * (`GET localhost:11434/api/tags`) or LM Studio (`GET localhost:1234/v1/models`), test a
 * connection by listing its models, and save the choice to the personal `config.json`.
 */
import { updatePersonalSettings, type Host, type ProviderFactory } from "../../kernel/index.js";

/** Where local servers are looked for. */
const OLLAMA_URL = "http://localhost:11434";
const LMSTUDIO_URL = "http://localhost:1234";
/** How long a local probe may take (ms): a server that is up answers at once. */
const PROBE_MS = 1500;
/** How long listing a remote provider's models may take (ms). */
const LIST_MS = 10_000;

/** One way to connect, offered in the setup list. */
export interface SetupCandidate {
  /** Provider name used in the saved spec (`ollama`, `lmstudio`, `anthropic` ...). */
  provider: string;
  label: string;
  kind: "local" | "key";
  /** Base URL the models are listed from (no trailing slash). */
  baseUrl: string;
  /** API family: `anthropic`, `openai-compatible`, `ollama`. */
  api: "anthropic" | "openai-compatible" | "ollama";
  /** The variable holding the key (key providers). */
  keyEnv?: string;
  /** Models found while probing (local servers). */
  models?: string[];
}

/** Probe options; URLs are parameters so tests can point them at loopback fakes. */
export interface DetectOptions {
  ollamaUrl?: string;
  lmstudioUrl?: string;
  timeoutMs?: number;
}

async function getJson(url: string, headers: Record<string, string>, timeoutMs: number): Promise<unknown> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) {
    const body = await res.text().catch(() => "");
    throw new Error(`HTTP ${res.status} from ${url}${body ? `: ${body.slice(0, 200).replace(/\s+/g, " ")}` : ""}`);
  }
  return res.json();
}

function ids(list: unknown, field: "id" | "name"): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((m) => (m as Record<string, unknown>)?.[field]).filter((v): v is string => typeof v === "string" && v.length > 0);
}

/** Ollama's installed models (`GET /api/tags`). @throws on no answer or a bad status. */
async function ollamaModels(baseUrl: string, timeoutMs = PROBE_MS): Promise<string[]> {
  const j = (await getJson(`${baseUrl}/api/tags`, {}, timeoutMs)) as { models?: unknown };
  return ids(j.models, "name");
}

/** An OpenAI-style `GET {base}/models` listing. @throws on no answer or a bad status. */
async function openaiModels(baseUrl: string, key: string | undefined, timeoutMs = LIST_MS): Promise<string[]> {
  const j = (await getJson(`${baseUrl}/models`, key ? { authorization: `Bearer ${key}` } : {}, timeoutMs)) as { data?: unknown };
  return ids(j.data, "id");
}

/** Anthropic's `GET /v1/models`. @throws on no answer or a bad status. */
async function anthropicModels(baseUrl: string, key: string, timeoutMs = LIST_MS): Promise<string[]> {
  const j = (await getJson(`${baseUrl}/v1/models?limit=100`, { "x-api-key": key, "anthropic-version": "2023-06-01" }, timeoutMs)) as { data?: unknown };
  return ids(j.data, "id");
}

function trimSlash(u: string): string {
  return u.replace(/\/+$/, "");
}

/**
 * What can be set up here: running local servers first (with their models), then every loaded
 * provider whose key variable is set. Probes run in parallel and never throw.
 */
export async function detectCandidates(host: Host, opts: DetectOptions = {}): Promise<SetupCandidate[]> {
  const timeout = opts.timeoutMs ?? PROBE_MS;
  const ollamaUrl = trimSlash(opts.ollamaUrl ?? OLLAMA_URL);
  const lmUrl = trimSlash(opts.lmstudioUrl ?? LMSTUDIO_URL);
  const [ollama, lm] = await Promise.all([
    ollamaModels(ollamaUrl, timeout).catch(() => undefined),
    openaiModels(`${lmUrl}/v1`, undefined, timeout).catch(() => undefined),
  ]);
  const out: SetupCandidate[] = [];
  if (ollama) {
    out.push({ provider: "ollama", label: `Ollama at ${ollamaUrl} (${ollama.length} models)`, kind: "local", baseUrl: ollamaUrl, api: "ollama", models: ollama });
  }
  if (lm) {
    out.push({ provider: "lmstudio", label: `LM Studio at ${lmUrl} (${lm.length} models)`, kind: "local", baseUrl: `${lmUrl}/v1`, api: "openai-compatible", models: lm });
  }
  for (const f of host.providers.list()) {
    const keyEnv = (f.keyEnv ?? []).find((k) => host.env[k]);
    if (!keyEnv) continue;
    const base = (f.baseUrlEnv ?? []).map((v) => host.env[v]).find(Boolean) ?? f.defaultBaseUrl;
    if (!base) continue;
    const api = (f.type ?? f.name) === "anthropic" ? "anthropic" : "openai-compatible";
    out.push({ provider: f.name, label: `${f.name} (key in ${keyEnv})`, kind: "key", baseUrl: trimSlash(base), api, keyEnv });
  }
  return out;
}

/**
 * Tests the connection of `c` by listing its models (local candidates list again, so a server
 * stopped since the probe is noticed).
 * @throws Error naming the URL and status when the server refuses or is unreachable.
 */
export async function listModels(c: SetupCandidate, env: NodeJS.ProcessEnv): Promise<string[]> {
  const key = c.keyEnv ? env[c.keyEnv] : undefined;
  let models: string[];
  if (c.api === "ollama") models = await ollamaModels(c.baseUrl, LIST_MS);
  else if (c.api === "anthropic") models = await anthropicModels(c.baseUrl, key ?? "");
  else models = await openaiModels(c.baseUrl, key);
  return [...new Set(models)].sort();
}

/** Catalog models a provider factory knows, as a fallback when listing fails. */
export function catalogModels(host: Host, provider: string): string[] {
  const f: ProviderFactory | undefined = host.providers.get(provider);
  return (f?.models ?? []).map((m) => m.id);
}

/**
 * Saves `model` of `c` as the default in the personal `config.json` (preserving other keys),
 * adding `providers.ollama` when no loaded plugin serves Ollama natively (its OpenAI-compatible
 * endpoint is used; a custom provider with its own base_url needs no key), or the `base_url`
 * of a local server found away from its provider's default address. Also applies the change to `host.settings` so this run uses it. Returns the spec.
 * @throws ConfigError when the config file is malformed or locked.
 */
export async function saveChoice(host: Host, c: SetupCandidate, model: string): Promise<string> {
  const spec = `${c.provider}/${model}`;
  let provider: Record<string, unknown> | undefined;
  const native = host.providers.get(c.provider);
  if (c.api === "ollama" && !native) {
    provider = { type: "openai-compatible", base_url: `${c.baseUrl}/v1` };
  } else if (c.kind === "local" && native && trimSlash(native.defaultBaseUrl ?? "") !== c.baseUrl) {
    // a server found somewhere other than where the provider looks by default
    provider = { base_url: c.baseUrl };
  }
  await updatePersonalSettings((cur) => {
    const next: Record<string, unknown> = { ...cur, model: spec };
    if (provider) {
      const providers = { ...((cur.providers as Record<string, unknown> | undefined) ?? {}) };
      providers[c.provider] = { ...((providers[c.provider] as Record<string, unknown> | undefined) ?? {}), ...provider };
      next.providers = providers;
    }
    return next;
  }, host.env);
  host.settings.model = spec;
  if (provider) {
    const s = host.settings as { providers?: Record<string, Record<string, unknown>> };
    s.providers = { ...(s.providers ?? {}), [c.provider]: { ...(s.providers?.[c.provider] ?? {}), ...provider } };
  }
  return spec;
}
