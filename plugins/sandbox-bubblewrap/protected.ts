/**
 * Which paths of a project the sandbox re-binds read-only (LARIK-REFERENCE §4 "Protected paths",
 * §19, invariant 21): `.git` metadata that could redirect git (`hooks`, `config`,
 * `config.worktree`, `commondir`, `info/`, `modules/`, `worktrees/`), `.larik/`, `.claude/` and
 * `.mcp.json`. `.git` itself is bound onto itself writable: a mount point cannot be renamed or
 * replaced, yet git can still write objects, refs and the index. A missing protected path gets a
 * placeholder at its first missing component (§19 "Linux placeholders").
 */
import { lstatSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** A placeholder to create for a missing protected path. */
export interface PlaceholderSpec {
  path: string;
  kind: "dir" | "file";
  /** File content (`{}` for `.mcp.json`, `.` for `commondir`, else empty). */
  content?: string;
}

/** One bind the sandbox adds after the project bind. */
export interface ProtectedBind {
  path: string;
  /** `ro`: read-only bind; `pin`: writable self-bind (cannot be moved or replaced); `ro-try`: skip if the target is missing. */
  how: "ro" | "pin" | "ro-try";
  /** Set when the path is missing and needs this placeholder first. */
  placeholder?: PlaceholderSpec;
}

/** Entries inside a git directory that could redirect git; kinds for their placeholders. */
export const PROTECTED_GIT_ENTRIES: readonly { name: string; kind: "dir" | "file"; content?: string }[] = [
  { name: "hooks", kind: "dir" },
  { name: "config", kind: "file" },
  { name: "config.worktree", kind: "file" },
  { name: "commondir", kind: "file", content: "." },
  { name: "info", kind: "dir" },
  { name: "modules", kind: "dir" },
  { name: "worktrees", kind: "dir" },
];

/** Top-level protected entries of a project besides `.git`. */
export const PROTECTED_PROJECT_ENTRIES: readonly { name: string; kind: "dir" | "file"; content?: string }[] = [
  { name: ".larik", kind: "dir" },
  { name: ".claude", kind: "dir" },
  { name: ".mcp.json", kind: "file", content: "{}" },
];

type Kind = "missing" | "dir" | "file" | "dangling";

/** What is at `p`, following a final symlink (binds follow it too). */
function kindOf(p: string): Kind {
  try {
    lstatSync(p);
  } catch {
    return "missing";
  }
  try {
    return statSync(p).isDirectory() ? "dir" : "file";
  } catch {
    return "dangling";
  }
}

function bindFor(path: string, spec: { kind: "dir" | "file"; content?: string }, kind: (p: string) => Kind): ProtectedBind {
  const k = kind(path);
  if (k === "missing") return { path, how: "ro", placeholder: { path, kind: spec.kind, content: spec.content } };
  // A dangling symlink cannot be bound; `ro-try` skips it (documented gap).
  return { path, how: k === "dangling" ? "ro-try" : "ro" };
}

/** `gitdir: <path>` of a `.git` file (worktrees, submodules), resolved; undefined if unreadable. */
function gitFileTarget(gitFile: string): string | undefined {
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(gitFile, "utf8"));
    if (!m) return undefined;
    return isAbsolute(m[1]!) ? m[1]! : resolve(dirname(gitFile), m[1]!);
  } catch {
    return undefined;
  }
}

/**
 * The protected binds of `projectRoot`, in mount order (a folder before what lies inside it).
 * For a worktree or submodule (`.git` is a file), the `.git` file is read-only, its git
 * directory and common directory are writable, and their hooks/config/info/modules are
 * read-only (§19 "Worktree variant"); placeholders are only made inside the project.
 * `isPlaceholder(path)` tells which existing paths are placeholders of commands still running.
 * `infoDir` is the `info` folder git reads `info/exclude` from, when the project has a git dir.
 */
export function protectedBinds(
  projectRoot: string,
  isPlaceholder: (path: string) => boolean = () => false,
): { writable: string[]; binds: ProtectedBind[]; infoDir?: string } {
  const binds: ProtectedBind[] = [];
  const writable: string[] = [];
  let infoDir: string | undefined;
  // Another command's placeholder still counts as missing: bound with its spec, it is shared (and
  // made again should that command's release remove it before this one starts), and nothing is
  // made inside a placeholder .git (which would keep it from being removed).
  const kind = (p: string): Kind => (isPlaceholder(p) ? "missing" : kindOf(p));
  const git = join(projectRoot, ".git");
  const gitKind = kind(git);
  if (gitKind === "missing") {
    binds.push({ path: git, how: "ro", placeholder: { path: git, kind: "dir" } });
  } else if (gitKind === "dir") {
    binds.push({ path: git, how: "pin" });
    for (const e of PROTECTED_GIT_ENTRIES) binds.push(bindFor(join(git, e.name), e, kind));
    infoDir = join(git, "info");
  } else {
    const target = gitKind === "file" ? gitFileTarget(git) : undefined;
    if (target && kindOf(target) === "dir") {
      let common = target;
      try {
        common = resolve(target, readFileSync(join(target, "commondir"), "utf8").trim());
      } catch {
        // no commondir: the git directory is its own common directory
      }
      writable.push(target);
      if (common !== target) writable.push(common);
      // git reads info/exclude from the common directory
      infoDir = join(common, "info");
      for (const dir of new Set([common, target])) {
        for (const e of PROTECTED_GIT_ENTRIES) {
          const p = join(dir, e.name);
          // the worktree's own folder lives in worktrees/, so that one stays writable
          if (e.name === "worktrees") continue;
          const k = kindOf(p);
          if (k === "dir" || k === "file") binds.push({ path: p, how: "ro" });
        }
      }
    }
    binds.push({ path: git, how: gitKind === "dangling" ? "ro-try" : "ro" });
  }
  for (const e of PROTECTED_PROJECT_ENTRIES) binds.push(bindFor(join(projectRoot, e.name), e, kind));
  return { writable, binds, ...(infoDir ? { infoDir } : {}) };
}
