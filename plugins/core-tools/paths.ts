/**
 * Path resolution and the file-tool boundary (LARIK-REFERENCE §4): write tools stay inside the
 * project root, never pass through a symlink and never touch a protected path, in every mode.
 * Read tools resolve paths the same way but are not confined (§4: read is a guard, not a boundary).
 */
import { lstat } from "node:fs/promises";
import { isAbsolute, normalize, relative, resolve, sep } from "node:path";
import { expandHome, protectedPathReason, type ToolContext, type ToolResult } from "../../kernel/index.js";

/** A refusal or bad input: the message is one line telling the model what to fix. */
export class ToolInputError extends Error {
  override name = "ToolInputError";
}

/** Turns a {@link ToolInputError} (or any error) into an `is_error` tool result. */
export function errorResult(err: unknown): ToolResult {
  const message = err instanceof Error ? err.message : String(err);
  return { content: message, is_error: true };
}

/** A resolved path: `abs` is absolute and normalized; `rel` is relative to cwd (POSIX separators) or absolute when outside cwd. */
export interface ResolvedPath {
  abs: string;
  rel: string;
}

/** `p` as shown to the model and matched by rules: relative to `cwd` when inside it, else absolute. */
export function displayPath(cwd: string, abs: string): string {
  const r = relative(cwd, abs);
  if (r === "") return ".";
  if (r.startsWith("..") || isAbsolute(r)) return abs;
  return r.split(sep).join("/");
}

/**
 * The normalized subject of a path argument as the model wrote it, for permission rules
 * (`subject` has no context, so an absolute path stays absolute and the checker relativizes it).
 */
export function pathSubject(p: string): string {
  if (typeof p !== "string" || p === "") return "";
  return normalize(p).split(sep).join("/").replace(/\/$/, "") || ".";
}

/**
 * The tool line of a search call (grep, glob): `pattern in path`, then `(key)` for each of
 * `extra` given (grep's `glob` filter): `TODO in src (*.ts)`. Undefined when `pattern` is not a
 * string (a malformed call), so the generic summary shows what came.
 */
export function searchSummary(input: unknown, extra: readonly string[] = []): string | undefined {
  const o = (input && typeof input === "object" ? input : {}) as Record<string, unknown>;
  if (typeof o.pattern !== "string") return undefined;
  let s = o.pattern;
  if (typeof o.path === "string" && o.path) s += ` in ${o.path}`;
  for (const k of extra) if (typeof o[k] === "string" && o[k]) s += ` (${o[k] as string})`;
  return s;
}

/**
 * Resolves a tool path argument against `ctx.cwd` (`~` is the home folder, see
 * {@link expandHome}). `..` segments are normalized lexically before the file system sees the
 * path, so `link/../x` can never be reinterpreted through a symlink.
 * @throws ToolInputError for an empty path or one containing NUL.
 */
export function resolvePath(ctx: Pick<ToolContext, "cwd">, p: string): ResolvedPath {
  if (typeof p !== "string" || p.trim() === "") throw new ToolInputError("path is empty: give a file path relative to the working directory or absolute");
  if (p.includes("\0")) throw new ToolInputError("path contains a NUL byte: give a plain file path");
  const abs = resolve(ctx.cwd, expandHome(p));
  return { abs, rel: displayPath(ctx.cwd, abs) };
}

/**
 * Resolves a path a write tool will write and enforces the boundary: inside `ctx.projectRoot`,
 * no symlink in any existing component (each one is `lstat`ed from the root down), not a
 * protected path, not a directory (nor a path ending in a slash), no non-directory parent.
 * @returns the resolved path and whether the target exists (its `lstat` when it does).
 * @throws ToolInputError with a one-line reason.
 */
export async function resolveWritePath(
  ctx: Pick<ToolContext, "cwd" | "projectRoot">,
  p: string,
): Promise<ResolvedPath & { exists: boolean; mtimeMs?: number; mode?: number; size?: number }> {
  const r = resolvePath(ctx, p);
  // resolve() drops a trailing slash; without this check "docs/new/" would become a file "docs/new".
  if (p.endsWith("/") || p.endsWith(sep)) throw new ToolInputError(`refused: ${p} ends with a slash, so it names a folder; give a file path (folders are created as needed)`);
  const root = resolve(ctx.projectRoot);
  const inRoot = relative(root, r.abs);
  if (inRoot === "") throw new ToolInputError(`refused: ${r.rel} is the project root directory, not a file`);
  if (inRoot.startsWith("..") || isAbsolute(inRoot)) {
    throw new ToolInputError(`refused: ${r.rel} is outside the project (${root}); file tools only write inside it`);
  }
  const why = protectedPathReason(inRoot);
  if (why) throw new ToolInputError(`refused: ${r.rel}: ${why}`);
  const parts = inRoot.split(sep);
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    cur = `${cur}${sep}${parts[i]}`;
    let st;
    try {
      st = await lstat(cur);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { ...r, exists: false };
      if (code === "ENOTDIR") throw new ToolInputError(`refused: a parent of ${r.rel} is not a directory`);
      throw new ToolInputError(`cannot check ${r.rel}: ${(err as Error).message}`);
    }
    const shown = displayPath(ctx.cwd, cur);
    if (st.isSymbolicLink()) throw new ToolInputError(`refused: ${shown} is a symlink; file tools do not write through symlinks`);
    const last = i === parts.length - 1;
    if (!last && !st.isDirectory()) throw new ToolInputError(`refused: ${shown} is not a directory, so ${r.rel} cannot be created`);
    if (last) {
      if (st.isDirectory()) throw new ToolInputError(`refused: ${r.rel} is a directory; give a file path`);
      if (!st.isFile()) throw new ToolInputError(`refused: ${r.rel} is not a regular file`);
      return { ...r, exists: true, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777, size: st.size };
    }
  }
  return { ...r, exists: false };
}
