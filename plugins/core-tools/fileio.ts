/**
 * File plumbing shared by the write tools: read-before-write freshness (LARIK-REFERENCE §5,
 * invariant 15), checkpoint-then-write (§8) and atomic replacement.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { ToolContext } from "../../kernel/index.js";
import { ToolInputError, resolveWritePath } from "./paths.js";

/** A write target that passed the boundary checks. */
export type WriteTarget = Awaited<ReturnType<typeof resolveWritePath>>;

/** Bytes sniffed to decide whether a file is binary (git uses the first 8000). */
const SNIFF_BYTES = 8000;

/** True when `buf` looks binary: a NUL byte in the first {@link SNIFF_BYTES} bytes (git's rule). */
export function looksBinary(buf: Uint8Array): boolean {
  const n = Math.min(buf.length, SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (buf[i] === 0) return true;
  return false;
}

/**
 * Refuses to overwrite an existing file the agent has not read, or that changed on disk since
 * it was read (mtime differs from the one `read` recorded).
 * @throws ToolInputError naming what to do (read the file first / again).
 */
export function checkFresh(ctx: Pick<ToolContext, "files">, target: WriteTarget): void {
  if (!target.exists) return;
  const last = ctx.files.lastRead(target.abs);
  if (last === undefined) throw new ToolInputError(`refused: ${target.rel} exists and has not been read yet; read it first`);
  if (last !== target.mtimeMs) {
    throw new ToolInputError(`refused: ${target.rel} changed on disk since it was last read; read it again before writing`);
  }
}

/**
 * Resolves, boundary-checks and freshness-checks one write target.
 * @throws ToolInputError with a one-line reason.
 */
export async function prepareWrite(ctx: Pick<ToolContext, "cwd" | "projectRoot" | "files">, path: string): Promise<WriteTarget> {
  const target = await resolveWritePath(ctx, path);
  checkFresh(ctx, target);
  return target;
}

/**
 * Captures the file for `/undo`, then replaces it atomically (temp file in the same directory,
 * then rename, so readers never see a half-written file and a symlink swapped in meanwhile is
 * replaced rather than followed). Creates parent directories. Keeps the mode of an existing
 * file. Records the new mtime as read so a follow-up edit by the same agent is fresh.
 * @returns the new mtime in ms.
 * @throws ToolInputError when the checkpoint fails (nothing is written) or the write fails.
 */
export async function commitWrite(ctx: Pick<ToolContext, "checkpoint" | "files">, target: WriteTarget, data: string | Uint8Array): Promise<number> {
  try {
    await ctx.checkpoint(target.abs);
  } catch (err) {
    throw new ToolInputError(`write aborted: could not checkpoint ${target.rel} for undo (${(err as Error).message}); nothing was written`);
  }
  const dir = dirname(target.abs);
  const tmp = join(dir, `.${basename(target.abs)}.${randomBytes(6).toString("hex")}.larik-tmp`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(tmp, data, { flag: "wx", mode: target.mode ?? 0o666 });
    // writeFile's mode is filtered by the umask; an existing file's exact mode is restored here.
    if (target.mode !== undefined) await chmod(tmp, target.mode);
    await rename(tmp, target.abs);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw new ToolInputError(`could not write ${target.rel}: ${(err as Error).message}`);
  }
  const st = await stat(target.abs);
  ctx.files.recordRead(target.abs, st.mtimeMs);
  return st.mtimeMs;
}

/** Number of lines in `text` as an editor counts them (a final newline does not start a new line). */
export function countLines(text: string): number {
  if (text === "") return 0;
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n - 1 : n;
}
