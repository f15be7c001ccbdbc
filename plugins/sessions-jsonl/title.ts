/**
 * Session titles for lists (LARIK-REFERENCE §7): the first prompt's text, at most 80 characters;
 * for a prompt a slash command made, what the user typed (`/review main..HEAD`, the entry's
 * `data.typed`), not the prompt it expanded to. Listing reads only the head of each file, so it
 * stays fast however long the sessions are.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { isPrompt, SessionEntrySchema, typedPrompt, type Message, type SessionEntry, type SessionMeta } from "../../kernel/index.js";

/** Longest title, in characters (code points). */
const TITLE_CHARS = 80;
/** Bytes read per step while looking for the first prompt. */
const CHUNK = 64 * 1024;
/** Bytes read at most (a first prompt with a huge paste is cut to a placeholder title). */
const MAX_HEAD = 1024 * 1024;

/** The displayed text of a prompt: attachments and leading `<system-note>`s left out, whitespace
 * collapsed, cut to 80 characters with "…". */
function promptTitle(m: Message): string {
  const text = m.blocks
    .filter((b) => b.type === "text" && !b.attachment)
    .map((b) => (b as { text: string }).text)
    .join(" ")
    .replace(/^\s*(<system-note>[\s\S]*?<\/system-note>\s*)+/, "");
  return titleLine(text);
}

/** `text` on one line, whitespace collapsed, cut to {@link TITLE_CHARS} with "…". */
function titleLine(text: string): string {
  text = text.replace(/\s+/g, " ").trim();
  const chars = [...text];
  return chars.length <= TITLE_CHARS ? text : `${chars.slice(0, TITLE_CHARS - 1).join("")}…`;
}

/** The title of a prompt entry: what was typed when a command made it, else its displayed text. */
function entryTitle(e: SessionEntry & { message: Message }): string {
  const typed = typedPrompt(e);
  return typed !== undefined ? titleLine(typed) : promptTitle(e.message);
}

export interface SessionHead {
  meta: SessionMeta;
  title: string;
}

/**
 * Reads the head of a session file until the first prompt (at most 1 MiB).
 * @returns undefined when the file has no readable meta line (empty, or torn while created).
 */
export function readHead(path: string): SessionHead | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    let buf = Buffer.alloc(0);
    let pos = 0;
    let meta: SessionMeta | undefined;
    for (;;) {
      const chunk = Buffer.alloc(CHUNK);
      const n = readSync(fd, chunk, 0, CHUNK, pos);
      pos += n;
      buf = n ? Buffer.concat([buf, chunk.subarray(0, n)]) : buf;
      // Complete lines only; a line may span chunks.
      let start = 0;
      for (let end = buf.indexOf(0x0a); end >= 0; end = buf.indexOf(0x0a, start)) {
        const entry = parse(buf.subarray(start, end));
        start = end + 1;
        if (!entry) continue;
        if (!meta) {
          if (entry.type !== "meta" || !entry.meta) return undefined;
          meta = entry.meta;
          if (meta.title) return { meta, title: meta.title };
          continue;
        }
        if (entry.type === "message" && entry.message && isPrompt(entry.message)) return { meta, title: entryTitle(entry as SessionEntry & { message: Message }) };
      }
      buf = buf.subarray(start);
      if (n === 0) return meta && { meta, title: "" };
      if (pos >= MAX_HEAD) return meta && { meta, title: "(first prompt too long to show)" };
    }
  } finally {
    closeSync(fd);
  }
}

function parse(line: Buffer): SessionEntry | undefined {
  if (line.length === 0 || line.includes(0)) return undefined;
  try {
    const r = SessionEntrySchema.safeParse(JSON.parse(line.toString("utf8")));
    return r.success ? (r.data as SessionEntry) : undefined;
  } catch {
    return undefined;
  }
}
