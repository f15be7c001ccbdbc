/**
 * Finds skills and custom commands (LARIK-REFERENCE §13).
 *
 * Skills are folders holding `SKILL.md`, searched low → high: `~/.agents/skills`,
 * `~/.claude/skills`, `~/.config/larik/skills`, then `.agents/skills`, `.claude/skills`,
 * `.larik/skills` in each directory from the git root down to cwd. Custom commands are
 * `commands/**\/<name>.md` under `~/.claude/commands`, `~/.config/larik/commands`, then
 * `.claude/commands` and `.larik/commands` from the root down to cwd. A later (higher) entry of
 * the same name wins; the losers are kept as `shadowed` for `/skills`. Symlinked folders are
 * followed.
 */
import { statSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join, relative } from "node:path";
import { canonicalDir, configDir, dirsFromRoot, tildePath } from "../../kernel/index.js";
import { parseFrontmatter } from "./frontmatter.js";

/** Where discovery looks: the user's home, config root and working directory. */
export interface DiscoveryEnv {
  cwd: string;
  /** Environment giving HOME and XDG_CONFIG_HOME. */
  env: NodeJS.ProcessEnv;
}

/** A discovered skill or custom command. */
export interface Entry {
  kind: "skill" | "command";
  name: string;
  description: string;
  /** True when the description came from frontmatter (commands: only those enter the model index). */
  described: boolean;
  /** The `SKILL.md` or command file (absolute). */
  file: string;
  /** The skill folder, or the folder holding the command file (absolute). */
  dir: string;
  /** Where it was found, for `/skills` (`~/.claude/skills`, `.larik/commands`, ...). */
  origin: string;
  userInvocable: boolean;
  modelInvocable: boolean;
  /** `argument-hint` exactly as written. */
  argumentHint?: string;
  /**
   * The body of a command file built into Larik (`/review`, embedded.ts); `file` is then only a
   * label. Such a command gathers its own data when it runs.
   */
  embedded?: string;
}

export interface Discovered {
  /** The entries in force, one per name, in discovery order. */
  entries: Entry[];
  /** Lower entries hidden by a higher one of the same name. */
  shadowed: { entry: Entry; by: Entry }[];
  /** One line per unreadable or invalid file. */
  problems: string[];
}

/** Names a slash command can carry: letters, digits, `-`, `_`, `.`, `:`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME || homedir();
}

/**
 * The search roots that exist, low → high, each with a label; duplicates (cwd = home) kept once.
 * Most candidates do not exist, so each is checked first with one stat, and only the ones found
 * are canonicalized and labelled: every start looks for about a dozen.
 */
function roots(d: DiscoveryEnv, personal: string[], cfgSub: string, project: string[]): { dir: string; origin: string }[] {
  const h = home(d.env);
  const candidates: { dir: string; origin: () => string }[] = personal.map((p) => ({ dir: join(h, p), origin: () => `~/${p}` }));
  const cfg = join(configDir(d.env), cfgSub);
  candidates.push({ dir: cfg, origin: () => tildePath(cfg, d.env) });
  const dirs = dirsFromRoot(d.cwd);
  const root = dirs[0] ?? d.cwd;
  for (const dir of dirs) {
    for (const p of project) {
      const at = join(dir, p);
      candidates.push({ dir: at, origin: () => relative(root, at) || p });
    }
  }
  const seen = new Set<string>();
  const found: { dir: string; origin: string }[] = [];
  for (const c of candidates) {
    if (!dirExists(c.dir)) continue;
    const canon = canonicalDir(c.dir);
    if (seen.has(canon)) continue;
    seen.add(canon);
    found.push({ dir: c.dir, origin: c.origin() });
  }
  return found;
}

/**
 * Sync on purpose: most roots do not exist, and a sync stat answers a miss in one syscall where
 * an fs/promises call waits a thread-pool round trip; every start checks about ten roots.
 */
function dirExists(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

function firstLine(body: string): string {
  for (const l of body.split("\n")) {
    const t = l.replace(/^#+\s*/, "").trim();
    if (t) return t;
  }
  return "";
}

const bool = (v: unknown, dflt: boolean) => (typeof v === "boolean" ? v : dflt);

function settle(found: Entry[]): Pick<Discovered, "entries" | "shadowed"> {
  const winners = new Map<string, Entry>();
  const shadowed: { entry: Entry; by: Entry }[] = [];
  for (const e of found) {
    const prev = winners.get(e.name);
    if (prev) shadowed.push({ entry: prev, by: e });
    winners.set(e.name, e);
  }
  // A shadowed entry records the final winner, not an intermediate one.
  for (const s of shadowed) s.by = winners.get(s.entry.name)!;
  return { entries: [...winners.values()], shadowed };
}

/** Finds every skill (§13 order). Never throws; bad files become `problems`. */
export async function discoverSkills(d: DiscoveryEnv): Promise<Discovered> {
  const found: Entry[] = [];
  const problems: string[] = [];
  for (const r of roots(d, [".agents/skills", ".claude/skills"], "skills", [".agents/skills", ".claude/skills", ".larik/skills"])) {
    let names: string[];
    try {
      names = (await readdir(r.dir)).sort();
    } catch {
      continue;
    }
    for (const folder of names) {
      const dir = join(r.dir, folder);
      const file = join(dir, "SKILL.md");
      if (!(await isDirectory(dir))) continue;
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch {
        continue;
      }
      const fm = parseFrontmatter(text);
      const name = typeof fm.data.name === "string" && fm.data.name.trim() ? fm.data.name.trim() : folder;
      if (!NAME.test(name)) {
        problems.push(`skill ${tildePath(file, d.env)} skipped: name "${name}" may only use letters, digits, "-", "_", "." and ":"`);
        continue;
      }
      const desc = typeof fm.data.description === "string" ? fm.data.description.trim() : "";
      found.push({
        kind: "skill",
        name,
        description: desc || firstLine(fm.body),
        described: desc !== "",
        file,
        dir,
        origin: r.origin,
        userInvocable: bool(fm.data["user-invocable"], true),
        modelInvocable: !bool(fm.data["disable-model-invocation"], false),
        argumentHint: fm.raw["argument-hint"] || undefined,
      });
    }
  }
  return { ...settle(found), problems };
}

async function markdownFiles(dir: string, depth = 0): Promise<string[]> {
  if (depth > 8 || !dirExists(dir)) return [];
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const p = join(dir, n);
    if (n.endsWith(".md")) {
      try {
        if ((await stat(p)).isFile()) out.push(p);
      } catch {
        // dangling link
      }
    } else if (!n.startsWith(".") && (await isDirectory(p))) out.push(...(await markdownFiles(p, depth + 1)));
  }
  return out;
}

/**
 * Finds every custom command (§13 order); subfolder files keep their base name. `builtIn` entries
 * come first, below every folder, so a file of the same name replaces them.
 */
export async function discoverCommands(d: DiscoveryEnv, builtIn: Entry[] = []): Promise<Discovered> {
  const found: Entry[] = [...builtIn];
  const problems: string[] = [];
  for (const r of roots(d, [".claude/commands"], "commands", [".claude/commands", ".larik/commands"])) {
    for (const file of await markdownFiles(r.dir)) {
      const name = basename(file, ".md");
      if (!NAME.test(name)) {
        problems.push(`command ${tildePath(file, d.env)} skipped: a command name may only use letters, digits, "-", "_", "." and ":"`);
        continue;
      }
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (err) {
        problems.push(`command ${tildePath(file, d.env)} skipped: ${(err as Error).message}`);
        continue;
      }
      const fm = parseFrontmatter(text);
      const desc = typeof fm.data.description === "string" ? fm.data.description.trim() : "";
      found.push({
        kind: "command",
        name,
        description: desc || firstLine(fm.body),
        described: desc !== "",
        file,
        dir: join(file, ".."),
        origin: r.origin,
        userInvocable: true,
        modelInvocable: desc !== "" && !bool(fm.data["disable-model-invocation"], false),
        argumentHint: fm.raw["argument-hint"] || undefined,
      });
    }
  }
  return { ...settle(found), problems };
}

/** The body of a skill or command file, frontmatter removed (read fresh each time). */
export async function readBody(file: string): Promise<string> {
  return parseFrontmatter(await readFile(file, "utf8")).body;
}
