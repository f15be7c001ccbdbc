/**
 * Model specs, the catalog and cost (LARIK-REFERENCE §9, §10).
 *
 * A spec is `provider/model` (the head must be a registered or configured provider, so
 * `openrouter/anthropic/claude-x` works), a bare model id (owner from the catalog, else the
 * naming convention), or a role name from `roles`.
 */
import type { Settings } from "./config.js";
import { personalSettingsFile, tildePath } from "./paths.js";
import type { CatalogEntry, ProviderConfig, ProviderFactory } from "./registries.js";
import type { Registry } from "./registry.js";
import type { Usage } from "./types.js";
import { ConfigError } from "./kit/one-line.js";
import { nearestName } from "./kit/nearest-name.js";

/** What {@link resolveModel} makes of a spec: the provider, its resolved settings and key, the catalog entry. */
export interface ResolvedModel {
  /** Provider name as written in specs. */
  provider: string;
  /** Model id sent to the provider. */
  model: string;
  factory: ProviderFactory;
  config: ProviderConfig;
  catalog?: CatalogEntry;
}

/** Default models when nothing is configured, in the order keys are looked for. */
const DEFAULTS: [provider: string, env: string, model: string][] = [
  ["anthropic", "ANTHROPIC_API_KEY", "claude-opus-5"],
  ["openai", "OPENAI_API_KEY", "gpt-5.5"],
  ["gemini", "GEMINI_API_KEY", "gemini-3.8-flash"],
];

/** Fallback context window when neither the provider nor the catalog knows one (tokens). */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

function providerSettings(settings: Settings, name: string): Record<string, unknown> | undefined {
  return settings.providers?.[name];
}

/** Looks a model up in the catalog: settings `models` overrides first, then factory entries. */
export function catalogEntry(
  providers: Registry<ProviderFactory>,
  settings: Settings,
  provider: string,
  model: string,
): CatalogEntry | undefined {
  const factory = providers.get(provider) ?? findFactoryForCustom(providers, settings, provider);
  let entry = factory?.models?.find((m) => m.id === model);
  if (!entry) {
    for (const f of providers.list()) {
      const hit = f.models?.find((m) => m.id === model);
      if (hit) {
        entry = hit;
        break;
      }
    }
  }
  const override = settings.models?.[`${provider}/${model}`] ?? settings.models?.[model];
  if (!override) return entry;
  return { ...(entry ?? { provider, id: model }), ...(override as Partial<CatalogEntry>), provider, id: model };
}

function findFactoryForCustom(
  providers: Registry<ProviderFactory>,
  settings: Settings,
  name: string,
): ProviderFactory | undefined {
  const type = providerSettings(settings, name)?.type;
  if (typeof type !== "string") return undefined;
  return providers.list().find((f) => (f.type ?? f.name) === type || f.name === type);
}

/**
 * Splits a spec into provider and model, without building anything (§10): a role is looked up
 * first; `provider/model` splits at the first slash; a bare id goes to the provider whose catalog
 * lists it, else by its prefix (`claude-`, `gemini-`, `gpt-`/`o<n>`/`codex`).
 * @throws ConfigError for an unknown provider, or a bare id no provider claims.
 */
function parseSpec(spec: string, providers: Registry<ProviderFactory>, settings: Settings): { provider: string; model: string } {
  const roles = (settings.roles ?? {}) as Record<string, string>;
  if (roles[spec] && roles[spec] !== spec) spec = roles[spec]!;
  const slash = spec.indexOf("/");
  if (slash > 0) {
    const head = spec.slice(0, slash);
    if (providers.get(head) || providerSettings(settings, head)) return { provider: head, model: spec.slice(slash + 1) };
    const known = knownProviders(providers, settings);
    const near = nearestName(head, known);
    throw new ConfigError(
      near
        ? `unknown provider "${head}" in model "${spec}": did you mean ${near}/${spec.slice(slash + 1)}? (providers: ${known.join(", ")})`
        : known.length
        ? `unknown provider "${head}" in model "${spec}": use one of ${known.join(", ")}, or add providers.${head} with a type and base_url to your config`
        : // every provider plugin disabled or failed: "use one of ," would leave the user guessing
          `unknown provider "${head}" in model "${spec}": no provider is loaded (the start-up notices say which plugin failed; larik --version lists the plugins)`,
    );
  }
  for (const f of providers.list()) if (f.models?.some((m) => m.id === spec)) return { provider: f.name, model: spec };
  // `--model openai-compatible`: a provider alone, which serves many models
  if (providers.get(spec) || providerSettings(settings, spec)) throw new ConfigError(`"${spec}" is a provider, not a model: name the model too, as ${spec}/<model>`);
  if (/^claude-/.test(spec)) return { provider: "anthropic", model: spec };
  if (/^gemini-/.test(spec)) return { provider: "gemini", model: spec };
  if (/^(gpt-|o\d)|codex/.test(spec)) return { provider: "openai", model: spec };
  throw new ConfigError(
    `cannot tell which provider serves model "${spec}": write it as provider/model (providers: ${knownProviders(providers, settings).join(", ")})`,
  );
}

/** Names usable as a spec head. */
function knownProviders(providers: Registry<ProviderFactory>, settings: Settings): string[] {
  return [...new Set([...providers.list().map((p) => p.name), ...Object.keys(settings.providers ?? {})])].sort();
}

/**
 * The spec used when none is given (LARIK-REFERENCE §1): `settings.model`, else the first key
 * found in the order Anthropic → OpenAI → Gemini (`anthropic/claude-opus-5`, `openai/gpt-5.5`,
 * `gemini/gemini-3.8-flash`); undefined when there is none.
 */
export function defaultSpec(settings: Settings, env: NodeJS.ProcessEnv): string | undefined {
  if (typeof settings.model === "string" && settings.model) return settings.model;
  for (const [provider, key, model] of DEFAULTS) if (env[key]) return `${provider}/${model}`;
  return undefined;
}

/**
 * Resolves a spec (empty: {@link defaultSpec}) to a provider factory and its config, as §10
 * describes: the key from `providers.<name>.api_key`, else its `api_key_env`, else the factory's
 * variables; the base URL from `providers.<name>.base_url`, else the factory's variable
 * (`OPENAI_BASE_URL`), else its default.
 * @throws ConfigError for no model configured, an unknown or unavailable provider, a missing key
 *   (naming the variable), or a base URL that is not http(s).
 */
export function resolveModel(
  spec: string | undefined,
  providers: Registry<ProviderFactory>,
  settings: Settings,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedModel {
  const s = spec || defaultSpec(settings, env);
  if (!s) {
    const file = tildePath(personalSettingsFile(env), env);
    throw new ConfigError(
      `no model configured: pass --model provider/model, set "model" in ${file}, or export ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY`,
    );
  }
  // a spec no one typed on this command line: the error says where it came from
  const origin = !spec && s === settings.model ? `; it comes from the "model" setting of your config files (larik --help lists them)` : "";
  let parsed: { provider: string; model: string };
  try {
    parsed = parseSpec(s, providers, settings);
  } catch (err) {
    throw err instanceof ConfigError && origin ? new ConfigError(`${err.message}${origin}`) : err;
  }
  const { provider, model } = parsed;
  const ps = providerSettings(settings, provider) ?? {};
  const factory = providers.get(provider) ?? findFactoryForCustom(providers, settings, provider);
  if (!factory) {
    const type = ps.type ? ` of type "${String(ps.type)}"` : "";
    throw new ConfigError(
      `provider "${provider}"${type} is not available: no loaded plugin provides it (known: ${knownProviders(providers, settings).join(", ")})${origin}`,
    );
  }
  if (!model) throw new ConfigError(`model "${s}" names no model after "${provider}/"${origin}`);
  // A custom `providers.<name>` entry with its own base_url (a local llama.cpp or vLLM) needs a
  // key only when it names one; the factory's default variable belongs to the vendor's endpoint.
  const custom = provider !== factory.name && typeof ps.base_url === "string";
  const keyEnvNames = typeof ps.api_key_env === "string" ? [ps.api_key_env] : custom ? [] : (factory.keyEnv ?? []);
  let api_key = typeof ps.api_key === "string" ? ps.api_key : undefined;
  let api_key_env: string | undefined;
  for (const name of keyEnvNames) {
    if (!api_key && env[name]) {
      api_key = env[name];
      api_key_env = name;
    }
  }
  if (!api_key && keyEnvNames.length > 0) {
    throw new ConfigError(
      `missing API key for ${provider}: set ${keyEnvNames.join(" or ")} (or providers.${provider}.api_key_env in your config)`,
    );
  }
  let base_url = typeof ps.base_url === "string" ? ps.base_url : undefined;
  let from = `providers.${provider}.base_url`;
  for (const name of factory.baseUrlEnv ?? []) {
    if (!base_url && env[name]) {
      base_url = env[name];
      from = name;
    }
  }
  if (base_url !== undefined && !isHttpUrl(base_url, factory.schemelessBaseUrl === true)) {
    throw new ConfigError(`${from} "${base_url}" is not an http(s) URL: use one like http://127.0.0.1:8080/v1`);
  }
  base_url ??= factory.defaultBaseUrl;
  const config: ProviderConfig = {
    name: provider,
    base_url,
    base_url_env: provider === factory.name && factory.baseUrlEnv?.length ? factory.baseUrlEnv : undefined,
    api_key,
    // a key written in the config was looked up in no variable: auth errors then name the setting
    api_key_env: api_key_env ?? (typeof ps.api_key === "string" ? undefined : keyEnvNames[0]),
    context_length: typeof ps.context_length === "number" ? ps.context_length : undefined,
    stall_timeout:
      typeof ps.stall_timeout === "number"
        ? ps.stall_timeout
        : typeof settings.stall_timeout === "number"
          ? (settings.stall_timeout as number)
          : factory.stallTimeout,
    headers: (ps.headers as Record<string, string> | undefined) ?? undefined,
  };
  return { provider, model, factory, config, catalog: catalogEntry(providers, settings, provider, model) };
}

/**
 * Cost of one request in USD, priced for the model that answered; null when unpriced.
 * `usage.input` excludes cached tokens (prices are USD per million tokens).
 */
export function costOf(usage: Usage, entry: CatalogEntry | undefined): number | null {
  if (!entry || entry.input_price === undefined || entry.output_price === undefined) return null;
  const cr = entry.cache_read_price ?? entry.input_price * 0.1;
  const cw = entry.cache_write_price ?? entry.input_price * 1.25;
  return (usage.input * entry.input_price + usage.output * entry.output_price + usage.cache_read * cr + usage.cache_write * cw) / 1e6;
}

/**
 * Whether `value` can be a provider endpoint: an http or https URL, or, where the provider's
 * adapter adds the scheme (`schemeless`), a bare `host[:port][/path]` (Ollama's `OLLAMA_HOST` is
 * often `127.0.0.1:11434`). Checked when the model is resolved, so a typo is a one-line config
 * error before any request.
 */
function isHttpUrl(value: string, schemeless: boolean): boolean {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value);
  if (scheme ? !/^https?$/i.test(scheme[1]!) : !schemeless) return false;
  try {
    new URL(scheme ? value : `http://${value}`);
    return !/\s/.test(value);
  } catch {
    return false;
  }
}
