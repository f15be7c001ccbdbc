/**
 * All configured servers of one host: which may start (trust and approval, LARIK-REFERENCE §15
 * "Trust", invariant 7), starting them in the background, and the bounded wait of a fresh
 * context.
 */
import { readFileSync } from "node:fs";
import type { ServerEntry } from "./config.js";
import { McpConnection, oneLine, type ConnectionOptions } from "./connection.js";

/** Reads and writes `approved_mcp_servers` ({ name: config hash }) in private project settings. */
export interface ApprovalStore {
  /** The approvals on disk now. */
  load(): Record<string, string>;
  /** Adds one approval. @throws when the file cannot be written. */
  save(name: string, hash: string): Promise<void>;
}

/**
 * An {@link ApprovalStore} over the private per-project settings file. Approvals are read from
 * that file only, never from merged settings, so a shared file cannot approve its own servers.
 */
export function privateApprovals(
  file: string,
  update: (fn: (cur: Record<string, unknown>) => Record<string, unknown>) => Promise<void>,
): ApprovalStore {
  return {
    load() {
      try {
        const doc = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
        const a = doc.approved_mcp_servers;
        if (!a || typeof a !== "object" || Array.isArray(a)) return {};
        return Object.fromEntries(Object.entries(a).filter((e): e is [string, string] => typeof e[1] === "string"));
      } catch {
        return {};
      }
    },
    save(name, hash) {
      return update((cur) => {
        const prev = (cur.approved_mcp_servers && typeof cur.approved_mcp_servers === "object" ? cur.approved_mcp_servers : {}) as Record<string, unknown>;
        return { ...cur, approved_mcp_servers: { ...prev, [name]: hash } };
      });
    },
  };
}

export class McpManager {
  readonly connections: McpConnection[];
  readonly #approvals: ApprovalStore;
  readonly #notify: (text: string) => void;
  /** Approvals made this session (kept even when saving them failed). */
  readonly #sessionApprovals = new Map<string, string>();

  constructor(entries: ServerEntry[], opts: ConnectionOptions, approvals: ApprovalStore) {
    this.connections = entries.map((e) => new McpConnection(e, opts));
    this.#approvals = approvals;
    this.#notify = opts.notify;
  }

  get(name: string): McpConnection | undefined {
    return this.connections.find((c) => c.name === name);
  }

  /** True when a shared server's current config hash is approved. Personal servers always are. */
  isApproved(conn: McpConnection): boolean {
    if (conn.entry.source === "personal") return true;
    const hash = this.#sessionApprovals.get(conn.name) ?? this.#approvals.load()[conn.name];
    return hash === conn.entry.hash;
  }

  /** Starts every server that may start; marks the rest unapproved with a notice. */
  startAll(): void {
    for (const c of this.connections) {
      if (!this.isApproved(c)) {
        c.state = "unapproved";
        const was = this.#approvals.load()[c.name];
        c.error = was ? "its config changed since it was approved" : "shared servers start only after approval";
        this.#notify(`mcp server "${c.name}" (from shared project config) is not approved${was ? " (its config changed)" : ""}: run /mcp approve ${c.name}`);
        continue;
      }
      void c.start();
    }
  }

  /**
   * Waits until every started server settled or `ms` passed, whichever is first. Servers still
   * starting then join at the next fresh context.
   */
  async waitReady(ms: number): Promise<void> {
    const pending = this.connections.map((c) => c.ready).filter((p): p is Promise<void> => !!p);
    if (!pending.length) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(pending), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    if (timer) clearTimeout(timer);
  }

  /**
   * Approves a shared server's current config (pinned to its hash), saves it privately and starts
   * the server. Returns a one-line report.
   * @throws Error naming the fix for an unknown or personal server.
   */
  async approve(name: string): Promise<string> {
    const conn = this.get(name);
    if (!conn) {
      const shared = this.connections.filter((c) => c.entry.source === "shared").map((c) => c.name);
      throw new Error(`no MCP server named "${name}"${shared.length ? `: shared servers are ${shared.join(", ")}` : ""}`);
    }
    if (conn.entry.source === "personal") return `mcp server "${name}" is personal config: it needs no approval`;
    if (this.isApproved(conn)) return `mcp server "${name}" is already approved`;
    this.#sessionApprovals.set(name, conn.entry.hash);
    let saved = "";
    try {
      await this.#approvals.save(name, conn.entry.hash);
    } catch (err) {
      saved = ` (not saved, holds for this session only: ${oneLine(err)})`;
    }
    conn.state = "starting";
    conn.error = undefined;
    void conn.start();
    return `approved mcp server "${name}"${saved}; starting it: its tools join after /clear`;
  }

  /** Closes every connection in parallel. */
  async closeAll(): Promise<void> {
    await Promise.allSettled(this.connections.map((c) => c.close()));
  }
}
