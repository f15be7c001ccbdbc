/**
 * Where Larik keeps things (LARIK-REFERENCE §7, §31): config under `$XDG_CONFIG_HOME/larik`
 * (else `~/.config/larik`), data under `$XDG_DATA_HOME/larik` (else `~/.local/share/larik`),
 * caches under `$XDG_CACHE_HOME/larik` (else `~/.cache/larik`).
 * Per-project names are `<cwd basename>-<16 hex of sha256(canonical cwd)>`.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** The config root: `$XDG_CONFIG_HOME/larik` or `~/.config/larik`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "larik");
}

/** The data root: `$XDG_DATA_HOME/larik` or `~/.local/share/larik`. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
  return join(base, "larik");
}

/** The cache root: `$XDG_CACHE_HOME/larik` or `~/.cache/larik`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "larik");
}

/** `path` with the home folder (`$HOME`, else the OS's) written `~`, for messages; other paths as they are. */
export function tildePath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  const home = (env.HOME || homedir()).replace(/\/+$/, "");
  return home && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
}

/**
 * The canonical form of a directory: absolute with symlinks resolved (when it exists). The native
 * realpath is one system call; the JavaScript one lstats every path component, and start-up
 * canonicalizes a dozen candidate folders (skills, commands) that mostly do not exist.
 */
export function canonicalDir(dir: string): string {
  const abs = resolve(dir);
  // most candidates do not exist: checking first saves a thrown error (~0.1 ms) for each
  if (!existsSync(abs)) return abs;
  try {
    return realpathSync.native(abs);
  } catch {
    return abs;
  }
}

const projectHashes = new Map<string, string>();

/**
 * `<basename>-<16 hex of sha256(canonical dir)>`, the per-project folder/file name. The hash is
 * computed in JavaScript (@noble/hashes, same digest as node:crypto): every run needs it before
 * its first model request, and loading node:crypto for it costs 5-8 ms of start-up.
 */
export function projectKey(cwd: string): string {
  const canon = canonicalDir(cwd);
  // a start asks for it several times (config, sessions, checkpoints) and the digest is pure
  let hash = projectHashes.get(canon);
  if (hash === undefined) projectHashes.set(canon, (hash = bytesToHex(sha256(utf8ToBytes(canon))).slice(0, 16)));
  const name = basename(canon).replace(/[^\w.-]/g, "_") || "root";
  return `${name}-${hash}`;
}

/** The personal settings file: `$XDG_CONFIG_HOME/larik/config.json` or `~/.config/larik/config.json`. */
export function personalSettingsFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), "config.json");
}

/** The private per-project settings file (approvals, "always allow" rules). */
export function privateProjectFile(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), "projects", `${projectKey(cwd)}.json`);
}

/** The nearest directory at or above `start` that contains `.git`, or undefined. */
export function gitRoot(start: string): string | undefined {
  let dir = canonicalDir(start);
  for (;;) {
    if (existsSync(join(dir, ".git"))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** Directories from the git root (or `cwd` when not in a repo) down to `cwd`, root first. */
export function dirsFromRoot(cwd: string): string[] {
  const canon = canonicalDir(cwd);
  const root = gitRoot(canon) ?? canon;
  const out: string[] = [];
  let dir = canon;
  for (;;) {
    out.unshift(dir);
    if (dir === root) break;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return out;
}

/**
 * `~` and `~/…` as the home folder (`home`, default the OS's), as models and settings write it;
 * `~user/…` and other paths stay as written. The permission checker, the file tools and the
 * sandboxes all expand through this, so a tool writes the very file the checker allowed.
 */
export function expandHome(p: string, home: string = homedir()): string {
  return p === "~" || p.startsWith("~/") ? join(home, p.slice(1)) : p;
}

/** `p` with `/` between its components, as rules, manifests and messages write paths. */
export function toPosix(p: string): string {
  return sep === "/" ? p : p.split(sep).join("/");
}

/** True when `p` is the directory `root` or below it (both absolute; no symlinks resolved). */
export function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The folder roots {@link folderRootError} knows: the variable that moves each, and what it holds. */
const ROOTS = [
  { name: "XDG_DATA_HOME", dir: dataDir, fallback: "~/.local/share", holds: "sessions and checkpoints" },
  { name: "XDG_CONFIG_HOME", dir: configDir, fallback: "~/.config", holds: "settings" },
  { name: "XDG_CACHE_HOME", dir: cacheDir, fallback: "~/.cache", holds: "caches" },
] as const;

/**
 * The one-line message for a file-system error that comes from a larik folder root lying under a
 * file (`XDG_DATA_HOME=~/notes.txt`: `ENOTDIR: not a directory, mkdir '…/larik/sessions/…'`),
 * naming the variable and what to do: `XDG_DATA_HOME (~/notes.txt) is a file, not a folder;
 * larik keeps sessions and checkpoints under it: point XDG_DATA_HOME at a folder, or unset it to
 * use ~/.local/share`. Undefined for any other error, which is shown as it is.
 */
export function folderRootError(err: unknown, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const e = err as NodeJS.ErrnoException | undefined;
  if (!e || (e.code !== "ENOTDIR" && e.code !== "EEXIST") || typeof e.path !== "string") return undefined;
  for (const root of ROOTS) {
    const dir = root.dir(env);
    if (!isInside(dir, e.path)) continue;
    // the top-most existing part of the path that is not a folder: what is in the way
    let blocker: string | undefined;
    for (let p = e.path; ; p = dirname(p)) {
      try {
        if (!statSync(p).isDirectory()) blocker = p;
      } catch {
        // missing: not what is in the way
      }
      if (dirname(p) === p) break;
    }
    if (!blocker) return undefined;
    const where = tildePath(blocker, env);
    const value = env[root.name];
    if (value) {
      const named = resolve(value) === blocker ? `${root.name} (${where}) is a file` : `${root.name} (${tildePath(value, env)}) lies under ${where}, which is a file`;
      return `${named}, not a folder; larik keeps ${root.holds} under it: point ${root.name} at a folder, or unset it to use ${root.fallback}`;
    }
    return `${where} is a file, not a folder; larik keeps ${root.holds} in ${tildePath(dir, env)}: move the file away, or set ${root.name} to a folder`;
  }
  return undefined;
}
