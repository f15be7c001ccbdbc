/**
 * The composer's text buffer: a string and a cursor (a UTF-16 offset that always sits on a
 * grapheme boundary), with pure editing operations. Every function returns a new buffer.
 */

/** Composer contents. */
export interface Buffer {
  text: string;
  cursor: number;
}

export const EMPTY: Buffer = { text: "", cursor: 0 };

const segmenter = new Intl.Segmenter();

/** A buffer holding `text` with the cursor at its end. */
export function bufferOf(text: string): Buffer {
  return { text, cursor: text.length };
}

/** Inserts `s` at the cursor (pasted `\r\n` and `\r` become `\n`). */
export function insert(b: Buffer, s: string): Buffer {
  const clean = s.replace(/\r\n?/g, "\n");
  return { text: b.text.slice(0, b.cursor) + clean + b.text.slice(b.cursor), cursor: b.cursor + clean.length };
}

function prevBoundary(text: string, at: number): number {
  if (at <= 0) return 0;
  let last = 0;
  for (const { index } of segmenter.segment(text.slice(0, at))) last = index;
  return last;
}

function nextBoundary(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const it = segmenter.segment(text.slice(at))[Symbol.iterator]().next();
  return it.done ? text.length : at + it.value.segment.length;
}

/** Deletes the grapheme before the cursor. */
export function backspace(b: Buffer): Buffer {
  if (b.cursor === 0) return b;
  const p = prevBoundary(b.text, b.cursor);
  return { text: b.text.slice(0, p) + b.text.slice(b.cursor), cursor: p };
}

/** Deletes the grapheme under the cursor. */
export function deleteForward(b: Buffer): Buffer {
  if (b.cursor >= b.text.length) return b;
  const n = nextBoundary(b.text, b.cursor);
  return { text: b.text.slice(0, b.cursor) + b.text.slice(n), cursor: b.cursor };
}

export function left(b: Buffer): Buffer {
  return { ...b, cursor: prevBoundary(b.text, b.cursor) };
}

export function right(b: Buffer): Buffer {
  return { ...b, cursor: nextBoundary(b.text, b.cursor) };
}

function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const i = text.indexOf("\n", at);
  return i === -1 ? text.length : i;
}

export function home(b: Buffer): Buffer {
  return { ...b, cursor: lineStart(b.text, b.cursor) };
}

export function end(b: Buffer): Buffer {
  return { ...b, cursor: lineEnd(b.text, b.cursor) };
}

/** True when the cursor is on the first line. */
export function onFirstLine(b: Buffer): boolean {
  return b.text.lastIndexOf("\n", b.cursor - 1) === -1;
}

/** True when the cursor is on the last line. */
export function onLastLine(b: Buffer): boolean {
  return b.text.indexOf("\n", b.cursor) === -1;
}

/** Moves to the previous line, keeping the column where it can. */
export function up(b: Buffer): Buffer {
  const start = lineStart(b.text, b.cursor);
  if (start === 0) return { ...b, cursor: 0 };
  const col = b.cursor - start;
  const prevStart = lineStart(b.text, start - 1);
  return { ...b, cursor: Math.min(prevStart + col, start - 1) };
}

/** Moves to the next line, keeping the column where it can. */
export function down(b: Buffer): Buffer {
  const start = lineStart(b.text, b.cursor);
  const endAt = lineEnd(b.text, b.cursor);
  if (endAt === b.text.length) return { ...b, cursor: b.text.length };
  const col = b.cursor - start;
  const nextStart = endAt + 1;
  return { ...b, cursor: Math.min(nextStart + col, lineEnd(b.text, nextStart)) };
}

/** ctrl+u: deletes from the start of the line to the cursor. */
export function killToStart(b: Buffer): Buffer {
  const s = lineStart(b.text, b.cursor);
  return { text: b.text.slice(0, s) + b.text.slice(b.cursor), cursor: s };
}

/** ctrl+k: deletes from the cursor to the end of the line. */
export function killToEnd(b: Buffer): Buffer {
  const e = lineEnd(b.text, b.cursor);
  return { text: b.text.slice(0, b.cursor) + b.text.slice(e === b.cursor && e < b.text.length ? e + 1 : e), cursor: b.cursor };
}

/** ctrl+w / alt+backspace: deletes the word before the cursor (and the spaces after it). */
export function deleteWord(b: Buffer): Buffer {
  let i = b.cursor;
  while (i > 0 && /\s/.test(b.text[i - 1]!)) i--;
  while (i > 0 && !/\s/.test(b.text[i - 1]!)) i--;
  return { text: b.text.slice(0, i) + b.text.slice(b.cursor), cursor: i };
}

/** alt+b / alt+f: word motions. */
export function wordLeft(b: Buffer): Buffer {
  let i = b.cursor;
  while (i > 0 && /\s/.test(b.text[i - 1]!)) i--;
  while (i > 0 && !/\s/.test(b.text[i - 1]!)) i--;
  return { ...b, cursor: i };
}

export function wordRight(b: Buffer): Buffer {
  let i = b.cursor;
  while (i < b.text.length && /\s/.test(b.text[i]!)) i++;
  while (i < b.text.length && !/\s/.test(b.text[i]!)) i++;
  return { ...b, cursor: i };
}

/**
 * The `@` mention being typed at the cursor: `@` at the start or after whitespace, up to the
 * cursor, with no whitespace in between (a quoted `@"a b` is allowed). Returns the query
 * (without `@` and quote) and where the token starts.
 */
export function mentionAt(b: Buffer): { query: string; start: number } | undefined {
  const before = b.text.slice(0, b.cursor);
  const m = /(?:^|\s)@("[^"\n]*|[^\s"]*)$/.exec(before);
  if (!m) return undefined;
  const token = m[1]!;
  const start = before.length - token.length - 1;
  return { query: token.startsWith('"') ? token.slice(1) : token, start };
}

/** Replaces the mention token at the cursor with `@<path>` (quoted when it has spaces). */
export function completeMention(b: Buffer, path: string, final: boolean): Buffer {
  const m = mentionAt(b);
  if (!m) return b;
  const token = /\s/.test(path) ? `@"${path}${final ? '"' : ""}` : `@${path}`;
  const suffix = final ? " " : "";
  const rest = b.text.slice(b.cursor);
  const text = b.text.slice(0, m.start) + token + suffix + rest;
  return { text, cursor: m.start + token.length + suffix.length };
}
