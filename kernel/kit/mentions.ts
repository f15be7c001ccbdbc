/**
 * `@` mentions (LARIK-REFERENCE §2 per-turn expansion, §24 composer, §22 "`@` mentions work" in
 * `-p`): `@path`, `@path#L10-40`, `@folder/` and `@"with spaces"` in a prompt become attachments
 * sent with it, for every front end (the TUI, `larik -p`, the server). Attached files count as
 * read (write/edit freshness, §5); read deny rules apply; a token that names no file stays plain
 * text. A mention that is not attached (refused, or a path where there is nothing) is named in a
 * notice for the user (a typo shows) and explained to the model in a `<system-note>`, so that it
 * does not guess what the file holds.
 * The TUI's file picker stays in the TUI plugin.
 */
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { extname, relative, resolve } from "node:path";
import type { Agent } from "../agent.js";
import { imageProblem, MAX_IMAGE_BYTES, sniffImageType } from "./images.js";
import type { Block } from "../types.js";

/** Largest text file attached whole, in bytes. */
export const MAX_ATTACH_BYTES = 256 * 1024;
const IMAGE_TYPES: Record<string, string> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp" };

/** `@` at the start, after whitespace or after an opening bracket (`(@a.ts)`), never inside a word (`mail@example`). */
const MENTION = /(^|[\s([{])@(?:"([^"\n]+)"|([^\s"]+))/g;

/** Sentence punctuation that may follow an unquoted mention in prose: `@a.ts,` `@a.ts.` `(@a.ts)`. */
const TRAILING_PUNCTUATION = /[,.;:!?)\]}'"`>]+$/;

/** A mention's line range: `a.ts#L10` or `a.ts#L10-40` (path, first line, last line). */
const RANGE = /^(.*)#L(\d+)(?:-(\d+))?$/;

/** The path part of a mention token: without its line range. */
function pathOf(token: string): string {
  return RANGE.exec(token)?.[1] ?? token;
}

/**
 * A mention that reads as a path even when nothing is there: a folder part, a file extension or
 * a quoted name. `@alice`, `@here` or `@v2` name no file and are prose, which neither the model
 * nor the user is told about.
 */
function looksLikePath(token: string, quoted: boolean): boolean {
  return quoted || token.includes("/") || /\.[A-Za-z0-9]{1,10}$/.test(token);
}

/**
 * Whether `text` has something shaped like a mention (`@` at its start, after whitespace or an
 * opening bracket, then a non-space): a cheap test before {@link expandMentions} touches the file system.
 */
export function hasMentions(text: string): boolean {
  return /(^|[\s([{])@\S/.test(text);
}

/** The prompt as blocks: the typed text first, then one attachment per mention that resolved. */
export interface ExpandedPrompt {
  blocks: Block[];
  /**
   * For the user, one line per mention not attached (refused, or a path where there is nothing)
   * with why: `@x not attached: …`.
   */
  notices: string[];
  /**
   * For the model, one per mention not attached, refused or naming nothing: pass them with the
   * prompt (`agent.run(prompt, { notes })`), which sends them as `<system-note>`s.
   */
  notes: string[];
}

function numbered(lines: string[], from: number): string {
  return lines.map((l, i) => `${String(from + i).padStart(6)}\t${l}`).join("\n");
}

/**
 * Expands the `@` mentions of `text` for `agent` (paths resolve against the host's cwd). Each
 * mention not attached gets a note for the model in `notes`, which the caller passes with the
 * prompt to `agent.run` (not queued here: a prompt refused as busy would hand them to the turn
 * that is running, or to the next one): one refused
 * (a read deny rule, too large, a binary file, an image that is cut short or corrupt) says why,
 * and one that reads as a path where there is nothing says so; both are in `notices` for the user
 * too. A word that names no file and does not read as a path (`@alice`, `@Override`) stays plain
 * text, with no note and no notice.
 * @throws never: unreadable mentions stay text, those not attached are reported in `notices`.
 */
export async function expandMentions(text: string, agent: Agent): Promise<ExpandedPrompt> {
  const cwd = agent.host.cwd;
  const blocks: Block[] = [{ type: "text", text }];
  const notices: string[] = [];
  const notes: string[] = [];
  const seen = new Set<string>();
  const refuse = (token: string, why: string) => {
    notices.push(`@${token} not attached: ${why}`);
    notes.push(`The user's mention @${token} was not attached, so its content is not in this message: ${why}.`);
  };
  for (const m of text.matchAll(MENTION)) {
    let token = m[2] ?? m[3]!;
    let st = await stat(resolve(cwd, pathOf(token))).catch(() => undefined);
    // prose punctuation after a mention ("see @src/a.ts, then …") is not part of its path; a
    // file whose name really ends so is taken as named
    const bare = m[3] !== undefined && !st ? token.replace(TRAILING_PUNCTUATION, "") : token;
    if (bare !== token && bare) {
      token = bare;
      st = await stat(resolve(cwd, pathOf(token))).catch(() => undefined);
    }
    const range = RANGE.exec(token);
    const path = range ? range[1]! : token;
    if (!path || seen.has(token)) continue;
    seen.add(token);
    const abs = resolve(cwd, path);
    if (!st) {
      if (looksLikePath(path, m[2] !== undefined)) {
        const where = relative(cwd, abs).split("\\").join("/");
        notices.push(`@${token} not attached: there is no file or folder at ${where}`);
        notes.push(`The user's mention @${token} was not attached: there is no file or folder at ${where}.`);
      }
      continue;
    }
    const rel = relative(cwd, abs).split("\\").join("/") || ".";
    const decision = agent.checker.decide({ tool: "read", kind: "read", input: { path: rel }, subject: rel });
    if (decision.decision === "deny") {
      refuse(token, decision.reason);
      continue;
    }
    if (st.isDirectory()) {
      const names = await readdir(abs, { withFileTypes: true }).catch(() => []);
      const list = names
        .filter((d) => d.name !== ".git")
        .map((d) => (d.isDirectory() ? `${d.name}/` : d.name))
        .sort();
      blocks.push({ type: "text", text: `<folder path="${rel}">\n${list.join("\n")}\n</folder>`, attachment: `${rel}/` });
      continue;
    }
    if (!st.isFile()) continue;
    const mime = IMAGE_TYPES[extname(abs).toLowerCase()];
    if (mime) {
      if (st.size > MAX_IMAGE_BYTES) {
        refuse(token, "images are limited to 5 MB");
        continue;
      }
      const bytes = await readFile(abs);
      // the bytes decide the type (a JPEG saved as .png); a cut or corrupt image would make the
      // API refuse this and every later request of the session (see images.ts)
      const actual = sniffImageType(bytes) ?? mime;
      const problem = imageProblem(bytes, actual);
      if (problem) {
        refuse(token, `it could not be read as an image: ${problem}`);
        continue;
      }
      blocks.push({ type: "image", media_type: actual, data: bytes.toString("base64"), attachment: rel });
      continue;
    }
    if (st.size > MAX_ATTACH_BYTES && !range) {
      refuse(token, `${Math.round(st.size / 1024)} KB is over the ${MAX_ATTACH_BYTES / 1024} KB limit; mention a range such as @${path}#L1-200`);
      continue;
    }
    const buf = await readFile(abs);
    if (buf.subarray(0, 8192).includes(0)) {
      refuse(token, "it is a binary file");
      continue;
    }
    const lines = buf.toString("utf8").replace(/\r\n/g, "\n").split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    let from = 1;
    let to = lines.length;
    if (range) {
      from = Math.max(1, Number(range[2]));
      to = Math.min(lines.length, range[3] ? Number(range[3]) : from);
    }
    const body = numbered(lines.slice(from - 1, to), from);
    const attrs = range ? ` lines="${from}-${to}"` : "";
    blocks.push({ type: "text", text: `<file path="${rel}"${attrs}>\n${body}\n</file>`, attachment: range ? `${rel}#L${from}-${to}` : rel });
    try {
      agent.files.recordRead(await realpath(abs), st.mtimeMs);
      if (abs !== (await realpath(abs))) agent.files.recordRead(abs, st.mtimeMs);
    } catch {
      // freshness is a convenience here; the model can still read the file itself
    }
  }
  return { blocks, notices, notes };
}
