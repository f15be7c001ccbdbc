/**
 * What a shell command changed in a git repository (LARIK-REFERENCE §8, v0.4 paragraph): a
 * `git status --porcelain -z --untracked-files=all` listing and copies of every dirty or
 * untracked file before the command, the same listing after, originals of newly dirty tracked
 * files from the HEAD recorded before. Git runs without a shell, with `GIT_OPTIONAL_LOCKS=0`
 * and `-c core.fsmonitor=false` (a repository's fsmonitor hook is a command); nothing here
 * stages, stashes or commits.
 *
 * Not covered (as in Larik): ignored files, changes made by moving HEAD, files over
 * {@link GIT_COPY_LIMITS}.perFile, symlinks and submodules, non-repositories; edits made by the
 * user while the command runs are attributed to the command.
 */
import { spawn } from "node:child_process";
import { constants, type Stats } from "node:fs";
import { lstat, open } from "node:fs/promises";
import { join } from "node:path";
import { gitRoot } from "../paths.js";

/** Limits on the copies taken before a command (§8). Bytes and file counts. */
export const GIT_COPY_LIMITS = {
  /** Files larger than this are not copied (and their changes not covered). */
  perFile: 2 * 1024 * 1024,
  /** Copies stop once this many bytes were taken. */
  total: 64 * 1024 * 1024,
  /** Above this many dirty/untracked files the command runs untracked. */
  maxFiles: 2000,
};

/**
 * How far (ms) a file's birth time may precede the command's start and still count as created
 * by it: the kernel stamps files with a coarse clock that lags the real one by up to a tick.
 */
const CLOCK_SLACK_MS = 50;

/** A file's state as the undo store records it. */
export type FileState = { kind: "absent" } | { kind: "file"; bytes: Buffer; mode: number };

type Before =
  | { kind: "absent" }
  | { kind: "file"; bytes: Buffer; mode: number; stat: Stats }
  /** Not copied (too big, symlink, directory, over budget, already captured): not covered. */
  | { kind: "skip" };

/** The state of a repository before a command. Paths are relative to `top`, `/`-separated. */
export interface GitBefore {
  top: string;
  /** HEAD's commit id before the command; undefined in a repository without commits. */
  head?: string;
  before: Map<string, Before>;
  /** `Date.now()` just before the command started. */
  startedAt: number;
}

/**
 * One change a command made: the path (relative to the repository top) and its earlier state.
 * A new file's `missing_dir` is the first of its folders the command created, if any.
 */
export interface GitChange {
  path: string;
  state: FileState | { kind: "absent"; missing_dir?: string };
}

const GIT_ENV = { GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" };

/**
 * Runs git without a shell and returns stdout.
 * @throws Error with git's first stderr line when it exits non-zero or cannot start.
 */
export function git(cwd: string, args: string[], input?: Buffer | string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["-c", "core.fsmonitor=false", "--literal-pathspecs", ...args], {
      cwd,
      env: { ...process.env, ...GIT_ENV },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on("data", (c: Buffer) => out.push(c));
    child.stderr!.on("data", (c: Buffer) => err.push(c));
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else {
        const msg = Buffer.concat(err).toString("utf8").trim().split("\n")[0] || `exit status ${code}`;
        reject(new Error(`git ${args[0]} failed: ${msg}`));
      }
    });
    if (input !== undefined) {
      child.stdin!.on("error", () => {}); // git may exit before reading everything
      child.stdin!.end(input);
    }
  });
}

/**
 * Parses `git status --porcelain -z` (v1): `XY path\0`, with the original path following as its
 * own NUL-terminated field for renames and copies. Returns every path named (both sides of a
 * rename) with its `XY` code.
 */
export function parsePorcelainZ(out: Buffer | string): Map<string, string> {
  const fields = out.toString("utf8").split("\0");
  const map = new Map<string, string>();
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.length < 4) continue;
    const xy = f.slice(0, 2);
    map.set(f.slice(3), xy);
    if (xy[0] === "R" || xy[0] === "C" || xy[1] === "R" || xy[1] === "C") {
      const from = fields[++i];
      if (from) map.set(from, xy);
    }
  }
  return map;
}

async function status(top: string): Promise<Map<string, string>> {
  return parsePorcelainZ(await git(top, ["status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"]));
}

/** The repository top of `cwd`, or undefined when `cwd` is not inside a work tree. */
async function repoTop(cwd: string): Promise<string | undefined> {
  try {
    const top = (await git(cwd, ["rev-parse", "--show-toplevel"])).toString("utf8").trim();
    return top || undefined;
  } catch {
    return undefined;
  }
}

/** Reads a regular file without following a symlink at its last component. */
export async function readNoFollow(abs: string): Promise<Buffer> {
  const fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/** `lstat` of `abs`, or undefined when nothing is there (ENOENT, ENOTDIR). @throws other fs errors. */
export async function lstatOrUndefined(abs: string): Promise<Stats | undefined> {
  try {
    return await lstat(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

/**
 * Lists the repository and copies its dirty and untracked files before a command.
 * `skip(path)` names paths not to copy (already captured this turn). Returns undefined with a
 * reason when the command should run untracked (not a repository, too many dirty files, git
 * failed).
 */
export async function gitBefore(cwd: string, skip: (topRelPath: string, top: string) => boolean): Promise<GitBefore | { untracked: string }> {
  // No `.git` at or above cwd (and no GIT_DIR): git would find no repository either, and asking
  // it costs two process spawns (~8 ms each here) before every bash call.
  if (!process.env.GIT_DIR && !gitRoot(cwd)) return { untracked: "not a git repository" };
  let top: string | undefined;
  let head: string | undefined;
  try {
    // one spawn in the common case; a repository without commits fails on HEAD
    [top, head] = (await git(cwd, ["rev-parse", "--show-toplevel", "HEAD"])).toString("utf8").trim().split("\n");
  } catch {
    top = await repoTop(cwd);
    head = undefined;
  }
  if (!top) return { untracked: "not a git repository" };
  const listing = await status(top);
  if (listing.size > GIT_COPY_LIMITS.maxFiles) {
    return { untracked: `${listing.size} dirty or untracked files (more than ${GIT_COPY_LIMITS.maxFiles})` };
  }
  const before = new Map<string, Before>();
  let budget = GIT_COPY_LIMITS.total;
  for (const path of listing.keys()) {
    if (skip(path, top)) {
      before.set(path, { kind: "skip" });
      continue;
    }
    const abs = join(top, path);
    const st = await lstatOrUndefined(abs);
    if (!st) before.set(path, { kind: "absent" });
    else if (!st.isFile() || st.size > GIT_COPY_LIMITS.perFile || st.size > budget) before.set(path, { kind: "skip" });
    else {
      try {
        const bytes = await readNoFollow(abs);
        budget -= bytes.length;
        before.set(path, { kind: "file", bytes, mode: st.mode & 0o7777, stat: st });
      } catch {
        before.set(path, { kind: "skip" }); // vanished or unreadable: not covered
      }
    }
  }
  return { top, head, before, startedAt: Date.now() };
}

function sameStat(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.mode === b.mode;
}

/**
 * True when the file at `abs` differs from `prev` (content, mode, type or existence). With
 * `execOnly`, modes are compared as git does: only whether the file is executable.
 */
async function differs(abs: string, prev: Before, execOnly = false): Promise<boolean> {
  const st = await lstatOrUndefined(abs);
  if (prev.kind === "absent") return st !== undefined;
  if (prev.kind !== "file") return false;
  if (!st) return true;
  if (!st.isFile()) return true;
  if (!execOnly && sameStat(st, prev.stat)) return false;
  const modeChanged = execOnly ? (st.mode & 0o100) !== (prev.mode & 0o100) : (st.mode & 0o7777) !== prev.mode;
  if (modeChanged || st.size !== prev.bytes.length) return true;
  try {
    return !(await readNoFollow(abs)).equals(prev.bytes);
  } catch {
    return true;
  }
}

/** Modes `git ls-tree` reports for regular files, as permission bits. */
const GIT_FILE_MODES: Record<string, number> = { "100644": 0o644, "100755": 0o755 };

interface TreeEntry {
  mode: number;
  sha: string;
  size: number;
}

/** `git ls-tree -l -z <head> -- paths…` for regular files only, chunked to keep argv short. */
async function lsTree(top: string, head: string, paths: string[]): Promise<Map<string, TreeEntry>> {
  const out = new Map<string, TreeEntry>();
  for (let i = 0; i < paths.length; i += 500) {
    const chunk = paths.slice(i, i + 500);
    const text = (await git(top, ["ls-tree", "-l", "-z", head, "--", ...chunk])).toString("utf8");
    for (const rec of text.split("\0")) {
      // "<mode> SP <type> SP <sha> SP+ <size> TAB <path>"
      const m = /^(\d{6}) (\w+) ([0-9a-f]+) +(-|\d+)\t([^]*)$/.exec(rec);
      if (!m || m[2] !== "blob") continue;
      const mode = GIT_FILE_MODES[m[1]!];
      if (mode === undefined) continue; // symlinks (120000) are not restored as files
      out.set(m[5]!, { mode, sha: m[3]!, size: Number(m[4]) });
    }
  }
  return out;
}

/**
 * Reads blobs with one `git cat-file --batch` (the batched form of `git cat-file blob <sha>`).
 * @throws Error when a blob is missing.
 */
async function catBlobs(top: string, shas: string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!shas.length) return out;
  const buf = await git(top, ["cat-file", "--batch"], shas.join("\n") + "\n");
  let pos = 0;
  for (const sha of shas) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) throw new Error(`git cat-file: truncated output for ${sha}`);
    const header = buf.subarray(pos, nl).toString("utf8").split(" ");
    if (header[1] !== "blob") throw new Error(`git cat-file: ${sha} is ${header[1] ?? "missing"}`);
    const size = Number(header[2]);
    out.set(sha, buf.subarray(nl + 1, nl + 1 + size));
    pos = nl + 1 + size + 1;
  }
  return out;
}

/**
 * Lists the repository again after the command and works out what it changed, each with the
 * state to restore: the copy taken before; for a tracked file that was clean, its HEAD blob and
 * mode; for a new file, "absent". A new untracked file whose birth time predates the command
 * (an ignored file a `.gitignore` edit revealed) is left alone rather than deleted by undo.
 * `skip(path)` names paths already captured this turn (first capture wins).
 */
export async function gitAfter(snap: GitBefore, skip: (topRelPath: string) => boolean): Promise<GitChange[]> {
  const { top, before } = snap;
  const after = await status(top);
  const changes: GitChange[] = [];
  const fresh: string[] = [];
  for (const [path, prev] of before) {
    if (prev.kind === "skip" || skip(path)) continue;
    if (!(await differs(join(top, path), prev))) continue;
    changes.push({ path, state: prev.kind === "absent" ? { kind: "absent" } : { kind: "file", bytes: prev.bytes, mode: prev.mode } });
  }
  for (const path of after.keys()) if (!before.has(path) && !skip(path)) fresh.push(path);
  if (!fresh.length) return changes;
  const tree = snap.head ? await lsTree(top, snap.head, fresh) : new Map<string, TreeEntry>();
  const wanted = [...new Set([...tree.values()].filter((e) => e.size <= GIT_COPY_LIMITS.perFile).map((e) => e.sha))];
  const blobs = await catBlobs(top, wanted);
  for (const path of fresh) {
    const abs = join(top, path);
    const entry = tree.get(path);
    if (entry) {
      const bytes = blobs.get(entry.sha);
      if (!bytes) continue; // too big or not a regular file: not covered
      if (!(await differs(abs, { kind: "file", bytes, mode: entry.mode, stat: NO_STAT }, true))) continue;
      changes.push({ path, state: { kind: "file", bytes, mode: entry.mode } });
      continue;
    }
    const st = await lstatOrUndefined(abs);
    if (!st || !isNew(st, snap.startedAt)) continue;
    changes.push({ path, state: { kind: "absent", missing_dir: await firstNewDir(top, path, snap.startedAt) } });
  }
  return changes;
}

/** True when `st` was born after the command started (birth time, else change time). */
function isNew(st: Stats, startedAt: number): boolean {
  const born = st.birthtimeMs > 0 ? st.birthtimeMs : st.ctimeMs;
  return born >= startedAt - CLOCK_SLACK_MS;
}

/** The outermost folder of `path` born during the command, so undo can remove it again. */
async function firstNewDir(top: string, path: string, startedAt: number): Promise<string | undefined> {
  const comps = path.split("/");
  for (let i = 1; i < comps.length; i++) {
    const sub = comps.slice(0, i).join("/");
    const st = await lstatOrUndefined(join(top, sub));
    if (st?.isDirectory() && isNew(st, startedAt)) return sub;
  }
  return undefined;
}

/** A stat that never matches, so {@link differs} compares content. */
const NO_STAT = { ino: -1, size: -1, mtimeMs: -1, ctimeMs: -1, mode: -1 } as unknown as Stats;
