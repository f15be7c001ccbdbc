/**
 * An open JSONL session (LARIK-REFERENCE §7): the writer's side of one `<id>.jsonl` file.
 * Every append is one `write(2)` of one whole line to an O_APPEND descriptor, so a crash leaves
 * at most one torn record, at the end, which the next open recovers.
 */
import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, rmSync, writeSync } from "node:fs";
import { isoTime, type NewEntry, type SessionEntry, type SessionHandle, type SessionMeta } from "../../kernel/index.js";
import { entrySeq } from "./ids.js";

const NEWLINE = Buffer.from("\n");

/** Serializes one entry as a line. `JSON.stringify` escapes "\n" inside strings, so the only
 * 0x0A byte is the terminator. */
export function entryLine(entry: SessionEntry): Buffer {
  return Buffer.from(`${JSON.stringify(entry)}\n`, "utf8");
}

/**
 * Writes all of `buf` at the end of `fd` (opened with O_APPEND). A regular file takes the whole
 * buffer in one call; the loop only matters for short writes (a full disk), after which the
 * partial record is cut off again so the file never keeps half a line in the middle.
 * @throws the write error (ENOSPC, EIO…) after truncating back to `size` bytes.
 */
export function appendWhole(fd: number, buf: Buffer, size: number): void {
  let done = 0;
  try {
    while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
  } catch (err) {
    if (done > 0) {
      try {
        ftruncateSync(fd, size);
      } catch {
        // the next open will find a torn line and recover it
      }
    }
    throw err;
  }
}

export interface JsonlSessionInit {
  id: string;
  path: string;
  fd: number;
  entries: SessionEntry[];
  /** Kept by reference: the store adds the notices of the recovery it does after opening. */
  warnings: string[];
  /** For the model, one per warning (kept by reference too); see `SessionHandle.notes`. */
  notes?: string[];
  release: () => void;
  /** The file does not end with "\n": the next write starts with one. */
  pendingNewline?: boolean;
  /** fdatasync after every append (survives power loss, costs a disk flush per entry). */
  fsync?: boolean;
  /**
   * A session this writer has just created: closed with nothing after its meta entry, its file
   * is removed (a run that failed before its prompt, `larik -p /cost`), so `--sessions` does not
   * fill with `(no prompt yet)` rows that nobody can resume into anything.
   */
  fresh?: boolean;
}

/** A writable session backed by an O_APPEND file descriptor and a writer lock. */
export class JsonlSession implements SessionHandle {
  readonly id: string;
  readonly location: string;
  readonly meta: SessionMeta;
  readonly warnings: readonly string[];
  readonly notes: readonly string[];
  readonly #entries: SessionEntry[];
  readonly #release: () => void;
  #fd: number | undefined;
  #seq: number;
  #pendingNewline: boolean;
  readonly #fsync: boolean;
  readonly #fresh: boolean;
  /** Bytes in the file as far as this writer knows (the only writer, thanks to the lock). */
  #size: number;

  constructor(init: JsonlSessionInit) {
    this.id = init.id;
    this.location = init.path;
    this.#entries = init.entries;
    this.warnings = init.warnings;
    this.notes = init.notes ?? [];
    this.#release = init.release;
    this.#fd = init.fd;
    this.#pendingNewline = init.pendingNewline ?? false;
    this.#fsync = init.fsync ?? false;
    this.#fresh = init.fresh ?? false;
    const meta = init.entries[0]?.meta;
    if (!meta) throw new Error(`${init.path}: the first entry is not a meta entry`);
    this.meta = meta;
    // Ids, not the count: a recovered file has fewer entries than sequence numbers used.
    let last = init.entries.length - 1;
    for (const e of init.entries) last = Math.max(last, entrySeq(e.id));
    this.#seq = last + 1;
    this.#size = fstatSync(init.fd).size;
  }

  entries(): readonly SessionEntry[] {
    return this.#entries;
  }

  /**
   * Appends `entry` as one line: fills `id` (`<session>-<seq>`), `parent_id` (the previous
   * entry's id) and `ts` (ISO 8601, UTC).
   * @throws Error when the session is closed, or the write error (the entry is then not added).
   */
  append(entry: NewEntry): SessionEntry {
    if (this.#fd === undefined) throw new Error(`session ${this.id} is closed: reopen it to append`);
    const prev = this.#entries[this.#entries.length - 1];
    const full = { ...entry, id: `${this.id}-${this.#seq}`, parent_id: prev?.id ?? null, ts: isoTime() } as SessionEntry;
    const line = entryLine(full);
    // After a torn or unterminated last line the record must still start on its own line; the
    // "\n" rides in the same write.
    const buf = this.#pendingNewline ? Buffer.concat([NEWLINE, line]) : line;
    appendWhole(this.#fd, buf, this.#size);
    if (this.#fsync) fdatasyncSync(this.#fd);
    this.#pendingNewline = false;
    this.#size += buf.length;
    this.#seq++;
    this.#entries.push(full);
    return full;
  }

  /**
   * Closes the file and releases the writer lock; a fresh session with nothing after its meta
   * entry is removed first (see {@link JsonlSessionInit.fresh}). Calling it twice is harmless.
   */
  async close(): Promise<void> {
    const fd = this.#fd;
    if (fd === undefined) return;
    this.#fd = undefined;
    try {
      closeSync(fd);
      // under the lock still: no other process has opened it meanwhile
      if (this.#fresh && this.#entries.length === 1) rmSync(this.location, { force: true });
    } finally {
      this.#release();
    }
  }
}
