/**
 * Exact-string replacement shared by `edit` and `multi_edit` (LARIK-REFERENCE §3). The file's
 * bytes are kept as they were except for the replaced text: UTF-8 BOM, CRLF vs LF, presence or
 * absence of the final newline and tabs survive; `$` in `new_string` is literal (no
 * `String.prototype.replace` patterns anywhere).
 */
import { readFile } from "node:fs/promises";
import type { ToolCheckContext, ToolContext, ToolResult } from "../../kernel/index.js";
import { miniDiff } from "./diff.js";
import { checkFresh, commitWrite, looksBinary } from "./fileio.js";
import { ToolInputError, errorResult, resolveWritePath } from "./paths.js";

/** One replacement as the model gives it. */
export interface EditSpec {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** A text file split into what edits change (`text`) and what they must preserve. */
export interface Doc {
  bom: boolean;
  /** The content after the BOM. */
  text: string;
  /** More CRLF line ends than bare LF ones. */
  crlf: boolean;
  /** At least one CRLF anywhere (mixed files). */
  hasCrlf: boolean;
  finalNewline: boolean;
}

/**
 * Decodes a file for editing.
 * @throws ToolInputError for binary or non-UTF-8 content (editing it as text would corrupt it).
 */
function parseDoc(bytes: Buffer, rel: string): Doc {
  if (looksBinary(bytes)) throw new ToolInputError(`${rel} is a binary file; edit only changes text files`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ToolInputError(`${rel} is not valid UTF-8; editing it as text would corrupt it — use bash instead`);
  }
  const bom = text.startsWith("\uFEFF");
  if (bom) text = text.slice(1);
  let crlfCount = 0;
  let lfCount = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text[i - 1] === "\r") crlfCount++;
    else lfCount++;
  }
  return { bom, text, crlf: crlfCount > lfCount, hasCrlf: crlfCount > 0, finalNewline: text.endsWith("\n") };
}

/** Converts every bare LF to CRLF, leaving existing CRLF alone. */
function toCrlf(s: string): string {
  return s.replace(/\r?\n/g, "\r\n");
}
/** Converts every CRLF to LF. */
function toLf(s: string): string {
  return s.replace(/\r\n/g, "\n");
}

const QUOTES: Record<string, string> = { "\u2018": "'", "\u2019": "'", "\u201A": "'", "\u201B": "'", "\u201C": '"', "\u201D": '"', "\u201E": '"', "\u201F": '"' };
/** Straightens typographic quotes; one UTF-16 unit for one, so indexes stay valid. */
function straightQuotes(s: string): string {
  return s.replace(/[\u2018\u2019\u201A\u201B\u201C\u201D\u201E\u201F]/g, (c) => QUOTES[c]!);
}

/** Start indexes of non-overlapping occurrences of `needle` in `hay`. */
function findAll(hay: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

/** 1-based line of character index `i`. */
function lineAt(text: string, i: number): number {
  let n = 1;
  for (let j = text.indexOf("\n"); j !== -1 && j < i; j = text.indexOf("\n", j + 1)) n++;
  return n;
}

/** A hint for an unmatched `old_string`: where its first line appears ignoring indentation. */
function notFoundHint(text: string, old: string): string {
  const first = old.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== "");
  if (!first) return "";
  const hits: number[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && hits.length < 3; i++) if (lines[i]!.trim() === first) hits.push(i + 1);
  if (hits.length === 0) return " Read the file again and copy the text exactly.";
  return ` Its first line appears (ignoring indentation) at line ${hits.join(", ")}: check whitespace, tabs and the following lines against a fresh read.`;
}

/** The outcome of one replacement. */
export interface Applied {
  text: string;
  count: number;
  /** 1-based line of the first replacement. */
  line: number;
  /** Set when the match needed a tolerance (line endings, quotes). */
  note?: string;
}

/**
 * Applies one edit to `doc.text` (after earlier edits: pass the running text).
 * Tries the exact `old_string` first; in a CRLF file an LF `old_string` matches its CRLF form and
 * `new_string` is converted to CRLF; as a last resort typographic quotes match straight ones.
 * @throws ToolInputError: empty or identical strings, no match, or several matches without `replace_all`.
 */
function applyEdit(doc: Doc, text: string, edit: EditSpec, rel: string): Applied {
  const { old_string: old, new_string: neu } = edit;
  if (old === "") throw new ToolInputError("old_string is empty: give the exact text to replace (use write to create a file)");
  if (old === neu) throw new ToolInputError("old_string and new_string are identical: nothing would change");

  // Candidate (old, new) pairs in order of preference.
  const candidates: { old: string; neu: string; note?: string }[] = [];
  const crlfPair = { old: toCrlf(old), neu: toCrlf(neu) };
  const oldHasBareLf = /(^|[^\r])\n/.test(old);
  if (doc.crlf) {
    if (crlfPair.old !== old) candidates.push(crlfPair);
    // old_string without bare LFs (one line, or already CRLF): new lines it brings must be CRLF too.
    candidates.push(oldHasBareLf ? { old, neu } : { old, neu: toCrlf(neu) });
  } else {
    candidates.push({ old, neu });
    if (doc.hasCrlf && crlfPair.old !== old) candidates.push(crlfPair);
    if (old.includes("\r\n")) candidates.push({ old: toLf(old), neu: toLf(neu) });
  }

  let chosen: { old: string; neu: string; note?: string } | undefined;
  let matches: number[] = [];
  for (const c of candidates) {
    matches = findAll(text, c.old);
    if (matches.length) {
      chosen = c;
      break;
    }
  }
  if (!chosen) {
    const flat = straightQuotes(text);
    for (const c of candidates) {
      matches = findAll(flat, straightQuotes(c.old));
      if (matches.length) {
        chosen = { ...c, note: "matched after treating typographic quotes as straight quotes" };
        break;
      }
    }
  }
  if (!chosen) throw new ToolInputError(`old_string not found in ${rel}.${notFoundHint(text, old)}`);
  if (matches.length > 1 && !edit.replace_all) {
    throw new ToolInputError(
      `old_string matches ${matches.length} times in ${rel}; include more surrounding lines to make it unique, or set replace_all to change every match`,
    );
  }
  const parts: string[] = [];
  let pos = 0;
  for (const m of matches) {
    parts.push(text.slice(pos, m), chosen.neu);
    pos = m + chosen.old.length;
  }
  parts.push(text.slice(pos));
  return { text: parts.join(""), count: matches.length, line: lineAt(text, matches[0]!), note: chosen.note };
}

/** Re-assembles file content: BOM back, and the final newline present or absent as before. */
function finishDoc(doc: Doc, text: string): string {
  let out = text;
  if (out !== "") {
    const eol = doc.crlf ? "\r\n" : "\n";
    if (doc.finalNewline && !out.endsWith("\n")) out += eol;
    else if (!doc.finalNewline && out.endsWith("\n")) out = out.slice(0, out.endsWith("\r\n") ? -2 : -1);
  }
  return (doc.bom ? "\uFEFF" : "") + out;
}

/**
 * Runs a list of edits against one file, all or nothing: boundary and freshness checks, every
 * edit applied in memory in order, then one checkpoint and one atomic write.
 * @param multi prefixes per-edit errors with `edit N of M:` (multi_edit).
 */
export async function editFile(ctx: ToolContext, path: string, edits: EditSpec[], multi: boolean): Promise<ToolResult> {
  try {
    const { target, doc, text, applied, after } = await planEdit(ctx, path, edits, multi);
    await commitWrite(ctx, target, after);
    const notes = [...new Set(applied.map((a) => a.note).filter(Boolean))];
    let summary: string;
    if (multi) {
      const total = applied.reduce((n, a) => n + a.count, 0);
      summary = `Applied ${applied.length} edits to ${target.rel} (${total} replacements, first at line ${Math.min(...applied.map((a) => a.line))})`;
    } else {
      const a = applied[0]!;
      summary = `Edited ${target.rel}: ${a.count === 1 ? "1 replacement" : `${a.count} replacements`} at line ${a.line}`;
    }
    if (notes.length) summary += ` (${notes.join("; ")})`;
    const display = { type: "diff", path: target.rel, created: false, ...(await miniDiff(target.rel, doc.text, text)) };
    return { content: summary, display };
  } catch (err) {
    return errorResult(err);
  }
}

/**
 * Why the edits cannot apply as they stand (not read, changed, no match, not unique, no
 * change), or undefined: {@link planEdit} without the write, for the tools' `precheck`.
 */
export async function editProblem(ctx: ToolCheckContext, path: string, edits: EditSpec[], multi: boolean): Promise<string | undefined> {
  try {
    await planEdit(ctx, path, edits, multi);
    return undefined;
  } catch (err) {
    return errorResult(err).content;
  }
}

/**
 * Everything an edit does but the write: boundary and freshness checks, then every edit applied
 * in memory in order.
 * @throws ToolInputError with the one-line reason the edit cannot apply.
 */
async function planEdit(ctx: ToolCheckContext, path: string, edits: EditSpec[], multi: boolean) {
  const target = await resolveWritePath(ctx, path);
  if (!target.exists) throw new ToolInputError(`${target.rel} does not exist; use write to create it`);
  checkFresh(ctx, target);
  const bytes = await readFile(target.abs);
  const doc = parseDoc(bytes, target.rel);
  let text = doc.text;
  const applied: Applied[] = [];
  for (let i = 0; i < edits.length; i++) {
    try {
      const a = applyEdit(doc, text, edits[i]!, target.rel);
      applied.push(a);
      text = a.text;
    } catch (err) {
      if (!multi) throw err;
      throw new ToolInputError(`edit ${i + 1} of ${edits.length}: ${(err as Error).message} No edit was applied.`);
    }
  }
  const after = finishDoc(doc, text);
  const before = (doc.bom ? "\uFEFF" : "") + doc.text;
  if (after === before) {
    if (text !== doc.text) {
      // The replacement differed only in the final newline, which finishDoc restores.
      throw new ToolInputError(
        `the edit would only ${doc.finalNewline ? "remove" : "add"} the final newline of ${target.rel}, which edit keeps as it is; use write to change it`,
      );
    }
    throw new ToolInputError(`the edit leaves ${target.rel} unchanged`);
  }
  return { target, doc, text, applied, after };
}
