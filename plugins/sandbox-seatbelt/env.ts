/**
 * Credential scrubbing for sandboxed commands (LARIK-REFERENCE §19 "Credentials", §30). Removed:
 * every known provider key variable, each configured `api_key_env`, `ANTHROPIC_AUTH_TOKEN`,
 * Larik's own tokens, and any variable ending `_API_KEY`, `_AUTH_TOKEN` or `_ACCESS_TOKEN`.
 * `sandbox.env_passthrough` keeps named ones. Same rules as the bubblewrap backend.
 */

/** Secrets that no suffix rule catches (the `_API_KEY` ones are listed for clarity). */
const KNOWN_SECRET_VARS = new Set(["ANTHROPIC_AUTH_TOKEN", "LARIK_SERVER_TOKEN", "LARIK_OTLP_HEADERS"]);

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
    const secret = SECRET_SUFFIX.test(k) || KNOWN_SECRET_VARS.has(k) || extra.has(k);
    if (secret && !keep.has(k)) continue;
    out[k] = v;
  }
  return out;
}
