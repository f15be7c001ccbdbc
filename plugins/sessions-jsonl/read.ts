/**
 * Reads a session file (LARIK-REFERENCE §7, invariant 4). Lines are split strictly on "\n"
 * (byte 0x0A): JSON.stringify leaves U+2028, U+2029 and U+0085 unescaped inside strings, so a
 * reader that also breaks on those (readline, String.split on /\r?\n|\u2028/…) would cut records.
 *
 * What is tolerated, and how it is reported:
 * - a torn last line (the write of the final record was cut short, or it is garbage at the end);
 * - a line holding NUL bytes (some filesystems zero-fill a region that was being written when
 *   the machine crashed): kept when what remains is a valid entry, otherwise dropped;
 * - a line of valid JSON that is not a session entry this version reads (a plugin appended a
 *   malformed entry, or a newer Larik wrote a kind this one does not know): skipped, so one bad
 *   entry does not make the whole session unloadable;
 * - a bad line whose byte offset a later `recovery` entry names (it was recovered on an earlier
 *   open and is skipped silently).
 * Any other malformed line (invalid JSON before the last line: the file itself is damaged) fails
 * loading with a one-line error naming the file and line.
 */
import { SessionEntrySchema, type SessionEntry } from "../../kernel/index.js";

/** A line that was not loaded as-is and has not been recovered yet. */
export interface Anomaly {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Length of the line in bytes, without its "\n". */
  bytes: number;
  /** NUL bytes in the line. */
  nul_bytes: number;
  /** `torn last line`, `NUL bytes` (dropped), `NUL padding` (entry kept) or `invalid entry` (dropped). */
  reason: "torn last line" | "NUL bytes" | "NUL padding" | "invalid entry";
  /** For `invalid entry`: what the schema found wrong. */
  detail?: string;
  /** Whether the line's entry was kept (NUL padding around a valid record). */
  kept: boolean;
  /** The start of what was dropped, NULs shown as `\0`, at most 200 characters. */
  preview: string;
}

export interface ParsedSession {
  entries: SessionEntry[];
  /** Anomalies not covered by a `recovery` entry, in file order. */
  anomalies: Anomaly[];
  /** File size in bytes. */
  size: number;
  /** True when the file is empty or its last byte is "\n" (an append may start right away). */
  endsWithNewline: boolean;
}

const NL = 0x0a;
const NUL = 0x00;
const PREVIEW_CHARS = 200;

/** The entry a line holds, or the reason it holds none. */
function parseLine(text: string): { entry: SessionEntry } | { error: string; json?: true } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `invalid JSON (${(err as Error).message})` };
  }
  const r = SessionEntrySchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    return { error: `not a session entry (${issue ? `${issue.path.join(".") || "entry"}: ${issue.message}` : "schema mismatch"})`, json: true };
  }
  // The raw object, not zod's copy: unknown keys of blocks survive for newer readers.
  return { entry: value as SessionEntry };
}

function preview(buf: Buffer): string {
  const s = buf.subarray(0, PREVIEW_CHARS * 4).toString("utf8").replace(/\0/g, "\\0");
  return [...s].slice(0, PREVIEW_CHARS).join("");
}

/** Byte offsets named by `recovery` entries (`data.offset`). */
function recoveredOffsets(entries: readonly SessionEntry[]): Set<number> {
  const out = new Set<number>();
  for (const e of entries) {
    if (e.type !== "recovery") continue;
    const off = e.data?.offset;
    if (typeof off === "number") out.add(off);
  }
  return out;
}

/**
 * Parses the bytes of session file `file`.
 * @throws Error `<file>:<line>: …` for a malformed line that is neither the last line, nor
 *   NUL-damaged, nor already recovered; also when the first entry is not a `meta` entry.
 */
export function parseSession(buf: Buffer, file: string): ParsedSession {
  const entries: SessionEntry[] = [];
  const found: Anomaly[] = [];
  const malformed: { line: number; offset: number; bytes: number; error: string; json?: true; raw: Buffer }[] = [];
  let lastContentLine = 0;
  let line = 0;
  for (let start = 0; start < buf.length; ) {
    let end = buf.indexOf(NL, start);
    if (end < 0) end = buf.length;
    line++;
    const raw = buf.subarray(start, end);
    const offset = start;
    start = end + 1;
    if (raw.length === 0) continue;
    lastContentLine = line;
    const nul = countNul(raw);
    if (nul > 0) {
      const rest = raw.filter((b) => b !== NUL);
      const r = rest.length ? parseLine(Buffer.from(rest).toString("utf8")) : { error: "only NUL bytes" };
      const kept = "entry" in r;
      if (kept) entries.push(r.entry);
      found.push({ line, offset, bytes: raw.length, nul_bytes: nul, reason: kept ? "NUL padding" : "NUL bytes", kept, preview: preview(raw) });
      continue;
    }
    const r = parseLine(raw.toString("utf8"));
    if ("entry" in r) entries.push(r.entry);
    else malformed.push({ line, offset, bytes: raw.length, error: r.error, json: r.json, raw });
  }
  const recovered = recoveredOffsets(entries);
  for (const m of malformed) {
    if (recovered.has(m.offset)) continue;
    if (m.json) {
      found.push({ line: m.line, offset: m.offset, bytes: m.bytes, nul_bytes: 0, reason: "invalid entry", detail: m.error, kept: false, preview: preview(m.raw) });
      continue;
    }
    if (m.line !== lastContentLine) {
      throw new Error(`${file}:${m.line}: ${m.error}; the session file is damaged: repair or remove line ${m.line}`);
    }
    found.push({ line: m.line, offset: m.offset, bytes: m.bytes, nul_bytes: 0, reason: "torn last line", kept: false, preview: preview(m.raw) });
  }
  const anomalies = found.filter((a) => !recovered.has(a.offset)).sort((a, b) => a.offset - b.offset);
  const first = entries[0];
  if (!first) throw new Error(`${file}: holds no session entry: remove the file`);
  if (first.type !== "meta" || !first.meta) throw new Error(`${file}: the first entry is a ${first.type} entry, not meta: the file is not a Larik session`);
  return { entries, anomalies, size: buf.length, endsWithNewline: buf.length === 0 || buf[buf.length - 1] === NL };
}

function countNul(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(NUL); i >= 0; i = b.indexOf(NUL, i + 1)) n++;
  return n;
}

/**
 * What an anomaly means for the conversation, for the model: no path, line or byte offset (the
 * user's warning, {@link anomalyWarning}, has them), which the model cannot use. `fork` for an
 * anomaly of the session a fork was copied from.
 */
export function anomalyNote(a: Anomaly, fork = false): string {
  const history = fork ? "The saved history of the session this one was forked from" : "This session's saved history";
  switch (a.reason) {
    case "torn last line":
      return `${history} ended in an entry cut short, probably by a crash, which was dropped: the last message or tool result before it may be missing.`;
    case "NUL bytes":
      return `${history} lost data in a crash, which was dropped: some earlier messages or tool results may be missing.`;
    case "NUL padding":
      return `${history} was damaged in a crash; what was readable was kept, but some earlier messages or tool results may be missing.`;
    case "invalid entry":
      return `${history} held an entry this version cannot read, which was skipped: part of the earlier conversation may be missing.`;
  }
}

/** The one-line warning shown for an anomaly found in `file`. */
export function anomalyWarning(file: string, a: Anomaly): string {
  switch (a.reason) {
    case "torn last line":
      return `${file}:${a.line}: dropped a torn last line (${a.bytes} bytes at byte ${a.offset}), probably cut short by a crash`;
    case "NUL bytes":
      return `${file}:${a.line}: dropped ${a.bytes} bytes holding ${a.nul_bytes} NUL bytes at byte ${a.offset}: the filesystem lost data in a crash, so entries may be missing`;
    case "NUL padding":
      return `${file}:${a.line}: kept an entry padded with ${a.nul_bytes} NUL bytes at byte ${a.offset}: the filesystem lost data in a crash, so entries may be missing`;
    case "invalid entry":
      return `${file}:${a.line}: skipped an entry this version cannot read, ${a.detail}: a plugin wrote it malformed, or a newer Larik wrote it`;
  }
}
