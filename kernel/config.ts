/**
 * Settings and config files (LARIK-REFERENCE §26, §31; invariant 7: shared config may only
 * tighten). The full user guide is `docs/config.md`.
 *
 * JSON layers, merged in this order (later wins where a key may be set at all):
 *   personal `larik.config.ts` settings (trusted) → `~/.config/larik/config.json` (trusted) →
 *   `.mcp.json` (shared; `mcpServers` only) → `.larik/settings.json` (shared) →
 *   approved project `larik.config.ts` settings (trusted) → private project file (trusted).
 * Shared files sit in the git root and, when different, in `cwd` (cwd after root).
 */
import { nearestName } from "./kit/nearest-name.js";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, open, stat, unlink } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import type { Plugin } from "./plugin.js";
import { canonicalDir, configDir, gitRoot, personalSettingsFile, privateProjectFile, tildePath } from "./paths.js";
import { checkSettings, DELEGATION_LEVELS, settingsSchema, type SettingsIssue } from "./settings-schema.js";
import { type ConfigSource, evaluateConfig, findPersonalConfig, findProjectConfig, readConfigSource, resolvePluginSpecs } from "./config-files.js";
import { type ConfigApproval, dirsChangedSinceApproval, filesChangedSinceApproval, traceProjectConfig } from "./config-approval.js";
import { ConfigError, oneLine } from "./kit/one-line.js";
import { writeAtomic } from "./kit/write-atomic.js";


/** `hooks` in Claude Code format (§14): event name → matcher groups (checked by the schema). */
export type HooksSettings = Record<
  string,
  { matcher?: string; hooks: { type: "command" | "prompt"; command?: string; prompt?: string; model?: string; timeout?: number }[] }[]
>;

/**
 * Merged, validated settings. Unknown keys are kept for plugins to read (from trusted files at
 * the top level; from shared files only under `shared_extra`).
 *
 * Outputs that never come straight from a file:
 * - `mcp_servers`: trusted servers (`mcpServers` is folded in); they start without approval.
 * - `shared_mcp_servers`: servers from `.mcp.json` / `.larik/settings.json`; start only when
 *   `approved_mcp_servers[name]` matches their config hash (§15).
 * - `hooks`: trusted hooks (always run). `shared_hooks`: hooks from `.larik/settings.json`; run
 *   only when `approved_project_hooks` matches their hash (§14).
 * - `approved_*`: read only from the private project file.
 * - `shared_extra`: keys Larik does not know, from shared files (a plugin reading one must treat
 *   it as written by the repository's author).
 */
export type Settings = Record<string, unknown> & {
  model?: string;
  effort?: string;
  mode?: string;
  /** Model rounds per turn (default 200). */
  max_turns?: number;
  permissions?: { allow?: string[]; deny?: string[] };
  providers?: Record<string, Record<string, unknown>>;
  models?: Record<string, Record<string, unknown>>;
  roles?: Record<string, string>;
  fallbacks?: Record<string, string[]>;
  /** Seconds of stream silence; negative waits forever. */
  stall_timeout?: number;
  /** Trusted hooks, {@link HooksSettings} shape; typed loosely so callers may build them freely. */
  hooks?: Record<string, unknown>;
  shared_hooks?: Record<string, unknown>;
  /** Server name → server config (§15). */
  mcp_servers?: Record<string, unknown>;
  /** Server name → server config; always present after loading (`{}` when the project has none). */
  shared_mcp_servers?: Record<string, unknown>;
  /** MCP server name → hash of its approved config. */
  approved_mcp_servers?: Record<string, string>;
  /** Hash of the approved shared hook set. */
  approved_project_hooks?: string;
  /**
   * Absolute config-file path → what its approval pins. A bare sha256 hex string is the form of
   * Larik versions that pinned only the config file; it no longer counts as approved.
   */
  approved_configs?: Record<string, ConfigApproval | string>;
  sandbox?: Record<string, unknown> & { enabled?: boolean; network?: boolean; writable?: string[]; allowed_domains?: string[]; env_passthrough?: string[] };
  shared_extra?: Record<string, unknown>;
};

/** The shape of `larik.config.ts`'s default export. */
export interface LarikConfig extends Record<string, unknown> {
  /** A preset: a list of plugins (or module paths) replacing the default preset. */
  preset?: PluginSpec[];
  /** Plugins added after the preset. */
  plugins?: PluginSpec[];
  /** Plugin names to leave out. */
  disable?: string[];
}
/** A plugin value, or a module path / package name whose default export is one. */
export type PluginSpec = Plugin | string;

/** Identity helper that types a `larik.config.ts`. */
export function defineConfig(config: LarikConfig): LarikConfig {
  return config;
}

/** What {@link loadSettings} returns: the merged, validated JSON settings layers (§26). */
export interface LoadedSettings {
  settings: Settings;
  /** One-line warnings (ignored shared values, skipped unapproved config). */
  notices: string[];
}

/** What {@link loadConfig} returns: settings plus the plugins the config files ask for. */
export interface LoadedConfig extends LoadedSettings {
  /** Plugins from `plugins` of the personal config, then of the approved project config. */
  plugins: Plugin[];
  /**
   * For each of `plugins`, the config file it came from as messages name it (`~/.config/larik/
   * larik.config.ts`, `larik.config.ts`): a plugin of the same name in both is then told apart.
   */
  pluginSources: string[];
  /** A preset replacing the default one (project config's wins over personal's), resolved. */
  preset?: Plugin[];
  /** Plugin names to leave out (union of both configs). */
  disable: string[];
  /** Config files that were evaluated, canonical absolute paths. */
  configFiles: string[];
}

/** Where a settings file sits in the trust model. */
export type SettingsTrust = "personal" | "shared" | "private";

/** A settings file and its trust level, in merge order. */
export interface SettingsFile {
  path: string;
  trust: SettingsTrust;
  kind: "config.json" | ".mcp.json" | "settings.json" | "project";
}

/** Kernel default for `max_turns`, model rounds per turn (§0: 200); shared files may only go below it. */
export const DEFAULT_MAX_TURNS = 200;
/** Default per-role turn cap (§11 `role_options.<role>.max_turns`). */
const DEFAULT_ROLE_MAX_TURNS = 100;
/** Default budget warning fraction (§9 `budget.warn_at`). */
const DEFAULT_WARN_AT = 0.8;
/** Assumed delegation level when no trusted file sets one; shared files may only go down from it. */
const DEFAULT_DELEGATION = "balanced";
/** Keys computed by the loader; files may not set them. */
const RESERVED = new Set(["shared_hooks", "shared_mcp_servers", "shared_extra"]);
const APPROVALS = new Set(["approved_mcp_servers", "approved_project_hooks", "approved_configs"]);
/** Keys a shared file may set like a personal one: they widen nothing (§26 leaves them open). */
const SHARED_NEUTRAL = new Set([
  "language",
  "theme",
  "appearance",
  "verbose",
  "spinner_tips",
  "auto_compact",
  "token_saver",
  "notifications",
  "tool_search",
]);
let knownKeys: Set<string> | undefined;
/** Keys the settings schema knows, built on first use with the schema. */
const knownKeySet = () => (knownKeys ??= new Set(Object.keys(settingsSchema().shape)));
const isKnownKey = (key: string) => knownKeySet().has(key);
/** The known key at most two edits (insert, delete, substitute, swap) from `key`, if any. */
const nearestKnownKey = (key: string) => nearestName(key, knownKeySet());
/**
 * The keys the schema knows inside the known key `key` when its value is an object of fixed
 * keys (`permissions` → allow, deny); undefined for a map (`providers`) or a plain value.
 */
function knownKeysIn(key: string): string[] | undefined {
  type Def = { _zod?: { def?: { innerType?: Def; shape?: Record<string, unknown> } } };
  let schema = (settingsSchema().shape as Record<string, Def>)[key];
  while (schema?._zod?.def?.innerType) schema = schema._zod.def.innerType;
  const shape = schema?._zod?.def?.shape;
  return shape ? Object.keys(shape) : undefined;
}

/** Maps whose entries are whole units (a server, a provider): a bad field drops its entry. */
const UNIT_MAPS = new Set(["mcp_servers", "providers", "models", "lsp", "role_options", "fallbacks", "model_sampling"]);
/** A lock older than this (ms) is taken to belong to a crashed process. */
const LOCK_STALE_MS = 5_000;
/** How long to wait for a live lock (ms); longer than stale so a crashed holder never blocks. */
const LOCK_WAIT_MS = 10_000;

// ───────────────────────── file names and labels ─────────────────────────

/** Every JSON settings file of `cwd`, existing or not, in merge order (private last). */
export function settingsFiles(cwd: string, env: NodeJS.ProcessEnv = process.env): SettingsFile[] {
  const dir = canonicalDir(cwd);
  const root = gitRoot(dir) ?? dir;
  const dirs = root === dir ? [dir] : [root, dir];
  return [
    { path: personalSettingsFile(env), trust: "personal", kind: "config.json" },
    ...dirs.map((d): SettingsFile => ({ path: join(d, ".mcp.json"), trust: "shared", kind: ".mcp.json" })),
    ...dirs.map((d): SettingsFile => ({ path: join(d, ".larik", "settings.json"), trust: "shared", kind: "settings.json" })),
    { path: privateProjectFile(dir, env), trust: "private", kind: "project" },
  ];
}

/** A path as shown in messages: `~/…` under the home directory, relative under `cwd`, else absolute. */
export function displayPath(file: string, cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const under = (base: string) => file === base || file.startsWith(base.endsWith(sep) ? base : base + sep);
  const shown = tildePath(file, env);
  if (under(configDir(env)) && shown !== file) return shown;
  const canonCwd = canonicalDir(cwd);
  const root = gitRoot(canonCwd) ?? canonCwd;
  if (under(root)) return relative(canonCwd, file) || file;
  return shown;
}

// ───────────────────────── reading JSON ─────────────────────────

type ReadResult = { kind: "missing" } | { kind: "ok"; data: Record<string, unknown> } | { kind: "error"; message: string };

/** Line and column (1-based) of a character offset. */
function lineColumn(text: string, pos: number): string {
  const before = text.slice(0, pos);
  const line = before.split("\n").length;
  const column = pos - before.lastIndexOf("\n");
  return `line ${line}, column ${column}`;
}

function errorPosition(text: string, message: string): number | undefined {
  const m = /at position (\d+)/.exec(message);
  if (m) return Number(m[1]);
  // V8 gives no offset for some errors ("Unexpected token '}', … is not valid JSON"): find the
  // longest prefix that is still an unfinished-but-valid start of JSON; the error is right after it.
  const viable = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n));
      return true;
    } catch (e) {
      const msg = (e as Error).message;
      if (/Unexpected end of JSON input/.test(msg)) return true;
      const p = /at position (\d+)/.exec(msg);
      return !!p && Number(p[1]) >= n;
    }
  };
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (viable(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Parses settings JSON text; "" or whitespace means no settings (§26 "Empty files = no settings"). */
function parseSettingsJson(text: string, label: string): ReadResult {
  if (!text.trim()) return { kind: "missing" };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    const raw = (err as Error).message;
    const pos = errorPosition(text, raw);
    // V8 quotes the text around the error, newlines and all ("Unexpected token ']', ..."x",]\n}"
    // is not valid JSON"): the line and column say where, so the quote goes
    const what = raw
      .replace(/ (?:in JSON )?at position \d+.*$/s, "")
      .replace(/, (?:"|\.\.\.)[\s\S]*" is not valid JSON$/, "")
      .split("\n")[0]!;
    return { kind: "error", message: `${label}: invalid JSON at ${lineColumn(text, pos ?? text.length)}: ${what}` };
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    return { kind: "error", message: `${label}: expected a JSON object ({ … }) at the top level` };
  }
  return { kind: "ok", data: data as Record<string, unknown> };
}

async function readSettingsFile(file: string, label: string): Promise<ReadResult> {
  let text: string;
  // Most of these files do not exist; a failed read costs an exception (~0.1 ms), a check does not.
  if (!existsSync(file)) return { kind: "missing" };
  try {
    // Sync: settings files are small and read at every start, where each fs/promises read costs
    // three thread-pool round trips (open, read, close) that the event loop waits for in turn.
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "missing" };
    return { kind: "error", message: `${label}: cannot read it (${code ?? oneLine(err)})` };
  }
  // A leading BOM is legal in files from some editors but not in JSON.parse.
  return parseSettingsJson(text.replace(/^\uFEFF/, ""), label);
}

/** Reads a trusted file: missing → {}, any problem → ConfigError. */
async function readTrusted(file: string, label: string): Promise<Record<string, unknown>> {
  const r = await readSettingsFile(file, label);
  if (r.kind === "error") throw new ConfigError(r.message);
  return r.kind === "ok" ? r.data : {};
}

/** Problems a personal file's error names one by one (on its one line), before "and N more". */
const SHOWN_ISSUES = 3;

/**
 * The error for a trusted file's bad values: each named, so that fixing one does not reveal the
 * next only at the next start, in the order of their keys in the file, with the typos of known
 * keys among them (the notices a start that goes on would give).
 */
function issueError(label: string, data: Record<string, unknown>, issues: SettingsIssue[], codeOnly: boolean): ConfigError {
  const keys = Object.keys(data);
  const at = (key: unknown) => {
    const i = keys.indexOf(String(key));
    return i < 0 ? keys.length : i;
  };
  const problems = [
    ...issues.map((i) => ({ at: at(i.path[0]), message: i.message })),
    ...typos(data, codeOnly).map((t) => ({ at: at(t.key), message: t.message })),
  ].sort((x, y) => x.at - y.at);
  const shown = problems.slice(0, SHOWN_ISSUES).map((p) => p.message).join("; ");
  const rest = problems.length - SHOWN_ISSUES;
  const more = rest > 0 ? ` (and ${rest} more problem${rest > 1 ? "s" : ""})` : "";
  return new ConfigError(`${label}: ${shown}${more}`);
}

/** Validates a trusted layer. @throws ConfigError naming the file and the key. */
function validateTrusted(data: Record<string, unknown>, label: string, codeOnly = false): Record<string, unknown> {
  const r = checkSettings(data);
  if (!r.ok) throw issueError(label, data, r.issues, codeOnly);
  return r.value;
}

function deletePath(obj: Record<string, unknown>, path: (string | number)[]): void {
  let cur: unknown = obj;
  for (const k of path.slice(0, -1)) {
    if (!cur || typeof cur !== "object") return;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  if (cur && typeof cur === "object") delete (cur as Record<string | number, unknown>)[path[path.length - 1]!];
}

/** Validates a shared layer: each bad value is dropped with a one-line notice, the rest kept. */
function validateShared(data: Record<string, unknown>, label: string, notices: string[]): Record<string, unknown> {
  const copy = structuredClone(data);
  for (let round = 0; round < 100; round++) {
    const r = checkSettings(copy);
    if (r.ok) return r.value;
    // A permission rule stands alone: drop just that rule (dropping a shared deny list for one
    // typo would loosen it); last index first, so the others stay where the file has them.
    const isRule = (i: SettingsIssue) => i.path[0] === "permissions" && typeof i.path[2] === "number";
    const rules = r.issues.filter(isRule);
    for (const issue of rules) notices.push(`${label}: ignored ${issue.message}`);
    for (const issue of [...rules].sort((a, b) => (b.path[2] as number) - (a.path[2] as number))) {
      ((copy.permissions as Record<string, unknown[]>)[issue.path[1] as string] ?? []).splice(issue.path[2] as number, 1);
    }
    for (const issue of r.issues) {
      if (isRule(issue)) continue;
      // Drop the whole list or entry holding the bad value, not one element of it: half an MCP
      // server or provider would be a different server or provider than the one written.
      let cut = issue.path.findIndex((k) => typeof k === "number");
      if (cut === -1) cut = issue.path.length;
      if (UNIT_MAPS.has(String(issue.path[0]))) cut = Math.min(cut, 2);
      const path = issue.path.slice(0, cut);
      if (!path.length) return {};
      notices.push(`${label}: ignored ${issue.message}`);
      deletePath(copy, path);
    }
  }
  return {};
}

// ───────────────────────── merging ─────────────────────────

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function deepMerge(a: unknown, b: unknown): unknown {
  if (!isObject(a) || !isObject(b)) return structuredClone(b);
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = deepMerge(a[k], v);
  return out;
}

const union = (a: unknown, b: unknown): string[] => [...new Set([...(Array.isArray(a) ? a : []), ...(Array.isArray(b) ? b : [])])] as string[];

function concatHooks(into: Record<string, unknown> | undefined, add: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(into ?? {}) };
  for (const [event, groups] of Object.entries((add ?? {}) as HooksSettings)) {
    out[event] = [...((out[event] as unknown[] | undefined) ?? []), ...structuredClone(groups)];
  }
  return out;
}

/** `mcpServers` and `statusLine` are Claude Code spellings; fold them into Larik's keys. */
function normalize(data: Record<string, unknown>): Record<string, unknown> {
  const out = { ...data };
  if (isObject(out.mcpServers)) out.mcp_servers = { ...out.mcpServers, ...(isObject(out.mcp_servers) ? out.mcp_servers : {}) };
  delete out.mcpServers;
  if (out.statusLine !== undefined && out.status_line === undefined) out.status_line = out.statusLine;
  delete out.statusLine;
  return out;
}

/** Drops keys a file may not set at its trust level, with one notice. */
function dropNotAllowed(data: Record<string, unknown>, label: string, isPrivate: boolean, notices: string[]): Record<string, unknown> {
  const out = { ...data };
  const dropped: string[] = [];
  for (const k of Object.keys(out)) {
    if (RESERVED.has(k) || (!isPrivate && APPROVALS.has(k))) {
      dropped.push(k);
      delete out[k];
    }
  }
  if (dropped.length) {
    const why = [
      dropped.some((k) => APPROVALS.has(k)) ? "approvals are read only from the private project file" : "",
      dropped.some((k) => RESERVED.has(k)) ? "shared_* keys are computed by Larik" : "",
    ];
    notices.push(`${label}: ignored ${dropped.map((k) => `"${k}"`).join(", ")}: ${why.filter(Boolean).join("; ")}`);
  }
  return out;
}

/** Applies a trusted layer: later wins, objects merge, allow/deny rules and hooks accumulate. */
function mergeTrusted(acc: Settings, data: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(data)) {
    if (key === "permissions" && isObject(value)) {
      const cur = (acc.permissions ?? {}) as Record<string, unknown>;
      const next = deepMerge(cur, value) as Record<string, unknown>;
      for (const k of ["allow", "deny"]) if (cur[k] !== undefined || value[k] !== undefined) next[k] = union(cur[k], value[k]);
      acc.permissions = next as Settings["permissions"];
    } else if (key === "hooks") {
      acc.hooks = concatHooks(acc.hooks, value);
    } else if (key === "mcp_servers" && isObject(value)) {
      // A server is one unit: a later file replaces it whole rather than mixing transports.
      acc.mcp_servers = { ...(acc.mcp_servers ?? {}), ...(structuredClone(value) as Record<string, Record<string, unknown>>) };
    } else if (key === "skills" && isObject(value)) {
      const cur = (acc.skills ?? {}) as Record<string, unknown>;
      const next = deepMerge(cur, value) as Record<string, unknown>;
      if (cur.hide !== undefined || value.hide !== undefined) next.hide = union(cur.hide, value.hide);
      acc.skills = next;
    } else {
      acc[key] = deepMerge(acc[key], value);
    }
  }
}

/**
 * Applies a shared layer (invariant 7): deny rules add up; caps may only go down; sandbox may
 * only be enabled; features may only be turned off; hooks and MCP servers are kept apart for
 * approval; everything else Larik knows is ignored with one notice naming the keys.
 */
function applyShared(acc: Settings, data: Record<string, unknown>, label: string, personalLabel: string, notices: string[]): void {
  const ignored: string[] = [];
  const get = (path: string[]): unknown => path.reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), acc);
  const set = (path: string[], value: unknown): void => {
    let o: Record<string, unknown> = acc;
    for (const k of path.slice(0, -1)) {
      if (!isObject(o[k])) o[k] = {};
      o = o[k] as Record<string, unknown>;
    }
    o[path[path.length - 1]!] = value;
  };
  /** Only lower a number: shared values above the current one are reported, not applied. */
  const lower = (path: string[], value: unknown, dflt: number): void => {
    if (typeof value !== "number") return;
    const cur = get(path);
    const current = typeof cur === "number" ? cur : dflt;
    if (value <= current) set(path, value);
    else ignored.push(`"${path.join(".")}" (may only lower it: ${value} > ${current})`);
  };
  /** Only move a flag one way (`to`); the other way is reported. */
  const only = (path: string[], value: unknown, to: boolean): void => {
    if (value === to) set(path, to);
    else if (value !== undefined) ignored.push(`"${path.join(".")}" (may only be ${to})`);
  };
  /** Known keys a shared file may not set; an unknown one is no loosening (a typo has its notice). */
  const rest = (obj: Record<string, unknown>, prefix: string, handled: string[]): void => {
    const known = knownKeysIn(prefix);
    for (const k of Object.keys(obj)) if (!handled.includes(k) && (!known || known.includes(k))) ignored.push(`"${prefix}.${k}"`);
  };

  for (const [key, value] of Object.entries(data)) {
    switch (key) {
      case "permissions": {
        const p = value as Record<string, unknown>;
        if (p.deny !== undefined) set(["permissions", "deny"], union(get(["permissions", "deny"]), p.deny));
        rest(p, "permissions", ["deny"]);
        break;
      }
      case "max_turns":
        lower([key], value, DEFAULT_MAX_TURNS);
        break;
      case "session_tokens":
        lower([key], value, Infinity);
        break;
      case "budget": {
        const b = value as Record<string, unknown>;
        if (b.session_usd !== undefined) lower(["budget", "session_usd"], b.session_usd, Infinity);
        if (b.warn_at !== undefined) lower(["budget", "warn_at"], b.warn_at, DEFAULT_WARN_AT);
        if (b.session_tokens !== undefined) lower(["budget", "session_tokens"], b.session_tokens, Infinity);
        rest(b, "budget", ["session_usd", "warn_at", "session_tokens"]);
        break;
      }
      case "role_options":
        for (const [role, opts] of Object.entries(value as Record<string, Record<string, unknown>>)) {
          if (opts.max_turns !== undefined) lower(["role_options", role, "max_turns"], opts.max_turns, DEFAULT_ROLE_MAX_TURNS);
          rest(opts, `role_options.${role}`, ["max_turns"]);
        }
        break;
      case "delegation": {
        const cur = typeof acc.delegation === "string" ? acc.delegation : DEFAULT_DELEGATION;
        const rank = (v: unknown) => DELEGATION_LEVELS.indexOf(v as (typeof DELEGATION_LEVELS)[number]);
        if (rank(value) <= rank(cur)) acc.delegation = value;
        else ignored.push(`"delegation" (may only lower it: ${String(value)} > ${cur})`);
        break;
      }
      case "sandbox": {
        const s = value as Record<string, unknown>;
        only(["sandbox", "enabled"], s.enabled, true);
        rest(s, "sandbox", ["enabled"]);
        break;
      }
      case "lsp":
        for (const [name, opts] of Object.entries(value as Record<string, Record<string, unknown>>)) {
          only(["lsp", name, "disabled"], opts.disabled, true);
          rest(opts, `lsp.${name}`, ["disabled"]);
        }
        break;
      case "web": {
        const w = value as Record<string, unknown>;
        only(["web", "fetch_disabled"], w.fetch_disabled, true);
        if (isObject(w.search)) {
          only(["web", "search", "disabled"], w.search.disabled, true);
          rest(w.search, "web.search", ["disabled"]);
        }
        rest(w, "web", ["fetch_disabled", "search"]);
        break;
      }
      case "memory":
      case "browser": {
        const f = value as Record<string, unknown>;
        only([key, "enabled"], f.enabled, false);
        rest(f, key, ["enabled"]);
        break;
      }
      case "prompt_suggestions":
        only([key], value, false);
        break;
      case "skills": {
        const s = value as Record<string, unknown>;
        if (s.hide !== undefined) set(["skills", "hide"], union(get(["skills", "hide"]), s.hide));
        rest(s, "skills", ["hide"]);
        break;
      }
      case "hooks":
        acc.shared_hooks = concatHooks(acc.shared_hooks, value);
        break;
      case "mcp_servers":
        acc.shared_mcp_servers = { ...(acc.shared_mcp_servers ?? {}), ...(structuredClone(value) as Record<string, Record<string, unknown>>) };
        break;
      default:
        if (SHARED_NEUTRAL.has(key)) acc[key] = deepMerge(acc[key], value);
        else if (isKnownKey(key)) ignored.push(`"${key}"`);
        else acc.shared_extra = { ...(acc.shared_extra ?? {}), [key]: structuredClone(value) };
    }
  }
  if (ignored.length) {
    notices.push(`${label}: ignored ${ignored.join(", ")}: a shared project file may only tighten settings (set these in ${personalLabel})`);
  }
}

/** One input to the merge. */
interface Layer {
  label: string;
  trust: SettingsTrust;
  data: Record<string, unknown>;
}

/**
 * Merges layers in order. Trusted data must already be validated; shared data is validated here
 * (bad values dropped with a notice).
 */
function mergeLayers(layers: Layer[], personalLabel: string, notices: string[]): Settings {
  const acc: Settings = {};
  for (const layer of layers) {
    const data = dropNotAllowed(normalize(layer.data), layer.label, layer.trust === "private", notices);
    if (layer.trust === "shared") applyShared(acc, validateShared(data, layer.label, notices), layer.label, personalLabel, notices);
    else mergeTrusted(acc, data);
  }
  // Present even when empty, so the MCP plugin knows the loader already read `.mcp.json`.
  acc.shared_mcp_servers ??= {};
  return acc;
}

/**
 * Unknown keys are kept for plugins (`my_plugin_option`), so they are not errors; one that is a
 * typo of a known key (`modle`) would silently do nothing, so it gets a notice naming the key.
 */
function noteTypos(data: Record<string, unknown>, label: string, notices: string[], codeOnly = false): void {
  for (const t of typos(data, codeOnly)) notices.push(`${label}: ${t.message}`);
}

/** The keys of `data` that look like typos of known ones, each with its one-line message. */
function typos(data: Record<string, unknown>, codeOnly: boolean): { key: string; message: string }[] {
  const out: { key: string; message: string }[] = [];
  for (const key of Object.keys(data)) {
    if (isKnownKey(key)) {
      // one level down too: `permissions.dney` would drop the rules it lists without a word
      const inner = isObject(data[key]) ? knownKeysIn(key) : undefined;
      for (const k of inner ? Object.keys(data[key] as object) : []) {
        const near = inner!.includes(k) ? undefined : nearestName(k, inner!);
        if (near) out.push({ key, message: `unknown key "${key}.${k}" (did you mean "${key}.${near}"?)` });
      }
      continue;
    }
    // in larik.config.ts, `plugin: [...]` for `plugins` would load nothing, silently
    const near = nearestKnownKey(key) ?? (codeOnly ? nearestName(key, CODE_ONLY_KEYS) : undefined);
    if (near) out.push({ key, message: `unknown key "${key}" (did you mean "${near}"?)` });
  }
  return out;
}

/** Keys only `larik.config.ts` has (split off before its settings are validated). */
const CODE_ONLY_KEYS = ["preset", "plugins", "disable"];

/** Reads the JSON files of `cwd` as layers (§26 order). @throws ConfigError for personal/private problems. */
async function readJsonLayers(cwd: string, env: NodeJS.ProcessEnv, notices: string[]): Promise<{ before: Layer[]; shared: Layer[]; private: Layer }> {
  const files = settingsFiles(cwd, env);
  const before: Layer[] = [];
  const shared: Layer[] = [];
  let priv: Layer | undefined;
  for (const f of files) {
    const label = displayPath(f.path, cwd, env);
    if (f.trust !== "shared") {
      const raw = await readTrusted(f.path, label);
      // a missing or empty file has nothing to validate (and compiling the schema costs start-up)
      const data = Object.keys(raw).length ? validateTrusted(raw, label) : raw;
      noteTypos(data, label, notices);
      if (f.trust === "private") priv = { label, trust: f.trust, data };
      else before.push({ label, trust: f.trust, data });
      continue;
    }
    const r = await readSettingsFile(f.path, label);
    if (r.kind === "error") notices.push(`${r.message} (file ignored)`);
    if (r.kind !== "ok") continue;
    let data = r.data;
    if (f.kind === ".mcp.json") {
      // `.mcp.json` is Claude Code's file: only its server list means anything to Larik.
      const servers = r.data.mcpServers ?? r.data.mcp_servers;
      if (servers === undefined) continue;
      if (!isObject(servers)) {
        notices.push(`${label}: ignored "mcpServers": expected an object of servers`);
        continue;
      }
      data = { mcp_servers: servers };
    } else {
      // a team's `permisions` would drop its deny rules without a word
      noteTypos(data, label, notices);
    }
    shared.push({ label, trust: "shared", data });
  }
  return { before, shared, private: priv! };
}

/**
 * Loads the layered JSON settings of `cwd` (no `larik.config.ts`; see {@link loadConfig}).
 * @throws ConfigError when the personal or private file is malformed or has a bad value.
 */
export async function loadSettings(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedSettings> {
  const notices: string[] = [];
  const { before, shared, private: priv } = await readJsonLayers(cwd, env, notices);
  const settings = mergeLayers([...before, ...shared, priv], displayPath(personalSettingsFile(env), cwd, env), notices);
  return { settings, notices };
}

/** Splits a config's default export into its plugin keys and its settings keys. */
function splitConfig(cfg: LarikConfig): { preset?: LarikConfig["preset"]; plugins: NonNullable<LarikConfig["plugins"]>; disable: string[]; settings: Record<string, unknown> } {
  const { preset, plugins, disable, ...settings } = cfg;
  return { preset, plugins: plugins ?? [], disable: disable ?? [], settings };
}

/**
 * Loads everything the CLI needs from the config files of `cwd`: the layered settings plus the
 * personal and (approved) project `larik.config.ts`.
 *
 * The personal config always runs. A project config runs only when the private project file has
 * an approval for its canonical path whose hashes still match the config and every file it
 * pinned (see {@link approveProjectConfig}); otherwise it is skipped, before any of it runs, with
 * a notice naming `larik config approve` (and the file that changed). A project config that fails to load
 * or has a bad setting is skipped with a notice (a clone must not block start-up).
 *
 * Returns `{ settings, notices, plugins, preset?, disable, configFiles }`.
 * @throws ConfigError when a personal/private JSON file, or the personal config file, is broken.
 */
export async function loadConfig(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  const notices: string[] = [];
  const { before, shared, private: priv } = await readJsonLayers(cwd, env, notices);
  const plugins: Plugin[] = [];
  const pluginSources: string[] = [];
  let preset: Plugin[] | undefined;
  const disable = new Set<string>();
  const configFiles: string[] = [];
  let personalLayer: Layer | undefined;
  let projectLayer: Layer | undefined;
  /**
   * Takes in what a config file asks for, its `typos` notices first; its plugin modules are all
   * resolved before anything is kept, so a project config that fails to load leaves nothing.
   */
  const adopt = async (parts: ReturnType<typeof splitConfig>, file: string, label: string, typos: string[] = []): Promise<void> => {
    const r = await resolvePluginSpecs(parts.plugins, file, label, env);
    const p = parts.preset ? await resolvePluginSpecs(parts.preset, file, label, env, "preset") : undefined;
    plugins.push(...r.plugins);
    pluginSources.push(...r.plugins.map(() => label));
    notices.push(...typos, ...r.notices, ...(p?.notices ?? []));
    if (p) preset = p.plugins;
    for (const d of parts.disable) disable.add(d);
    configFiles.push(file);
  };

  const personalFile = await findPersonalConfig(env);
  if (personalFile) {
    const label = displayPath(personalFile, cwd, env);
    let cfg: LarikConfig;
    try {
      cfg = await evaluateConfig(await readConfigSource(personalFile), env);
    } catch (err) {
      throw new ConfigError(`${label}: ${oneLine(err)}`);
    }
    const parts = splitConfig(cfg);
    personalLayer = { label, trust: "personal", data: validateTrusted(parts.settings, label, true) };
    noteTypos(personalLayer.data, label, notices, true);
    await adopt(parts, personalFile, label);
  }

  const projectFile = await findProjectConfig(cwd, env);
  if (projectFile) {
    const label = displayPath(projectFile, cwd, env);
    const source = await readConfigSource(projectFile).catch((err: unknown) => {
      notices.push(`${label} not loaded: cannot read it (${oneLine(err)})`);
      return undefined;
    });
    const approval = (priv.data.approved_configs as Settings["approved_configs"])?.[projectFile];
    const refusal = source && (await whyNotApproved(source, approval, cwd, env, approval === undefined ? approvedFrom(projectFile, cwd, env) : undefined));
    if (refusal) notices.push(`${label} not loaded: ${refusal}`);
    else if (source) {
      try {
        const parts = splitConfig(await evaluateConfig(source, env));
        const check = checkSettings(parts.settings);
        if (!check.ok) throw issueError(label, parts.settings, check.issues, true);
        const typoNotices: string[] = [];
        noteTypos(check.value, label, typoNotices, true);
        await adopt(parts, projectFile, label, typoNotices);
        projectLayer = { label, trust: "personal", data: check.value };
      } catch (err) {
        const msg = oneLine(err);
        notices.push(`${msg.startsWith(label) ? msg : `${label}: ${msg}`} (config not loaded)`);
      }
    }
  }

  const layers: Layer[] = [
    ...(personalLayer ? [personalLayer] : []),
    ...before,
    ...shared,
    ...(projectLayer ? [projectLayer] : []),
    priv,
  ];
  const settings = mergeLayers(layers, displayPath(personalSettingsFile(env), cwd, env), notices);
  return { settings, notices, plugins, pluginSources, preset, disable: [...disable], configFiles };
}

/**
 * The folder, as messages show it, whose private settings approve `projectFile` when that is the
 * config's own folder and not `cwd` (approvals are stored per working folder, so one made at the
 * project root does not hold in `src/`); undefined otherwise or when that file cannot be read.
 */
function approvedFrom(projectFile: string, cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  const dir = dirname(projectFile);
  if (canonicalDir(cwd) === dir) return undefined;
  try {
    const data = JSON.parse(readFileSync(privateProjectFile(dir, env), "utf8")) as { approved_configs?: Record<string, unknown> };
    return data.approved_configs?.[projectFile] !== undefined ? tildePath(dir, env) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why a project config may not run as it is now, or undefined when its approval still holds: the
 * config's bytes and every file the approval pinned hash as they did (see {@link ConfigApproval}).
 * Reads and hashes those files; evaluates nothing.
 */
async function whyNotApproved(source: ConfigSource, approved: ConfigApproval | string | undefined, cwd: string, env: NodeJS.ProcessEnv, elsewhere?: string): Promise<string | undefined> {
  const review = "review it, then run `larik config approve`";
  if (approved === undefined && elsewhere) {
    return `it is approved for ${elsewhere}, and approvals hold per working folder; to run it here too, run \`larik config approve\` in this folder`;
  }
  if (approved === undefined) return `a project config runs code, so it needs your approval; ${review}`;
  // the old form pinned the config file alone: trusting it would keep its files unpinned
  if (typeof approved === "string") return "it was approved by an older Larik, which did not pin the files it loads; review them too, then run `larik config approve` again";
  if (approved.sha256 !== source.hash) return `it changed since you approved it; ${review}`;
  // an approval without folder listings cannot see a link retargeted or a module added beside one
  if (!approved.dirs) return "it was approved by an older Larik, which did not pin the folders it loads from; review them too, then run `larik config approve` again";
  const [changed, moved] = await Promise.all([filesChangedSinceApproval(approved.files), dirsChangedSinceApproval(approved.dirs)]);
  if (changed.length) {
    const first = changed[0]!;
    const more = changed.length > 1 ? ` (and ${changed.length - 1} more)` : "";
    return `${displayPath(first.file, cwd, env)}, which it loads, ${first.removed ? "is gone" : "changed"} since you approved it${more}; ${review}`;
  }
  if (!moved.length) return undefined;
  const first = moved[0]!;
  const more = moved.length > 1 ? ` (and ${moved.length - 1} more)` : "";
  // a module file appearing beside one the config loads could be what an import now finds
  const what = first.how === "new" ? "appeared" : first.how === "removed" ? "was removed" : `changed (${first.how})`;
  return `${displayPath(first.path, cwd, env)}, in a folder it loads modules from, ${what} since you approved it${more}; ${review}`;
}

/**
 * Approves the project's `larik.config.ts` for `cwd` (`larik config approve`). Loads it once, as
 * a run would (its code runs), to learn which files it loads, then records in the private project
 * file `approved_configs[<canonical path>] = { sha256, files }` (see {@link ConfigApproval}).
 * Pass `opts.hash` (the hash of the content the user reviewed) to refuse when the file changed
 * since. Returns the file's canonical path, its hash and the other files pinned (canonical
 * paths), or undefined when the project has no config file.
 * @throws ConfigError when the file changed since `opts.hash`, cannot be read, fails to load, or
 *   names a plugin module that cannot be loaded (approving it would leave what loads later unpinned).
 */
export async function approveProjectConfig(
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: { hash?: string } = {},
): Promise<{ path: string; hash: string; files: string[]; dirs: string[] } | undefined> {
  const file = await findProjectConfig(cwd, env);
  if (!file) return undefined;
  const label = displayPath(file, cwd, env);
  const source = await readConfigSource(file).catch((err: unknown) => {
    throw new ConfigError(`${label}: cannot read it (${oneLine(err)})`);
  });
  if (opts.hash !== undefined && opts.hash !== source.hash) {
    throw new ConfigError(`${label} changed while you were reviewing it: review it again, then approve`);
  }
  const { approval, notices } = await traceProjectConfig(source, label, env).catch((err: unknown) => {
    throw new ConfigError(`${label}: ${oneLine(err)}`);
  });
  // a plugin module that did not load now could appear later: it would run without being pinned
  if (notices.length) {
    const more = notices.length > 1 ? ` (and ${notices.length - 1} more)` : "";
    throw new ConfigError(`${notices[0]}${more}, so it is not approved: fix it, then run \`larik config approve\``);
  }
  await updatePrivateProjectSettings(
    cwd,
    (cur) => ({ ...cur, approved_configs: { ...(isObject(cur.approved_configs) ? cur.approved_configs : {}), [file]: approval } }),
    env,
  );
  return { path: file, hash: source.hash, files: Object.keys(approval.files), dirs: Object.keys(approval.dirs ?? {}) };
}

// ───────────────────────── writing ─────────────────────────

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs `fn` holding `<file>.lock`, a sidecar created with O_EXCL. A lock older than 5 s is taken
 * to be left by a crashed process and removed; a live one is waited for up to 10 s.
 * @throws ConfigError when the lock stays held.
 */
async function withFileLock<T>(file: string, label: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  let delay = 5;
  for (;;) {
    try {
      const h = await open(lock, "wx", 0o600);
      try {
        await h.writeFile(`${process.pid}\n`);
      } finally {
        await h.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    try {
      const st = await stat(lock);
      if (Date.now() - st.mtimeMs > LOCK_STALE_MS) {
        await unlink(lock).catch(() => {});
        continue;
      }
    } catch {
      continue; // released between our open and stat: try again at once
    }
    if (Date.now() > deadline) {
      throw new ConfigError(`${label}: not saved: another Larik holds ${lock}; try again (delete the lock file if no Larik is running)`);
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 100);
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => {});
  }
}

/**
 * Read-modify-write of one JSON settings file under its lock (§26 "Writes"): `update` gets the
 * current content (unknown keys included; `{}` when absent or empty) and returns the new content,
 * which must pass the settings schema. Directories are created 0700, the file is written 0600.
 * @throws ConfigError when the current file is malformed, the result is invalid, or the lock stays held.
 */
export async function updateSettingsFile(
  file: string,
  update: (current: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>,
  label: string = file,
): Promise<Record<string, unknown>> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  return withFileLock(file, label, async () => {
    const current = await readTrusted(file, label);
    const next = await update(structuredClone(current));
    if (!isObject(next)) throw new ConfigError(`${label}: not saved: the update did not return an object`);
    const check = checkSettings(next);
    if (!check.ok) throw new ConfigError(`${label}: not saved: ${check.issues[0]!.message}`);
    await writeAtomic(file, JSON.stringify(next, null, 2) + "\n");
    return next;
  });
}

/**
 * Reads, updates and atomically rewrites the private per-project settings file
 * (`~/.config/larik/projects/<dir>-<hash>.json`), preserving unknown keys. The `projects/`
 * directory is kept at 0700 and the file at 0600.
 * @throws ConfigError as {@link updateSettingsFile}.
 */
export async function updatePrivateProjectSettings(
  cwd: string,
  update: (current: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const file = privateProjectFile(cwd, env);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // mkdir's mode only applies to directories it creates; the projects folder is always ours.
  await chmod(dirname(file), 0o700).catch(() => {});
  await updateSettingsFile(file, update, displayPath(file, cwd, env));
}

/**
 * Reads, updates and atomically rewrites the personal `config.json` (what `/model`, `/mode`
 * and the config editors save), preserving unknown keys; written 0600 since it may hold keys.
 * @throws ConfigError as {@link updateSettingsFile}.
 */
export async function updatePersonalSettings(
  update: (current: Record<string, unknown>) => Record<string, unknown> | Promise<Record<string, unknown>>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const file = personalSettingsFile(env);
  await updateSettingsFile(file, update, displayPath(file, process.cwd(), env));
}

