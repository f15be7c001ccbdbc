/**
 * `@` mentions (LARIK-REFERENCE §24 composer): the gitignore-aware file picker and the
 * expansion of `@path`, `@path#L10-40`, `@folder/` and `@"with spaces"` into attachments sent
 * with the prompt. Attached files count as read (write/edit freshness, §5); read deny rules
 * apply; a token that names no file stays plain text.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { extname, relative, resolve } from "node:path";
import type { Agent, Block } from "../../kernel/index.js";

/** Files listed at most for the picker. */
const MAX_FILES = 50_000;
/** Largest text file attached whole, in bytes. */
export const MAX_ATTACH_BYTES = 256 * 1024;
/** Largest image attached, in bytes (§24: 5 MB). */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const IMAGE_TYPES: Record<string, string> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp" };

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

const MENTION = /(^|\s)@(?:"([^"\n]+)"|([^\s"]+))/g;

/** The prompt as blocks: the typed text first, then one attachment per mention that resolved. */
export interface ExpandedPrompt {
  blocks: Block[];
  /** Mentions that were refused (deny rule, too large) with why, for a notice. */
  notices: string[];
}

function numbered(lines: string[], from: number): string {
  return lines.map((l, i) => `${String(from + i).padStart(6)}\t${l}`).join("\n");
}

/**
 * Expands the `@` mentions of `text` for `agent` (paths resolve against the host's cwd).
 * @throws never: unreadable mentions stay text, refused ones are reported in `notices`.
 */
export async function expandMentions(text: string, agent: Agent): Promise<ExpandedPrompt> {
  const cwd = agent.host.cwd;
  const blocks: Block[] = [{ type: "text", text }];
  const notices: string[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(MENTION)) {
    const token = m[2] ?? m[3]!;
    const range = /^(.*)#L(\d+)(?:-(\d+))?$/.exec(token);
    const path = range ? range[1]! : token;
    if (!path || seen.has(token)) continue;
    seen.add(token);
    const abs = resolve(cwd, path);
    const st = await stat(abs).catch(() => undefined);
    if (!st) continue;
    const rel = relative(cwd, abs).split("\\").join("/") || ".";
    const decision = agent.checker.decide({ tool: "read", kind: "read", input: { path: rel }, subject: rel });
    if (decision.decision === "deny") {
      notices.push(`@${token} not attached: ${decision.reason}`);
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
        notices.push(`@${token} not attached: images are limited to 5 MB`);
        continue;
      }
      const data = (await readFile(abs)).toString("base64");
      blocks.push({ type: "image", media_type: mime, data, attachment: rel });
      continue;
    }
    if (st.size > MAX_ATTACH_BYTES && !range) {
      notices.push(`@${token} not attached: ${Math.round(st.size / 1024)} KB is over the ${MAX_ATTACH_BYTES / 1024} KB limit; mention a range such as @${path}#L1-200`);
      continue;
    }
    const buf = await readFile(abs);
    if (buf.subarray(0, 8192).includes(0)) {
      notices.push(`@${token} not attached: it is a binary file`);
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
  return { blocks, notices };
}
