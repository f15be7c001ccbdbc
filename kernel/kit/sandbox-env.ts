/**
 * Credential scrubbing for sandboxed commands, shared by every sandbox backend
 * (LARIK-REFERENCE §19 "Credentials", §30): every
 * known provider key variable, each configured `api_key_env`, `ANTHROPIC_AUTH_TOKEN` and any
 * variable ending `_API_KEY`, `_AUTH_TOKEN` or `_ACCESS_TOKEN` is removed;
 * `sandbox.env_passthrough` keeps named ones.
 */

/** Variables that hold secrets without matching a suffix rule (§30, Larik's own tokens). */
const KNOWN_SECRET_VARS = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "OPENAI_API_KEY",
  "GEMINI_API_KEY",
  "NVIDIA_API_KEY",
  "OPENROUTER_API_KEY",
  "GROQ_API_KEY",
  "DEEPSEEK_API_KEY",
  "XAI_API_KEY",
  "MISTRAL_API_KEY",
  "TOGETHER_API_KEY",
  "OPENCODE_API_KEY",
  "BRAVE_API_KEY",
  "TAVILY_API_KEY",
  "LARIK_SERVER_TOKEN",
  "LARIK_OTLP_HEADERS",
];

const SECRET_SUFFIX = /_(?:API_KEY|AUTH_TOKEN|ACCESS_TOKEN)$/i;

/** Variable names the settings point at as key holders (`providers.*.api_key_env`, `web.search.api_key_env`). */
export function configuredKeyVars(settings: Record<string, unknown>): string[] {
  const out: string[] = [];
  const providers = settings.providers;
  if (providers && typeof providers === "object") {
    for (const p of Object.values(providers as Record<string, unknown>)) {
      const v = (p as { api_key_env?: unknown } | undefined)?.api_key_env;
      if (typeof v === "string" && v) out.push(v);
    }
  }
  const search = (settings.web as { search?: { api_key_env?: unknown } } | undefined)?.search?.api_key_env;
  if (typeof search === "string" && search) out.push(search);
  return out;
}

/** True when `name` is a credential variable under the rules above (before passthrough). */
function isSecretVar(name: string, extra: ReadonlySet<string> = new Set()): boolean {
  return SECRET_SUFFIX.test(name) || KNOWN_SECRET_VARS.includes(name) || extra.has(name);
}

/**
 * A copy of `env` without credentials. `passthrough` names survive; `extra` adds names to scrub
 * (configured `api_key_env` values). Undefined values are dropped.
 */
export function scrubEnv(
  env: Record<string, string | undefined>,
  opts: { passthrough?: readonly string[]; extra?: readonly string[] } = {},
): Record<string, string> {
  const keep = new Set(opts.passthrough ?? []);
  const extra = new Set(opts.extra ?? []);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if (!keep.has(k) && isSecretVar(k, extra)) continue;
    out[k] = v;
  }
  return out;
}
