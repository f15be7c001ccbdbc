/**
 * Keeps file placeholders out of git. A placeholder `.mcp.json` (`{}`) sits in the working tree
 * while a command runs, and a sandboxed `git add -A && git commit` would commit it, and
 * `git status` would show it, to a model that then asks about a file the project does not have.
 * So the command sees, at `.git/info` (read-only anyway), a copy of it whose `exclude` also names
 * those placeholders. The copy lives in a folder of Larik's own that the sandbox cannot write; the
 * project's real `.git/info` is never written. Only git run inside the sandbox sees the
 * difference, and only for files that do not exist outside it.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { ProtectedBind } from "./protected.js";

/** The comment above the added patterns, so a reader of `.git/info/exclude` inside knows. */
const HEADER = "# Larik sandbox: placeholders for protected paths, not files of the project";

/**
 * The folder to bind at `infoDir` instead of itself, or undefined when nothing needs hiding: no
 * file placeholder at the project root is bound, or there is no git `info` folder bound to
 * replace. The folder holds a copy of the regular files of `infoDir` (a placeholder `info` is
 * empty) with `/<name>` lines for the placeholders appended to `exclude`. Folders are named by
 * their content under `root()` and never change once made, so concurrent commands share them.
 * @param binds the protected binds of the run, `bound` the paths acquired for it
 * @param root Larik's private folder for these copies (made on demand; not bound into sandboxes)
 */
export function excludeOverlay(projectRoot: string, binds: readonly ProtectedBind[], bound: ReadonlySet<string>, infoDir: string | undefined, root: () => string): string | undefined {
  const hide = binds
    .filter((b) => b.placeholder?.kind === "file" && bound.has(b.path) && dirname(b.path) === projectRoot)
    .map((b) => `/${basename(b.path)}`);
  if (!hide.length || !infoDir || !bound.has(infoDir)) return undefined;
  const files = new Map<string, Buffer>();
  try {
    for (const name of readdirSync(infoDir)) {
      const p = join(infoDir, name);
      if (lstatSync(p).isFile()) files.set(name, readFileSync(p));
    }
  } catch {
    return undefined; // unreadable: git inside sees the real folder, as before
  }
  const exclude = files.get("exclude")?.toString("utf8") ?? "";
  const sep = exclude && !exclude.endsWith("\n") ? "\n" : "";
  files.set("exclude", Buffer.from(`${exclude}${sep}${HEADER}\n${hide.join("\n")}\n`));
  const hash = createHash("sha256");
  for (const [name, data] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) hash.update(`${name}\0${data.length}\0`).update(data);
  const dir = join(root(), `git-info-${hash.digest("hex").slice(0, 16)}`);
  if (existsSync(dir)) return dir;
  // made beside, then renamed in: a concurrent command never binds a half-written copy
  const part = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  mkdirSync(part, { mode: 0o700 });
  for (const [name, data] of files) writeFileSync(join(part, name), data, { mode: 0o600 });
  try {
    renameSync(part, dir);
  } catch {
    // another command made it first: same content
  }
  return existsSync(dir) ? dir : part;
}
