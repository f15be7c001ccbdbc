/**
 * MCP server configuration: where servers come from, how `${VAR}` is expanded, and the hash an
 * approval is pinned to (LARIK-REFERENCE §15, §26, invariant 7).
 *
 * Entry shape follows Claude Code's `.mcp.json` (`mcpServers: { name: { command, args, env } |
 * { type: "http" | "sse", url, headers } }`), which Larik reads unchanged.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { validateToolInput, lazySchema } from "../../kernel/index.js";

/** A stdio server: a command Larik starts and talks to over stdin/stdout. */
export interface StdioServerConfig {
  type: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
}
/** A remote server over streamable HTTP (`http`) or the older HTTP+SSE transport (`sse`). */
export interface RemoteServerConfig {
  type: "http" | "sse";
  url: string;
  headers: Record<string, string>;
  /**
   * OAuth client settings (`client_id`, `client_secret`, `callback_port`, `scopes`). Kept so the
   * approval hash covers them and so the sign-in seam (`auth.ts`) can read them later.
   */
  oauth?: Record<string, unknown>;
}
export type ServerConfig = StdioServerConfig | RemoteServerConfig;

/** Where a server's entry came from. Personal entries are trusted; shared ones need approval. */
export type ServerSource = "personal" | "shared";

/** One configured server before it is started. */
export interface ServerEntry {
  name: string;
  source: ServerSource;
  /** The entry as written (before `${VAR}` expansion); what the approval hash covers. */
  raw: Record<string, unknown>;
  /** sha256 hex of the canonical JSON of `raw`. */
  hash: string;
  /** The expanded config, or undefined when `error` says why it cannot start. */
  config?: ServerConfig;
  /** One line: a bad entry or an unset variable. */
  error?: string;
}

// zod/mini: this module loads at every start-up, where classic zod would cost ~70 ms; lazySchema
// builds the schema only when a server is configured.
const EntrySchema = lazySchema(() => {
  const strRecord = z.record(z.string(), z.string());
  return z.object({
    type: z.optional(z.enum(["stdio", "http", "sse", "streamable-http", "streamableHttp"])),
    command: z.optional(z.string().check(z.minLength(1))),
    args: z.optional(z.array(z.string())),
    env: z.optional(strRecord),
    url: z.optional(z.string().check(z.minLength(1))),
    headers: z.optional(strRecord),
    oauth: z.optional(z.record(z.string(), z.unknown())),
  });
});

/** JSON with object keys sorted at every level, so equal configs hash equally. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    const keys = Object.keys(v as object).sort();
    return `{${keys
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/** The approval hash of a raw entry: sha256 hex of its canonical JSON (incl. `oauth`). */
export function configHash(raw: unknown): string {
  return createHash("sha256").update(canonicalJson(raw)).digest("hex");
}

/**
 * Expands `${VAR}` and `${VAR:-default}` (default used when VAR is unset or empty, as in POSIX
 * shells and Claude Code) in `text`. `$` not followed by `{` is literal.
 * @throws Error `environment variable X is not set` when a variable without a default is unset.
 */
export function expandVars(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, def: string | undefined) => {
    const v = env[name];
    if (v !== undefined && (v !== "" || def === undefined)) return v;
    if (def !== undefined) return def;
    throw new Error(`environment variable ${name} is not set`);
  });
}

/**
 * Validates and expands one raw entry.
 * @throws Error with a one-line message saying what to fix.
 */
export function parseEntry(raw: unknown, env: NodeJS.ProcessEnv): ServerConfig {
  // the kernel's validator installs zod's English messages, which zod/mini lacks
  const r = validateToolInput(EntrySchema, raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`${i.path.join(".") || "entry"}: ${i.message}`);
  }
  const e = r.data;
  const at = (what: string, s: string) => {
    try {
      return expandVars(s, env);
    } catch (err) {
      throw new Error(`${(err as Error).message} (used in ${what})`);
    }
  };
  const type = e.type === "streamable-http" || e.type === "streamableHttp" ? "http" : (e.type ?? (e.url ? "http" : "stdio"));
  if (type === "stdio") {
    if (!e.command) throw new Error(`a stdio server needs "command" (or set "type": "http" with a "url")`);
    const envOut: Record<string, string> = {};
    for (const [k, v] of Object.entries(e.env ?? {})) envOut[k] = at(`env.${k}`, v);
    return { type, command: at("command", e.command), args: (e.args ?? []).map((a, i) => at(`args[${i}]`, a)), env: envOut };
  }
  if (!e.url) throw new Error(`a ${type} server needs "url"`);
  const url = at("url", e.url);
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("bad scheme");
  } catch {
    throw new Error(`url "${url}" is not an absolute http(s) URL`);
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(e.headers ?? {})) headers[k] = at(`headers.${k}`, v);
  return { type, url, headers, oauth: e.oauth };
}

function entriesOf(map: unknown): [string, unknown][] {
  return map && typeof map === "object" && !Array.isArray(map) ? Object.entries(map as Record<string, unknown>) : [];
}

/** What {@link collectServers} reads. */
export interface ConfigSources {
  settings: Readonly<Record<string, unknown>>;
  /** Where `.mcp.json` is looked for when settings carry no `shared_mcp_servers`. */
  projectRoot: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Every configured server, sorted by name. Personal (trusted) servers come from settings
 * `mcp_servers` / `mcpServers`; shared ones from settings `shared_mcp_servers` (filled by the
 * config loader from `.mcp.json` and `.larik/settings.json`), or, when that key is absent, from
 * `<projectRoot>/.mcp.json` `mcpServers` read here. A name in both is the personal one.
 * Returns also one-line warnings (an unreadable `.mcp.json`).
 */
export function collectServers(src: ConfigSources): { servers: ServerEntry[]; warnings: string[] } {
  const warnings: string[] = [];
  const out = new Map<string, ServerEntry>();
  const add = (name: string, raw: unknown, source: ServerSource) => {
    if (out.has(name)) return;
    const rawObj = (raw && typeof raw === "object" && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
    const entry: ServerEntry = { name, source, raw: rawObj, hash: configHash(rawObj) };
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) entry.error = `bad server name "${name}": use letters, digits, "_", "-" or "."`;
    else {
      try {
        entry.config = parseEntry(raw, src.env);
      } catch (err) {
        entry.error = (err as Error).message;
      }
    }
    out.set(name, entry);
  };
  const s = src.settings;
  for (const [n, r] of [...entriesOf(s.mcp_servers), ...entriesOf(s.mcpServers)]) add(n, r, "personal");
  if (s.shared_mcp_servers !== undefined) {
    for (const [n, r] of entriesOf(s.shared_mcp_servers)) add(n, r, "shared");
  } else {
    const file = join(src.projectRoot, ".mcp.json");
    let text: string | undefined;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      text = undefined;
    }
    if (text !== undefined && text.trim()) {
      try {
        const doc = JSON.parse(text) as Record<string, unknown>;
        for (const [n, r] of [...entriesOf(doc.mcpServers), ...entriesOf(doc.mcp_servers)]) add(n, r, "shared");
      } catch (err) {
        warnings.push(`.mcp.json ignored: ${(err as Error).message}`);
      }
    }
  }
  return { servers: [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), warnings };
}

/** The tool-search setting: `auto` (default), `on` or `off` (LARIK-REFERENCE §15). */
export function toolSearchSetting(settings: Readonly<Record<string, unknown>>): "auto" | "on" | "off" {
  const v = settings.tool_search;
  if (v === true || v === "on") return "on";
  if (v === false || v === "off") return "off";
  return "auto";
}
