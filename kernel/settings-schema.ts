/**
 * The settings schema (LARIK-REFERENCE §26 "Keys"): a loose zod object, so every known key is
 * typed and every unknown key is kept for plugins. Each message is phrased "expected …" so a
 * file error reads `<file>: "<key>": expected …, got <value>`.
 */
import { z } from "zod";
import { EFFORTS } from "./types.js";
import { PERMISSION_MODES } from "./permission.js";

const str = (what = "a string") => z.string({ error: `expected ${what}` });
const bool = () => z.boolean({ error: "expected true or false" });
const num = () => z.number({ error: "expected a number" });
const positiveInt = () => {
  const error = "expected a positive integer";
  return z.number({ error }).int({ error }).positive({ error });
};
const nonNegative = (what = "a number ≥ 0") => z.number({ error: `expected ${what}` }).nonnegative({ error: `expected ${what}` });
const strList = (what = "a list of strings") => z.array(str(), { error: `expected ${what}` });
const strMap = () => z.record(z.string(), str(), { error: "expected an object of strings" });
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `expected one of ${values.join(", ")}` });
/** A loose object: known keys typed, unknown keys kept. */
const obj = <S extends z.core.$ZodLooseShape>(shape: S) => z.looseObject(shape, { error: "expected an object" });
const mapOf = <T extends z.ZodType>(value: T) => z.record(z.string(), value, { error: "expected an object" });

/** `providers.<name>` (§10 custom providers). `stall_timeout` in seconds; negative waits forever. */
export const ProviderSettingsSchema = obj({
  type: str().optional(),
  base_url: str("a URL string").optional(),
  api_key: str().optional(),
  api_key_env: str("an environment variable name").optional(),
  /** Tokens (Ollama `num_ctx`). */
  context_length: positiveInt().optional(),
  stall_timeout: num().optional(),
  headers: strMap().optional(),
});

/** `models.<provider/model or id>`: catalog overrides. Windows in tokens; prices in USD per million tokens. */
export const ModelSettingsSchema = obj({
  provider: str().optional(),
  context_window: positiveInt().optional(),
  max_output: positiveInt().optional(),
  input_price: nonNegative().optional(),
  output_price: nonNegative().optional(),
  cache_read_price: nonNegative().optional(),
  cache_write_price: nonNegative().optional(),
});

/** One hook handler (§14, Claude Code format). `timeout` in seconds. */
export const HookHandlerSchema = obj({
  type: oneOf(["command", "prompt"] as const),
  command: str().optional(),
  prompt: str().optional(),
  model: str().optional(),
  timeout: positiveInt().optional(),
});
/** `hooks: {<Event>: [{matcher?, hooks: [...]}]}` (§14). */
export const HooksSchema = mapOf(
  z.array(obj({ matcher: str().optional(), hooks: z.array(HookHandlerSchema, { error: "expected a list of hooks" }) }), {
    error: "expected a list of {matcher, hooks}",
  }),
);

/** One MCP server (§15): stdio (`command`, `args`, `env`) or `type: "http" | "sse"` with `url`, `headers`. */
export const McpServerSchema = obj({
  type: oneOf(["stdio", "http", "sse"] as const).optional(),
  command: str().optional(),
  args: strList().optional(),
  env: strMap().optional(),
  url: str("a URL string").optional(),
  headers: strMap().optional(),
});
export const McpServersSchema = mapOf(McpServerSchema);

export const SandboxSettingsSchema = obj({
  enabled: bool().optional(),
  network: bool().optional(),
  writable: strList("a list of paths").optional(),
  allowed_domains: strList("a list of domains").optional(),
  env_passthrough: strList("a list of variable names").optional(),
});

export const PermissionsSchema = obj({
  allow: strList("a list of rules like \"bash(git *)\"").optional(),
  deny: strList("a list of rules like \"bash(rm *)\"").optional(),
});

/** Delegation levels, least to most delegation (§11); shared files may only move down this list. */
export const DELEGATION_LEVELS = ["manual", "balanced", "aggressive"] as const;

/**
 * Every key Larik itself reads (§26). Unknown keys pass through untouched.
 * Reserved output keys (`shared_hooks`, `shared_mcp_servers`, `shared_extra`) are not accepted
 * from files; see `docs/config.md`.
 */
export const SettingsSchema = obj({
  model: str("a model spec like \"provider/model\"").optional(),
  effort: oneOf(EFFORTS as unknown as readonly ["low", "medium", "high", "xhigh", "max"]).optional(),
  mode: oneOf(PERMISSION_MODES as unknown as readonly ["default", "accept-edits", "plan", "auto", "yolo"]).optional(),
  max_turns: positiveInt().optional(),
  theme: str().optional(),
  appearance: str().optional(),
  verbose: bool().optional(),
  spinner_tips: bool().optional(),
  prompt_suggestions: bool().optional(),
  auto_compact: bool().optional(),
  token_saver: bool().optional(),
  notifications: z.union([bool(), str()], { error: "expected true, false or a string" }).optional(),
  language: str().optional(),
  mouse: bool().optional(),
  editor_mode: str().optional(),
  keybindings: mapOf(z.unknown()).optional(),
  status_line: z.unknown().optional(),
  statusLine: z.unknown().optional(),
  sidebar: z.unknown().optional(),
  debug: bool().optional(),
  debug_retention_days: nonNegative("a number of days ≥ 0").optional(),
  // negative keeps snapshots forever (LARIK-REFERENCE §8)
  checkpoint_retention_days: num().optional(),
  telemetry: obj({ otlp_endpoint: str("a URL string").optional() }).optional(),
  permissions: PermissionsSchema.optional(),
  providers: mapOf(ProviderSettingsSchema).optional(),
  models: mapOf(ModelSettingsSchema).optional(),
  /** Seconds; negative waits forever. */
  stall_timeout: num().optional(),
  roles: mapOf(str("a model spec like \"provider/model\"")).optional(),
  fallbacks: mapOf(strList("a list of model specs")).optional(),
  role_options: mapOf(
    obj({
      isolation: str().optional(),
      max_turns: positiveInt().optional(),
      context: str().optional(),
    }),
  ).optional(),
  delegation: oneOf(DELEGATION_LEVELS).optional(),
  budget: obj({
    /** USD per session. */
    session_usd: nonNegative("an amount in USD ≥ 0").optional(),
    /** Fraction of the budget at which one warning is shown. */
    warn_at: nonNegative("a fraction between 0 and 1").max(1, { error: "expected a fraction between 0 and 1" }).optional(),
    session_tokens: positiveInt().optional(),
  }).optional(),
  /** All tokens of a session, cache reads included. */
  session_tokens: positiveInt().optional(),
  execution: oneOf(["tools", "hybrid", "code"] as const).optional(),
  model_execution: mapOf(oneOf(["tools", "hybrid", "code"] as const)).optional(),
  sampling: mapOf(z.unknown()).optional(),
  model_sampling: mapOf(mapOf(z.unknown())).optional(),
  mcp_servers: McpServersSchema.optional(),
  mcpServers: McpServersSchema.optional(),
  approved_mcp_servers: mapOf(str("a config hash")).optional(),
  hooks: HooksSchema.optional(),
  approved_project_hooks: str("a hook-set hash").optional(),
  approved_configs: mapOf(str("a sha256 hex digest")).optional(),
  tool_search: oneOf(["auto", "on", "off"] as const).optional(),
  web: obj({
    fetch_disabled: bool().optional(),
    search: obj({
      provider: str().optional(),
      api_key_env: str("an environment variable name").optional(),
      url: str("a URL string").optional(),
      disabled: bool().optional(),
    }).optional(),
  }).optional(),
  memory: obj({ enabled: bool().optional() }).optional(),
  auto_mode: obj({ model: str("a model spec or role").optional() }).optional(),
  browser: obj({ enabled: bool().optional(), headless: bool().optional(), chrome_path: str("a path").optional() }).optional(),
  sandbox: SandboxSettingsSchema.optional(),
  lsp: mapOf(
    obj({
      disabled: bool().optional(),
      command: strList("an argv list like [\"gopls\"]").optional(),
      extensions: strList().optional(),
      root_markers: strList().optional(),
    }),
  ).optional(),
  skills: obj({ hide: strList("a list of skill names").optional() }).optional(),
  audio: obj({}).optional(),
});

export type SettingsInput = z.input<typeof SettingsSchema>;

/** A validation problem, already phrased for the user: `"<dotted key>": expected …, got <value>`. */
export interface SettingsIssue {
  /** Key path, e.g. `["providers", "local", "base_url"]`. */
  path: (string | number)[];
  message: string;
}

/** Shows a value briefly for an error message (`"ten"`, `12`, `[…]`). */
export function showValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (value !== null && typeof value === "object") return "an object";
  const s = JSON.stringify(value);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const k of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

/** Formats a key path as dotted text: `providers.local.base_url`, `permissions.allow[2]`. */
export function keyPath(path: readonly (string | number | symbol)[]): string {
  let out = "";
  for (const k of path) out += typeof k === "number" ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out;
}

/**
 * Validates raw settings. Returns the parsed object (unknown keys kept) or the issues found.
 * Follows zod 4's `safeParse`; messages come from the schema above.
 */
export function checkSettings(raw: Record<string, unknown>): { ok: true; value: Record<string, unknown> } | { ok: false; issues: SettingsIssue[] } {
  const r = SettingsSchema.safeParse(raw);
  if (r.success) return { ok: true, value: r.data as Record<string, unknown> };
  const issues = r.error.issues.map((i) => {
    const path = i.path.filter((k): k is string | number => typeof k !== "symbol");
    const got = i.code === "unrecognized_keys" ? "" : `, got ${showValue(valueAt(raw, path))}`;
    return { path, message: `"${keyPath(path)}": ${i.message}${got}` };
  });
  return { ok: false, issues };
}
