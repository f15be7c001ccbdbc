/**
 * `@` mentions in the composer (LARIK-REFERENCE §24): the gitignore-aware file picker. Their
 * expansion into attachments is the kernel's (`kernel/kit/mentions.ts`), shared with `larik -p` and
 * the server; it is re-exported here for the TUI's callers.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
export { expandMentions, type ExpandedPrompt } from "../../kernel/index.js";

/** Files listed at most for the picker. */
const MAX_FILES = 50_000;

/**
 * Project files relative to `root`, `/`-separated, honouring `.gitignore` (also outside git,
 * via ripgrep's `--no-require-git`, STACK.md gotcha 11) and skipping `.git`. Falls back to a
 * plain walk that skips `.git` and `node_modules` when ripgrep is unavailable.
 */
export async function listProjectFiles(root: string): Promise<string[]> {
  let rg: string | undefined;
  try {
    const m = await import("@vscode/ripgrep");
    if (existsSync(m.rgPath)) rg = m.rgPath;
  } catch {
    rg = undefined;
  }
  if (rg) {
    const out = await new Promise<string | undefined>((res) => {
      execFile(
        rg,
        ["--files", "--hidden", "--no-require-git", "--no-messages", "--glob", "!.git", "--max-filesize", "50M"],
        { cwd: root, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout) => res(err && !stdout ? undefined : stdout),
      );
    });
    if (out !== undefined) return out.split("\n").filter(Boolean).slice(0, MAX_FILES).sort();
  }
  const { glob } = await import("tinyglobby");
  const files = await glob(["**/*"], { cwd: root, dot: true, ignore: ["**/.git/**", "**/node_modules/**"] });
  return files.slice(0, MAX_FILES).sort();
}

/** One picker row: a file, or a folder (`dir`, path ending in `/`). */
export interface PickerEntry {
  path: string;
  dir: boolean;
}

/**
 * Picker rows for `query` over `files`: with a `/` in the query, the children of that folder
 * whose names contain the rest (prefix matches first); without one, top-level children with
 * that prefix, then any file or folder whose name contains the query. At most `limit` rows.
 */
export function pickerEntries(files: readonly string[], query: string, limit = 8): PickerEntry[] {
  const slash = query.lastIndexOf("/");
  const dir = slash >= 0 ? query.slice(0, slash + 1) : "";
  const rest = (slash >= 0 ? query.slice(slash + 1) : query).toLowerCase();
  const children = new Map<string, boolean>();
  for (const f of files) {
    if (!f.startsWith(dir)) continue;
    const tail = f.slice(dir.length);
    const cut = tail.indexOf("/");
    const name = cut === -1 ? tail : tail.slice(0, cut);
    if (name.toLowerCase().includes(rest)) children.set(dir + name + (cut === -1 ? "" : "/"), cut !== -1);
  }
  const score = (p: string) => {
    const name = p.replace(/\/$/, "").slice(dir.length).toLowerCase();
    return (name.startsWith(rest) ? 0 : 1) * 10_000 + name.length;
  };
  const out: PickerEntry[] = [...children].map(([path, d]) => ({ path, dir: d })).sort((a, b) => score(a.path) - score(b.path) || a.path.localeCompare(b.path));
  if (!dir && rest && out.length < limit) {
    const seen = new Set(out.map((e) => e.path));
    const deep: PickerEntry[] = [];
    for (const f of files) {
      const base = f.slice(f.lastIndexOf("/") + 1).toLowerCase();
      if (!seen.has(f) && base.includes(rest)) deep.push({ path: f, dir: false });
      if (deep.length > limit * 20) break;
    }
    deep.sort((a, b) => {
      const ba = a.path.slice(a.path.lastIndexOf("/") + 1).toLowerCase();
      const bb = b.path.slice(b.path.lastIndexOf("/") + 1).toLowerCase();
      return (ba.startsWith(rest) ? 0 : 1) - (bb.startsWith(rest) ? 0 : 1) || a.path.length - b.path.length;
    });
    out.push(...deep);
  }
  return out.slice(0, limit);
}
