/**
 * What `glob` does (the tool itself is glob.ts; this module loads at its first call): files
 * matching a doublestar pattern, newest-modified first, relative to cwd, honouring `.gitignore`
 * (`rg --files`, else the JavaScript walker). A literal leading directory in the pattern is
 * searched even when it is normally skipped.
 */
import { stat } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import type { ToolContext, ToolResult } from "../../kernel/index.js";
import type { GlobInput, SearchToolOptions } from "./glob.js";
import { ToolInputError, displayPath, errorResult, resolvePath } from "./paths.js";
import { runRipgrep, walkFiles, withSearchEngine } from "./walk.js";

/** Paths returned at most. */
const MAX_GLOB_RESULTS = 200;
/** Matches whose mtime is looked up for sorting at most. */
const MAX_SORTED = 20_000;


const GLOB_CHARS = /[*?[\]{}()!+@]/;

/**
 * Splits a pattern into its literal leading directory and the glob part matched below it:
 * `.github/workflows/*.yml` → [".github/workflows", "*.yml"]; `**\/*.ts` → ["", "**\/*.ts"].
 */
export function splitPattern(pattern: string): { base: string; rest: string } {
  const segs = pattern.replace(/\\/g, "/").split("/");
  let i = 0;
  while (i < segs.length - 1 && !GLOB_CHARS.test(segs[i]!)) i++;
  const base = segs.slice(0, i).join("/") || (pattern.startsWith("/") ? "/" : "");
  return { base, rest: segs.slice(i).join("/") };
}

/** Runs `glob` (see glob.ts); `opts.ripgrep: false` forces the JavaScript walker. */
export async function runGlob(args: GlobInput, ctx: ToolContext, opts: SearchToolOptions): Promise<ToolResult> {
  try {
    if (!args.pattern.trim()) throw new ToolInputError('pattern is empty: give a glob such as "**/*.ts"');
    const searchDir = args.path ? resolvePath(ctx, args.path).abs : ctx.cwd;
    let { base, rest } = splitPattern(args.pattern);
    let root = base ? (isAbsolute(base) ? resolve(base) : resolve(searchDir, base)) : searchDir;
    // A pattern naming a folder ("src/", or "src" when it is one) lists the files below it.
    if (rest === "") rest = "**";
    else if (!GLOB_CHARS.test(rest) && (await stat(resolve(root, rest)).catch(() => undefined))?.isDirectory()) {
      root = resolve(root, rest);
      rest = "**";
    }
    const st = await stat(root).catch(() => undefined);
    if (!st) {
      if (args.path && root === searchDir) throw new ToolInputError(`directory not found: ${displayPath(ctx.cwd, root)}`);
      return { content: `No files match ${args.pattern}` };
    }
    if (!st.isDirectory()) throw new ToolInputError(`${displayPath(ctx.cwd, root)} is not a directory`);
    // Dot-files are listed only when the pattern names one (as shells and rg do).
    const hidden = /(^|\/)\./.test(rest);
    const { default: picomatch } = await import("picomatch");
    const isMatch = picomatch(rest, { dot: hidden });
    const { matches, more } = await withSearchEngine(
      opts.ripgrep,
      ctx.notice,
      async (rg) => {
        const found: string[] = [];
        const rgArgs = ["--files", "--no-require-git", "--no-messages", "--glob", "!.git"];
        if (hidden) rgArgs.push("--hidden");
        const out = await runRipgrep(rg, rgArgs, root, ctx.signal, 1_000_000);
        for (const line of out.lines) {
          if (!line) continue;
          const rel = line.replace(/^\.\//, "");
          if (!isMatch(rel)) continue;
          if (found.length >= MAX_SORTED) return { matches: found, more: true };
          found.push(join(root, rel));
        }
        return { matches: found, more: false };
      },
      async () => {
        const found: string[] = [];
        for await (const abs of walkFiles(root, { signal: ctx.signal, hidden })) {
          if (!isMatch(relative(root, abs).split(sep).join("/"))) continue;
          if (found.length >= MAX_SORTED) return { matches: found, more: true };
          found.push(abs);
        }
        return { matches: found, more: false };
      },
    );
    if (ctx.signal.aborted) throw new ToolInputError("glob interrupted");
    if (matches.length === 0) return { content: `No files match ${args.pattern}` };
    const withTime = await Promise.all(
      matches.map(async (abs) => ({ abs, t: (await stat(abs).catch(() => undefined))?.mtimeMs ?? 0 })),
    );
    withTime.sort((a, b) => b.t - a.t || (a.abs < b.abs ? -1 : 1));
    const shown = withTime.slice(0, MAX_GLOB_RESULTS).map((m) => displayPath(ctx.cwd, m.abs));
    let text = shown.join("\n");
    const hiddenCount = withTime.length - shown.length;
    if (hiddenCount > 0 || more) {
      text += `\n\n[${more ? "more than " : ""}${withTime.length} files match; showing the ${shown.length} newest — narrow the pattern or path]`;
    }
    return { content: text };
  } catch (err) {
    return errorResult(err);
  }
}
