/**
 * File listing for `glob` and `grep`: ripgrep when available (`@vscode/ripgrep`'s bundled rg,
 * STACK.md gotcha 11), else a JavaScript walker honouring `.gitignore` files with the `ignore`
 * package and skipping the directories LARIK-REFERENCE §3 names for the fallback.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";

/** Directories the JavaScript walker never enters (§3), besides dot-directories. */
const SKIP_DIRS = new Set([".git", "node_modules", "vendor", ".venv", "__pycache__", "dist", "build", "target"]);

/** Files the JavaScript walker lists at most, so a huge tree cannot stall a call. */
const MAX_WALK_FILES = 200_000;

/** Where rg comes from: a path, `false` to force the JavaScript fallback, undefined to look it up. */
export type RipgrepOption = string | false | undefined;

let bundled: Promise<string | undefined> | undefined;

/** rg binaries that failed to run once; the JavaScript search is used instead from then on. */
const unusable = new Set<string>();

/**
 * Thrown by {@link runRipgrep} when the binary cannot run at all: missing, not executable (a
 * `noexec` mount, a lost exec bit) or not a program for this machine (the shell's 126/127).
 */
class RipgrepUnusable extends Error {
  override name = "RipgrepUnusable";
}

/** The ripgrep binary to use, or undefined when none is available or it proved unusable. */
export async function ripgrepPath(opt: RipgrepOption): Promise<string | undefined> {
  if (opt === false) return undefined;
  if (typeof opt === "string") return unusable.has(opt) ? undefined : opt;
  bundled ??= import("@vscode/ripgrep")
    .then((m) => (existsSync(m.rgPath) ? m.rgPath : undefined))
    .catch(() => undefined);
  const path = await bundled;
  return path && !unusable.has(path) ? path : undefined;
}

/**
 * Runs `search` with rg when one is available, else — or when rg turns out unable to run —
 * with `fallback`, telling the user once through `notice`.
 */
export async function withSearchEngine<T>(
  opt: RipgrepOption,
  notice: (text: string) => void,
  search: (rg: string) => Promise<T>,
  fallback: () => Promise<T>,
): Promise<T> {
  const rg = await ripgrepPath(opt);
  if (!rg) return fallback();
  try {
    return await search(rg);
  } catch (err) {
    if (!(err instanceof RipgrepUnusable)) throw err;
    notice(`ripgrep cannot run (${err.message}); glob and grep use the slower built-in search`);
    return fallback();
  }
}

/** The result of one rg run: its stdout lines (at most `maxLines`), stderr text and exit code. */
export interface RgRun {
  lines: string[];
  /** True when rg was stopped because `maxLines` was reached. */
  truncated: boolean;
  stderr: string;
  code: number | null;
}

/**
 * Runs rg with `args` in `cwd`, collecting stdout lines until `maxLines` (then rg is killed).
 * stdin is closed so rg never waits for piped input.
 * @throws RipgrepUnusable when the binary cannot run (it is then skipped by {@link ripgrepPath}).
 */
export function runRipgrep(rg: string, args: string[], cwd: string, signal: AbortSignal, maxLines: number): Promise<RgRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const lines: string[] = [];
    let rest = "";
    let stderr = "";
    let truncated = false;
    const onAbort = () => child.kill("SIGKILL");
    signal.addEventListener("abort", onAbort, { once: true });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (truncated) return;
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) {
        if (lines.length >= maxLines) {
          truncated = true;
          child.kill("SIGKILL");
          return;
        }
        lines.push(p);
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c: string) => {
      if (stderr.length < 8192) stderr += c;
    });
    child.on("error", (err) => {
      signal.removeEventListener("abort", onAbort);
      const code = (err as NodeJS.ErrnoException).code;
      // The same codes come from a working directory that vanished: that is no fault of rg.
      if ((code === "ENOENT" || code === "EACCES" || code === "EPERM" || code === "ENOEXEC") && existsSync(cwd)) {
        unusable.add(rg);
        reject(new RipgrepUnusable(`${rg}: ${code}`));
      } else reject(err);
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", onAbort);
      // A file the kernel will not execute is run by the shell (execvp), which exits 126 or 127.
      if ((code === 126 || code === 127) && lines.length === 0) {
        unusable.add(rg);
        reject(new RipgrepUnusable(`${rg}: ${stderr.trim().split("\n")[0] || `exit code ${code}`}`));
        return;
      }
      if (!truncated && rest) {
        if (lines.length < maxLines) lines.push(rest);
        else truncated = true;
      }
      resolvePromise({ lines, truncated, stderr, code });
    });
  });
}

type Ignore = import("ignore").Ignore;
interface Rules {
  /** Directory the rules are relative to. */
  base: string;
  ig: Ignore;
}

async function loadRules(dir: string, make: () => Ignore, below?: string): Promise<Rules | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, ".gitignore"), "utf8");
  } catch {
    return undefined;
  }
  const ig = make().add(text);
  if (below) {
    // The search root lies below `dir`. When these rules exclude it (or a folder on the way), rg
    // still searches it, matching each entry below on its own; `ignore` would exclude everything
    // under an excluded folder, so those folders are re-included, each with an anchored negation.
    const parts = relative(dir, below).split(sep).filter(Boolean);
    if (parts.length && ig.ignores(`${parts.join("/")}/`)) {
      const negations = parts.map((_, i) => `!/${parts.slice(0, i + 1).map(escapeGlob).join("/")}/`);
      ig.add(negations);
    }
  }
  return { base: dir, ig };
}

/** One path segment as a literal gitignore pattern (glob characters and a trailing space escaped). */
function escapeGlob(segment: string): string {
  return segment.replace(/[\\*?[\]]/g, "\\$&").replace(/ $/, "\\ ");
}

function ignored(rules: Rules[], abs: string, isDir: boolean): boolean {
  for (const r of rules) {
    const rel = relative(r.base, abs).split(sep).join("/");
    if (!rel || rel.startsWith("..")) continue;
    if (r.ig.ignores(isDir ? `${rel}/` : rel)) return true;
  }
  return false;
}

/**
 * Lists files under `root` (absolute paths, sorted by name per directory), honouring
 * `.gitignore` files from the enclosing git root down, skipping {@link SKIP_DIRS} and, unless
 * `hidden`, dot-files and dot-directories. `root` itself is always entered.
 */
export async function* walkFiles(root: string, opts: { signal: AbortSignal; hidden?: boolean }): AsyncGenerator<string> {
  const { default: ignore } = await import("ignore");
  const make = () => ignore();
  // .gitignore files above root (up to the git root) apply too, as with git and rg.
  const inherited: Rules[] = [];
  const chain: string[] = [];
  if (!existsSync(join(root, ".git"))) {
    for (let d = dirname(root); ; d = dirname(d)) {
      chain.unshift(d);
      if (existsSync(join(d, ".git")) || dirname(d) === d) break;
    }
  }
  if (chain.length && existsSync(join(chain[0]!, ".git"))) {
    for (const d of chain) {
      const r = await loadRules(d, make, root);
      if (r) inherited.push(r);
    }
  }
  let count = 0;
  const stack: { dir: string; rules: Rules[] }[] = [{ dir: root, rules: inherited }];
  while (stack.length) {
    if (opts.signal.aborted) return;
    const { dir, rules: parentRules } = stack.pop()!;
    const own = await loadRules(dir, make);
    const rules = own ? [...parentRules, own] : parentRules;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const e of entries) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) {
        if (SKIP_DIRS.has(e.name) || (!opts.hidden && e.name.startsWith("."))) continue;
        if (ignored(rules, abs, true)) continue;
        subdirs.push(abs);
      } else if (e.isFile()) {
        if (!opts.hidden && e.name.startsWith(".")) continue;
        if (ignored(rules, abs, false)) continue;
        yield abs;
        if (++count >= MAX_WALK_FILES) return;
      }
    }
    // Depth-first in name order: push in reverse so the first subdirectory is visited first.
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push({ dir: subdirs[i]!, rules });
  }
}
