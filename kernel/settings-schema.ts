/**
 * The settings schema (LARIK-REFERENCE §26 "Keys"): a loose zod object, so every known key is
 * typed and every unknown key is kept for plugins. Each message is phrased "expected …" so a
 * file error reads `<file>: "<key>": expected …, got <value>`.
 */
import * as z from "zod/mini";
import { useEnglishErrors, valueAt } from "./kit/zod-english.js";
import { EFFORTS } from "./types.js";
import { PERMISSION_MODES, ruleSyntaxProblem } from "./permission.js";

const str = (what = "a string") => z.string({ error: `expected ${what}` });
const bool = () => z.boolean({ error: "expected true or false" });
const num = () => z.number({ error: "expected a number" });
const positiveInt = () => {
  const error = "expected a positive integer";
  return z.int({ error }).check(z.positive({ error }));
};
const nonNegative = (what = "a number ≥ 0") => z.number({ error: `expected ${what}` }).check(z.nonnegative({ error: `expected ${what}` }));
const strList = (what = "a list of strings") => z.array(str(), { error: `expected ${what}` });
const strMap = () => z.record(z.string(), str(), { error: "expected an object of strings" });
const oneOf = <T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `expected one of ${values.join(", ")}` });
/** A loose object: known keys typed, unknown keys kept. */
const obj = <S extends z.core.$ZodLooseShape>(shape: S) => z.looseObject(shape, { error: "expected an object" });
const mapOf = <T extends z.ZodMiniType>(value: T) => z.record(z.string(), value, { error: "expected an object" });

/** Delegation levels, least to most delegation (§11); shared files may only move down this list. */
export const DELEGATION_LEVELS = ["manual", "balanced", "aggressive"] as const;

/**
 * Builds the settings schema. Built on first use, not at import: it is about 150 zod schemas,
 * and a start-up without settings files never needs it (bench/startup.mjs).
 */
function buildSettingsSchema() {
  /** `providers.<name>` (§10 custom providers). `stall_timeout` in seconds; negative waits forever. */
  const ProviderSettingsSchema = obj({
    type: z.optional(str()),
    base_url: z.optional(str("a URL string")),
    api_key: z.optional(str()),
    api_key_env: z.optional(str("an environment variable name")),
    /** Tokens (Ollama `num_ctx`). */
    context_length: z.optional(positiveInt()),
    stall_timeout: z.optional(num()),
    headers: z.optional(strMap()),
  });

  /** `models.<provider/model or id>`: catalog overrides. Windows in tokens; prices in USD per million tokens. */
  const ModelSettingsSchema = obj({
    provider: z.optional(str()),
    context_window: z.optional(positiveInt()),
    max_output: z.optional(positiveInt()),
    input_price: z.optional(nonNegative()),
    output_price: z.optional(nonNegative()),
    cache_read_price: z.optional(nonNegative()),
    cache_write_price: z.optional(nonNegative()),
  });

  /** One hook handler (§14, Claude Code format). `timeout` in seconds. */
  const HookHandlerSchema = obj({
    type: oneOf(["command", "prompt"] as const),
    command: z.optional(str()),
    prompt: z.optional(str()),
    model: z.optional(str()),
    timeout: z.optional(positiveInt()),
  });
  /** `hooks: {<Event>: [{matcher?, hooks: [...]}]}` (§14). */
  const HooksSchema = mapOf(
    z.array(obj({ matcher: z.optional(str()), hooks: z.array(HookHandlerSchema, { error: "expected a list of hooks" }) }), {
      error: "expected a list of {matcher, hooks}",
    }),
  );

  /** One MCP server (§15): stdio (`command`, `args`, `env`) or `type: "http" | "sse"` with `url`, `headers`. */
  const McpServerSchema = obj({
    type: z.optional(oneOf(["stdio", "http", "sse"] as const)),
    command: z.optional(str()),
    args: z.optional(strList()),
    env: z.optional(strMap()),
    url: z.optional(str("a URL string")),
    headers: z.optional(strMap()),
  });
  const McpServersSchema = mapOf(McpServerSchema);

  const SandboxSettingsSchema = obj({
    enabled: z.optional(bool()),
    network: z.optional(bool()),
    writable: z.optional(strList("a list of paths")),
    allowed_domains: z.optional(strList("a list of domains")),
    env_passthrough: z.optional(strList("a list of variable names")),
  });

  /** A permission rule (§4): `tool` or `tool(pattern)`. */
  const rule = () =>
    str().check(z.refine((r: string) => ruleSyntaxProblem(r) === undefined, { error: (iss) => `not a rule: ${ruleSyntaxProblem(String(iss.input))}` }));
  const PermissionsSchema = obj({
    allow: z.optional(z.array(rule(), { error: 'expected a list of rules like "bash(git *)"' })),
    deny: z.optional(z.array(rule(), { error: 'expected a list of rules like "bash(rm *)"' })),
  });


  /**
   * Every key Larik itself reads (§26). Unknown keys pass through untouched.
   * Reserved output keys (`shared_hooks`, `shared_mcp_servers`, `shared_extra`) are not accepted
   * from files; see `docs/config.md`.
   */
  return obj({
    model: z.optional(str("a model spec like \"provider/model\"")),
    effort: z.optional(oneOf(EFFORTS as unknown as readonly ["low", "medium", "high", "xhigh", "max"])),
    mode: z.optional(oneOf(PERMISSION_MODES as unknown as readonly ["default", "accept-edits", "plan", "auto", "yolo"])),
    max_turns: z.optional(positiveInt()),
    theme: z.optional(str()),
    appearance: z.optional(str()),
    verbose: z.optional(bool()),
    spinner_tips: z.optional(bool()),
    prompt_suggestions: z.optional(bool()),
    auto_compact: z.optional(bool()),
    token_saver: z.optional(bool()),
    notifications: z.optional(z.union([bool(), str()], { error: "expected true, false or a string" })),
    language: z.optional(str()),
    mouse: z.optional(bool()),
    editor_mode: z.optional(str()),
    keybindings: z.optional(mapOf(z.unknown())),
    status_line: z.optional(z.unknown()),
    statusLine: z.optional(z.unknown()),
    sidebar: z.optional(z.unknown()),
    debug: z.optional(bool()),
    debug_retention_days: z.optional(nonNegative("a number of days ≥ 0")),
    // negative keeps snapshots forever (LARIK-REFERENCE §8)
    checkpoint_retention_days: z.optional(num()),
    telemetry: z.optional(obj({ otlp_endpoint: z.optional(str("a URL string")) })),
    permissions: z.optional(PermissionsSchema),
    providers: z.optional(mapOf(ProviderSettingsSchema)),
    models: z.optional(mapOf(ModelSettingsSchema)),
    /** Seconds; negative waits forever. */
    stall_timeout: z.optional(num()),
    roles: z.optional(mapOf(str("a model spec like \"provider/model\""))),
    fallbacks: z.optional(mapOf(strList("a list of model specs"))),
    role_options: z.optional(mapOf(
      obj({
        isolation: z.optional(str()),
        max_turns: z.optional(positiveInt()),
        context: z.optional(str()),
      }),
    )),
    delegation: z.optional(oneOf(DELEGATION_LEVELS)),
    budget: z.optional(obj({
      /** USD per session. */
      session_usd: z.optional(nonNegative("an amount in USD ≥ 0")),
      /** Fraction of the budget at which one warning is shown. */
      warn_at: z.optional(nonNegative("a fraction between 0 and 1").check(z.maximum(1, { error: "expected a fraction between 0 and 1" }))),
      session_tokens: z.optional(positiveInt()),
    })),
    /** All tokens of a session, cache reads included. */
    session_tokens: z.optional(positiveInt()),
    execution: z.optional(oneOf(["tools", "hybrid", "code"] as const)),
    model_execution: z.optional(mapOf(oneOf(["tools", "hybrid", "code"] as const))),
    sampling: z.optional(mapOf(z.unknown())),
    model_sampling: z.optional(mapOf(mapOf(z.unknown()))),
    mcp_servers: z.optional(McpServersSchema),
    mcpServers: z.optional(McpServersSchema),
    approved_mcp_servers: z.optional(mapOf(str("a config hash"))),
    hooks: z.optional(HooksSchema),
    approved_project_hooks: z.optional(str("a hook-set hash")),
    /** Config path → `{ sha256, files: { <path>: sha256 }, dirs: { <folder>: { <name>: kind } } }`; a bare digest is the old form, kept readable to ask again. */
    approved_configs: z.optional(mapOf(z.union([
      str(),
      obj({ sha256: str("a sha256 hex digest"), files: mapOf(str("a sha256 hex digest")), dirs: z.optional(mapOf(mapOf(str("an entry kind")))) }),
    ], { error: "expected {sha256, files} as `larik config approve` records it" }))),
    tool_search: z.optional(oneOf(["auto", "on", "off"] as const)),
    web: z.optional(obj({
      fetch_disabled: z.optional(bool()),
      search: z.optional(obj({
        provider: z.optional(str()),
        api_key_env: z.optional(str("an environment variable name")),
        url: z.optional(str("a URL string")),
        disabled: z.optional(bool()),
      })),
    })),
    memory: z.optional(obj({ enabled: z.optional(bool()) })),
    auto_mode: z.optional(obj({ model: z.optional(str("a model spec or role")) })),
    browser: z.optional(obj({ enabled: z.optional(bool()), headless: z.optional(bool()), chrome_path: z.optional(str("a path")) })),
    sandbox: z.optional(SandboxSettingsSchema),
    lsp: z.optional(mapOf(
      obj({
        disabled: z.optional(bool()),
        command: z.optional(strList("an argv list like [\"gopls\"]")),
        extensions: z.optional(strList()),
        root_markers: z.optional(strList()),
      }),
    )),
    skills: z.optional(obj({ hide: z.optional(strList("a list of skill names")) })),
    audio: z.optional(obj({})),
  });
}

let built: ReturnType<typeof buildSettingsSchema> | undefined;

/** The settings schema (§26 "Keys"), a loose zod/mini object built once on first call. */
export function settingsSchema(): ReturnType<typeof buildSettingsSchema> {
  return (built ??= buildSettingsSchema());
}

/** A validation problem, already phrased for the user: `"<dotted key>": expected …, got <value>`. */
export interface SettingsIssue {
  /** Key path, e.g. `["providers", "local", "base_url"]`. */
  path: (string | number)[];
  message: string;
}

/** Shows a value briefly for an error message (`"ten"`, `12`, `[…]`). */
function showValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (value !== null && typeof value === "object") return "an object";
  const s = JSON.stringify(value);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

/** Formats a key path as dotted text: `providers.local.base_url`, `permissions.allow[2]`. */
function keyPath(path: readonly (string | number | symbol)[]): string {
  let out = "";
  for (const k of path) out += typeof k === "number" ? `[${k}]` : out ? `.${String(k)}` : String(k);
  return out;
}

/**
 * Validates raw settings. Returns the parsed object (unknown keys kept) or the issues found.
 * Follows zod 4's `safeParse`; messages come from the schema above.
 */
export function checkSettings(raw: Record<string, unknown>): { ok: true; value: Record<string, unknown> } | { ok: false; issues: SettingsIssue[] } {
  useEnglishErrors();
  const r = settingsSchema().safeParse(raw);
  if (r.success) return { ok: true, value: r.data as Record<string, unknown> };
  const issues = r.error.issues.map((i) => {
    const path = i.path.filter((k): k is string | number => typeof k !== "symbol");
    const got = i.code === "unrecognized_keys" ? "" : `, got ${showValue(valueAt(raw, path))}`;
    return { path, message: `"${keyPath(path)}": ${i.message}${got}` };
  });
  return { ok: false, issues };
}
