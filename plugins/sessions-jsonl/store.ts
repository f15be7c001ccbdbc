/**
 * The JSONL session store (LARIK-REFERENCE §7): one `<id>.jsonl` file per session or branch
 * under `<data root>/sessions/<projectKey(cwd)>/`, folders 0700, files 0600, one writer per file.
 */
import { chmodSync, closeSync, fdatasyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  dataDir,
  isoTime,
  isPrompt,
  type Message,
  projectKey,
  sessionMetaProblem,
  type SessionEntry,
  type SessionHandle,
  type SessionMeta,
  type SessionStore,
  type SessionSummary,
} from "../../kernel/index.js";
import { ID_PREFIX_RE, newSessionId, SESSION_ID_RE } from "./ids.js";
import { acquireLock } from "./lock.js";
import { anomalyNote, anomalyWarning, parseSession, type ParsedSession } from "./read.js";
import { appendWhole, entryLine, JsonlSession } from "./session-file.js";
import { readHead } from "./title.js";

export interface JsonlStoreOptions {
  /** Environment for the data root (`XDG_DATA_HOME`, `HOME`); defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The data root itself (replaces `<data root>`; sessions go to `<root>/sessions`). */
  root?: string;
  /**
   * fdatasync after every append (default false). Without it an append survives a crash of
   * Larik but not a power loss; what a power loss tears is recovered on the next open.
   */
  fsync?: boolean;
}

/** Candidates listed in an ambiguous-prefix error. */
const MAX_CANDIDATES = 8;

/** The default session store: append-only JSONL files with a writer lock per session. */
export class JsonlSessionStore implements SessionStore {
  readonly name = "jsonl";
  readonly #root: string;
  readonly #fsync: boolean;

  constructor(opts: JsonlStoreOptions = {}) {
    this.#root = opts.root ?? dataDir(opts.env ?? process.env);
    this.#fsync = opts.fsync ?? false;
  }

  /** `<root>/sessions/<projectKey(cwd)>`, the folder of `cwd`'s sessions. */
  dirOf(cwd: string): string {
    return join(this.#root, "sessions", projectKey(cwd));
  }

  /**
   * Starts a session: a new file whose first line is the `meta` entry.
   * @throws Error when `meta` is invalid or the folder cannot be created.
   */
  async create(meta: SessionMeta): Promise<SessionHandle> {
    const problem = sessionMetaProblem(meta);
    if (problem) throw new Error(`invalid session meta: ${problem}`);
    return this.#createWith(meta.cwd, { warnings: [], notes: [] }, (id) => [{ id: `${id}-0`, parent_id: null, type: "meta", ts: isoTime(), meta }], true);
  }

  /**
   * Creates `<id>.jsonl` (O_EXCL, 0600) for a fresh id, takes its lock and writes the entries
   * `build(id)` returns in one write.
   */
  #createWith(cwd: string, told: { warnings: string[]; notes: string[] }, build: (id: string) => SessionEntry[], fresh = false): JsonlSession {
    const dir = this.#ensureDir(cwd);
    for (let attempt = 0; ; attempt++) {
      const id = newSessionId();
      const path = join(dir, `${id}.jsonl`);
      let fd: number;
      try {
        fd = openSync(path, "ax", 0o600);
      } catch (err) {
        // Same second and same 24 random bits: draw again.
        if ((err as NodeJS.ErrnoException).code === "EEXIST" && attempt < 5) continue;
        throw new Error(`cannot create session file ${path}: ${(err as Error).message}`);
      }
      let release: (() => void) | undefined;
      try {
        release = acquireLock(`${path}.lock`, id);
        const entries = build(id);
        appendWhole(fd, Buffer.concat(entries.map(entryLine)), 0);
        if (this.#fsync) fdatasyncSync(fd);
        return new JsonlSession({ id, path, fd, entries, ...told, release, fsync: this.#fsync, fresh });
      } catch (err) {
        closeSync(fd);
        // Nothing was written (or a torn head): leave no unreadable file behind.
        rmSync(path, { force: true });
        release?.();
        throw err;
      }
    }
  }

  #ensureDir(cwd: string): string {
    const dir = this.dirOf(cwd);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // mkdir leaves an existing folder's mode alone; transcripts are private.
    if ((statSync(dir).mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
    return dir;
  }

  /** Session ids in `cwd`'s folder (unordered). */
  #ids(cwd: string): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dirOf(cwd));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    return names.filter((n) => n.endsWith(".jsonl")).map((n) => n.slice(0, -6)).filter((id) => SESSION_ID_RE.test(id));
  }

  /**
   * The full id for `idOrPrefix` among `cwd`'s sessions.
   * @throws Error for a malformed, unknown or ambiguous id (listing up to 8 candidates).
   */
  resolve(cwd: string, idOrPrefix: string): string {
    const want = idOrPrefix.trim();
    if (!want || !ID_PREFIX_RE.test(want)) {
      throw new Error(`"${idOrPrefix}" is not a session id: ids look like 20250131-142501-a1b2c3 (run larik --sessions to list them)`);
    }
    const ids = this.#ids(cwd);
    if (ids.includes(want)) return want;
    const hits = ids.filter((id) => id.startsWith(want)).sort().reverse();
    if (hits.length === 1) return hits[0]!;
    if (hits.length === 0) throw new Error(`no session "${want}" in ${cwd}: run larik --sessions to list this directory's sessions`);
    const shown = hits.slice(0, MAX_CANDIDATES).join(", ");
    const more = hits.length > MAX_CANDIDATES ? ` and ${hits.length - MAX_CANDIDATES} more` : "";
    throw new Error(`session prefix "${want}" is ambiguous: it matches ${shown}${more}; type more of the id`);
  }

  /** Reads and parses a session file without opening it for writing. */
  #read(path: string): ParsedSession {
    let buf: Buffer;
    try {
      buf = readFileSync(path);
    } catch (err) {
      throw new Error(`cannot read session file ${path}: ${(err as Error).message}`);
    }
    return parseSession(buf, path);
  }

  /**
   * Opens a session for appending. Anomalies (a torn last line, NUL-damaged lines) are recorded
   * as `recovery` entries and reported in `warnings`.
   * @throws Error for an unknown/ambiguous id, a locked session or a malformed file.
   */
  async open(cwd: string, idOrPrefix: string): Promise<SessionHandle> {
    const id = this.resolve(cwd, idOrPrefix);
    const path = join(this.dirOf(cwd), `${id}.jsonl`);
    const release = acquireLock(`${path}.lock`, id);
    let fd: number | undefined;
    try {
      // Parse under the lock so no writer appends between reading and appending.
      const parsed = this.#read(path);
      fd = openSync(path, "a", 0o600);
      const warnings: string[] = [];
      const notes: string[] = [];
      const session = new JsonlSession({
        id,
        path,
        fd,
        entries: parsed.entries,
        warnings,
        notes,
        release,
        pendingNewline: !parsed.endsWithNewline,
        fsync: this.#fsync,
      });
      // One recovery entry per damaged line, naming its offset, so later opens skip it silently.
      for (const a of parsed.anomalies) {
        session.append({
          type: "recovery",
          data: { reason: a.reason, line: a.line, offset: a.offset, bytes: a.bytes, nul_bytes: a.nul_bytes, kept: a.kept, dropped: a.kept ? "" : a.preview },
        });
        warnings.push(anomalyWarning(path, a));
        notes.push(anomalyNote(a));
      }
      return session;
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      release();
      throw err;
    }
  }

  /** `cwd`'s sessions, newest first (by last write, then id). Reads only each file's head. */
  async list(cwd: string): Promise<SessionSummary[]> {
    const dir = this.dirOf(cwd);
    const out: { s: SessionSummary; mtime: number }[] = [];
    for (const id of this.#ids(cwd)) {
      const location = join(dir, `${id}.jsonl`);
      let mtime: number;
      try {
        mtime = statSync(location).mtimeMs;
      } catch {
        continue; // removed while listing
      }
      const head = readHead(location);
      if (!head) continue; // torn while being created: nothing to resume
      // `updated` is whole ms for callers; sorting keeps the filesystem's full precision
      const s: SessionSummary = { id, title: head.title, updated: Math.floor(mtime), location };
      if (head.meta.fork_of) s.fork_of = head.meta.fork_of;
      out.push({ s, mtime });
    }
    return out
      .sort((a, b) => b.mtime - a.mtime || (a.s.id < b.s.id ? 1 : a.s.id > b.s.id ? -1 : 0))
      .map((x) => x.s);
  }

  /**
   * Branches `sourceId` (id or unique prefix) into a new session holding its first `keep`
   * messages (default: all). Copies message entries without their usage and compaction entries
   * among them without their metrics; drops usage, decision, recovery and task entries. The
   * source file is only read.
   * @throws Error when `keep` is neither the message count nor the index of a prompt.
   */
  async fork(cwd: string, sourceId: string, keep?: number): Promise<SessionHandle> {
    const id = this.resolve(cwd, sourceId);
    const path = join(this.dirOf(cwd), `${id}.jsonl`);
    const parsed = this.#read(path);
    const source = parsed.entries;
    const messages = source.filter((e) => e.type === "message" && e.message);
    const count = messages.length;
    const at = keep ?? count;
    if (!Number.isInteger(at) || at < 0 || at > count) {
      throw new Error(`cannot fork ${id} at ${keep}: keep must be a message index between 0 and ${count}`);
    }
    if (at < count && !isPrompt(messages[at]!.message!)) {
      throw new Error(`cannot fork ${id} at message ${at}: branches start at the end (${count}) or before a prompt; message ${at} is not a prompt`);
    }
    const meta: SessionMeta = { ...source[0]!.meta!, fork_of: id, fork_at: at };
    const warnings = parsed.anomalies.map((a) => `fork source ${anomalyWarning(path, a)}`);
    const notes = parsed.anomalies.map((a) => anomalyNote(a, true));
    return this.#createWith(cwd, { warnings, notes }, (newId) => {
      const out: SessionEntry[] = [{ id: `${newId}-0`, parent_id: null, type: "meta", ts: isoTime(), meta }];
      let seen = 0;
      for (const e of source) {
        if (e.type === "message" && e.message) {
          if (seen === at) break;
          seen++;
          const { usage: _usage, ...rest } = e;
          out.push(relink(rest as SessionEntry, newId, out));
        } else if (e.type === "compaction") {
          const copy: SessionEntry = { ...e };
          // Accounting stays with the source; a clear keeps its meaning.
          if (e.data?.clear === true) copy.data = { clear: true };
          else delete copy.data;
          delete copy.usage;
          out.push(relink(copy, newId, out));
        }
      }
      const answers = unansweredToolUses(messages.slice(0, at).map((e) => e.message!));
      if (answers) out.push(relink({ id: "", parent_id: null, type: "message", ts: isoTime(), message: answers }, newId, out));
      return out;
    });
  }
}

/**
 * A user message answering the tool calls of the last assistant message that have no result
 * (the source crashed mid-turn), or undefined when every call has one. A branch starts at a turn
 * boundary, so a fork at the end of an interrupted turn closes it the way an interrupt would.
 */
function unansweredToolUses(messages: Message[]): Message | undefined {
  const i = messages.findLastIndex((m) => m.role === "assistant");
  if (i < 0) return undefined;
  // after a later prompt, the turn was closed already (requests repair older gaps)
  if (messages.slice(i + 1).some((m) => m.blocks.some((b) => b.type !== "tool_result"))) return undefined;
  const answered = new Set(messages.slice(i + 1).flatMap((m) => m.blocks.flatMap((b) => (b.type === "tool_result" ? [b.id] : []))));
  const blocks = messages[i]!.blocks.flatMap((b) =>
    b.type === "tool_use" && !answered.has(b.id)
      ? [{ type: "tool_result" as const, id: b.id, content: "interrupted: the session was forked before this tool call had a result", is_error: true }]
      : [],
  );
  return blocks.length ? { role: "user", blocks } : undefined;
}

/** `e` with a new id and parent in session `sessionId`, appended after `prev`. */
function relink(e: SessionEntry, sessionId: string, prev: SessionEntry[]): SessionEntry {
  return { ...e, id: `${sessionId}-${prev.length}`, parent_id: prev[prev.length - 1]!.id };
}
