/**
 * What `read` does (the tool itself is read.ts; this module loads at its first call):
 * line-numbered text, images as images (checked whole first, see kernel/kit/images.ts), binaries
 * and directories refused; records the mtime for read-before-write freshness (LARIK-REFERENCE §3, §5).
 */
import { open, stat } from "node:fs/promises";
import { extname } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { OUTPUT_CAP_BYTES, imageProblem, MAX_IMAGE_BYTES, sniffImageType, type FileTracker, type ToolContext, type ToolResult } from "../../kernel/index.js";
import { DEFAULT_READ_LIMIT, type ReadInput } from "./read.js";
import { looksBinary } from "./fileio.js";
import { ToolInputError, errorResult, resolvePath } from "./paths.js";

/** Characters kept of one line (§3). */
const MAX_LINE_CHARS = 2000;
/** Bytes of numbered text in one result; beyond it the result says where to continue. */
const TEXT_BUDGET_BYTES = OUTPUT_CAP_BYTES - 2_000;
/** Bytes scanned after the last returned line to count the file's remaining lines. */
const COUNT_SCAN_BYTES = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

/** Extensions read as images; the file's own first bytes then say which type it is. */
const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".gif", ".webp"]);

/** What the last full read of a path returned, per agent (keyed by the agent's tracker). */
interface ReadMemo {
  mtimeMs: number;
  size: number;
  offset: number;
  limit: number;
}
const memos = new WeakMap<FileTracker, Map<string, ReadMemo>>();

function memoOf(files: FileTracker): Map<string, ReadMemo> {
  let m = memos.get(files);
  if (!m) memos.set(files, (m = new Map()));
  return m;
}


/**
 * Bytes of one line kept in memory: enough for {@link MAX_LINE_CHARS} UTF-16 units of any text
 * (at most 3 bytes per unit), so a line longer than this is cut anyway and a one-line file of
 * gigabytes (minified code, a JSON dump) never has to fit in memory or in one string.
 */
const LINE_KEEP_BYTES = 4 * MAX_LINE_CHARS;

/**
 * Formats one numbered line: 6-wide right-aligned number, a tab, the text cut at
 * {@link MAX_LINE_CHARS} UTF-16 units (never inside a surrogate pair).
 * @param fullLength the line's length in UTF-16 units when `line` holds only its start.
 */
function numberLine(n: number, line: string, fullLength = line.length): string {
  let text = line;
  if (fullLength > MAX_LINE_CHARS) {
    let cut = text.slice(0, MAX_LINE_CHARS);
    const last = cut.charCodeAt(cut.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
    text = `${cut}… [line cut: ${fullLength} chars]`;
  }
  return `${String(n).padStart(6)}\t${text}`;
}

interface Slice {
  lines: string[];
  /** Number of the first returned line. */
  first: number;
  /** Lines in the file, when the whole file was scanned. */
  total?: number;
  /** Lines left after the returned ones (undefined when not counted to the end). */
  stoppedForSize: boolean;
}

/**
 * Streams `abs` and returns lines [offset, offset+limit) without the line terminator (a `\r`
 * before `\n` is dropped), stopping early when the numbered text would exceed the budget. Only
 * the first {@link LINE_KEEP_BYTES} of a returned line are held; the rest is only measured.
 */
async function readLines(abs: string, offset: number, limit: number, signal: AbortSignal): Promise<Slice> {
  const fh = await open(abs, "r");
  try {
    const lines: string[] = [];
    let budget = TEXT_BUDGET_BYTES;
    let lineNo = 0; // lines completed so far
    // The line being read: its kept bytes and its last byte; once it outgrows the kept bytes, a
    // streaming decoder measures its whole length in UTF-16 units (as `toString().length` would).
    let kept: Buffer[] = [];
    let keptLen = 0;
    let measure: StringDecoder | undefined;
    let units = 0;
    let lastByte = -1;
    let stoppedForSize = false;
    let collecting = true;
    let scannedAfter = 0;
    const buf = Buffer.allocUnsafe(CHUNK);
    const add = (piece: Buffer): void => {
      if (piece.length === 0) return;
      lastByte = piece[piece.length - 1]!;
      if (lineNo + 1 < offset) return; // a line before offset: only its end matters
      const room = LINE_KEEP_BYTES - keptLen;
      if (room > 0) {
        const head = piece.subarray(0, room);
        kept.push(Buffer.from(head));
        keptLen += head.length;
      }
      if (piece.length > room) {
        if (!measure) {
          measure = new StringDecoder("utf8");
          units = measure.write(Buffer.concat(kept)).length;
        }
        units += measure.write(piece.subarray(Math.max(room, 0))).length;
      }
    };
    const take = (): void => {
      lineNo++;
      const bytes = kept.length === 1 ? kept[0]! : Buffer.concat(kept);
      const cr = lastByte === 13;
      const full = measure ? units + measure.end().length - (cr ? 1 : 0) : undefined;
      kept = [];
      keptLen = 0;
      measure = undefined;
      units = 0;
      lastByte = -1;
      if (!collecting || lineNo < offset) return;
      let s = bytes.toString("utf8");
      if (full === undefined && cr) s = s.slice(0, -1);
      const formatted = numberLine(lineNo, s, full);
      const cost = Buffer.byteLength(formatted) + 1;
      if (cost > budget && lines.length > 0) {
        stoppedForSize = true;
        collecting = false;
        return;
      }
      budget -= cost;
      lines.push(formatted);
      if (lines.length >= limit) collecting = false;
    };
    let pendingTail = false; // an unterminated last line, while only counting
    for (;;) {
      if (signal.aborted) throw new ToolInputError("read interrupted");
      const { bytesRead } = await fh.read(buf, 0, CHUNK, null);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      if (!collecting) {
        // Only counting lines now: no decoding, and give up on enormous files.
        let i = chunk.indexOf(10);
        let newlines = 0;
        while (i !== -1) {
          newlines++;
          i = chunk.indexOf(10, i + 1);
        }
        lineNo += newlines;
        // Only whether an unterminated last line exists matters now, not its bytes.
        if (newlines > 0) pendingTail = chunk.lastIndexOf(10) < chunk.length - 1;
        else pendingTail = true;
        scannedAfter += bytesRead;
        if (scannedAfter > COUNT_SCAN_BYTES) return { lines, first: offset, stoppedForSize };
        continue;
      }
      let start = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
        add(chunk.subarray(start, i));
        take();
        start = i + 1;
        if (!collecting) {
          // Count the rest of this chunk's lines cheaply.
          let j = chunk.indexOf(10, start);
          while (j !== -1) {
            lineNo++;
            start = j + 1;
            j = chunk.indexOf(10, start);
          }
          pendingTail = start < chunk.length;
          start = chunk.length;
          break;
        }
      }
      if (start < chunk.length) add(chunk.subarray(start));
    }
    if (collecting ? lastByte !== -1 : pendingTail) {
      if (collecting) take();
      else lineNo++;
    }
    return { lines, first: offset, total: lineNo, stoppedForSize };
  } finally {
    await fh.close();
  }
}

/** Runs `read` (see read.ts). */
export async function runRead(args: ReadInput, ctx: ToolContext): Promise<ToolResult> {
  try {
    const { abs, rel } = resolvePath(ctx, args.path);
    let st;
    try {
      st = await stat(abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new ToolInputError(`file not found: ${rel}`);
      if (code === "ENOTDIR") throw new ToolInputError(`file not found: a parent of ${rel} is not a directory`);
      throw new ToolInputError(`cannot read ${rel}: ${(err as Error).message}`);
    }
    if (st.isDirectory()) throw new ToolInputError(`${rel} is a directory; use glob to list its files`);
    if (!st.isFile()) throw new ToolInputError(`${rel} is not a regular file (device, socket or pipe); read only opens files`);

    if (IMAGE_EXTENSIONS.has(extname(abs).toLowerCase())) {
      if (st.size > MAX_IMAGE_BYTES) {
        throw new ToolInputError(`${rel} is an image of ${st.size} bytes; read returns images up to ${MAX_IMAGE_BYTES} bytes`);
      }
      const fh = await open(abs, "r");
      let data: Buffer;
      try {
        data = await fh.readFile();
      } finally {
        await fh.close();
      }
      // the bytes decide the type: a screenshot saved as .png may be a JPEG
      const mime = sniffImageType(data);
      if (mime) {
        // a cut or corrupt image would be refused by the API (Anthropic: HTTP 400 "Could not
        // process image") in this and every later request of the session: never send one
        const problem = imageProblem(data, mime);
        if (problem) throw new ToolInputError(`${rel} could not be read as an image: ${problem}; it was not sent to the model`);
        ctx.files.recordRead(abs, st.mtimeMs);
        return {
          content: `Image ${rel} (${mime}, ${data.length} bytes)`,
          images: [{ media_type: mime, data: data.toString("base64") }],
        };
      }
      // Not really an image: fall through and treat it by its content.
    }

    const offset = args.offset ?? 1;
    const limit = args.limit ?? DEFAULT_READ_LIMIT;
    const memo = memoOf(ctx.files);
    const prev = memo.get(abs);
    if (prev && prev.mtimeMs === st.mtimeMs && prev.size === st.size && prev.offset === offset && prev.limit === limit) {
      // One short reply, then the next identical read returns the text again, so a model whose
      // earlier copy was compacted away is never stuck.
      memo.delete(abs);
      return {
        content: `${rel} is unchanged since your last read of these lines; the text is earlier in this conversation. If it is no longer there, read again to get it.`,
      };
    }

    const head = Buffer.alloc(Math.min(st.size, 8000));
    if (head.length) {
      const fh = await open(abs, "r");
      try {
        await fh.read(head, 0, head.length, 0);
      } finally {
        await fh.close();
      }
    }
    if (looksBinary(head)) {
      throw new ToolInputError(`${rel} is a binary file (${st.size} bytes); read only shows text — inspect it with bash (e.g. xxd or file)`);
    }

    ctx.files.recordRead(abs, st.mtimeMs);
    if (st.size === 0) return { content: `${rel} is empty` };
    const slice = await readLines(abs, offset, limit, ctx.signal);
    if (slice.lines.length === 0) {
      throw new ToolInputError(`offset ${offset} is past the end of ${rel} (${slice.total ?? "?"} lines)`);
    }
    memo.set(abs, { mtimeMs: st.mtimeMs, size: st.size, offset, limit });
    const last = offset + slice.lines.length - 1;
    let text = slice.lines.join("\n");
    const more = slice.total === undefined ? undefined : slice.total - last;
    if (more === undefined || more > 0) {
      const of = slice.total === undefined ? "" : ` of ${slice.total}`;
      const why = slice.stoppedForSize ? " (size limit of one result)" : "";
      text += `\n\n[showing lines ${offset}-${last}${of}${why}; continue with offset=${last + 1}]`;
    }
    return { content: text };
  } catch (err) {
    return errorResult(err);
  }
}
