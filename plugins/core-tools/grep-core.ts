/**
 * What `grep` does (the tool itself is grep.ts; this module loads at its first call): regex
 * search over files as `path:line:text`, paths relative to cwd. ripgrep when available
 * (`--no-require-git` so `.gitignore` holds outside git too, STACK.md gotcha 11; ≤50 matches per
 * file; 300-column lines), else a JavaScript search with the same limits over the
 * gitignore-aware walker. At most 500 output lines.
 */
import { open, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { OUTPUT_CAP_BYTES, capOutput, type ToolContext, type ToolResult } from "../../kernel/index.js";
import type { SearchToolOptions } from "./glob.js";
import type { GrepInput } from "./grep.js";
import { looksBinary } from "./fileio.js";
import { ToolInputError, displayPath, errorResult, resolvePath } from "./paths.js";
import { runRipgrep, walkFiles, withSearchEngine } from "./walk.js";

/** Output lines at most (§3). */
const MAX_GREP_LINES = 500;
/** Matches per file at most (§3). */
const MAX_MATCHES_PER_FILE = 50;
/** Columns of a matching line kept (§3). */
const MAX_COLUMNS = 300;
/** Files larger than this are skipped by the JavaScript search, in bytes. */
const MAX_FALLBACK_FILE_BYTES = 16 * 1024 * 1024;


/** How a match in a binary file named by `path` is reported (rg's words, without the offset). */
const BINARY_NOTE = ": binary file matches";

function cutLine(text: string): string {
  if (text.length <= MAX_COLUMNS) return text;
  return `${text.slice(0, MAX_COLUMNS)} [... omitted end of long line]`;
}

async function withRipgrep(rg: string, args: GrepInput, ctx: ToolContext, target?: string) {
  const rgArgs = [
    "--no-require-git",
    "--line-number",
    "--no-heading",
    "--with-filename",
    // NUL after the path, so paths with colons are split correctly and can be re-based on cwd.
    "--null",
    "--color",
    "never",
    "--no-messages",
    "--max-count",
    String(MAX_MATCHES_PER_FILE),
    "--max-columns",
    String(MAX_COLUMNS),
    "--max-columns-preview",
    // Sorted output keeps results stable between identical calls.
    "--sort",
    "path",
    // "$" also matches before a CRLF line end, as in the JavaScript search, which drops the "\r".
    "--crlf",
    // Look-around and backreferences (which models write, and the JavaScript search accepts) switch
    // rg to its bundled PCRE2 instead of failing with advice to pass a flag the model cannot pass.
    "--engine",
    "auto",
  ];
  if (args.ignore_case) rgArgs.push("--ignore-case");
  if (args.glob) rgArgs.push("--glob", args.glob);
  rgArgs.push("--regexp", args.pattern);
  if (target) rgArgs.push("--", target);
  const out = await runRipgrep(rg, rgArgs, ctx.cwd, ctx.signal, MAX_GREP_LINES);
  if (out.code === 2 && out.lines.length === 0 && out.stderr.trim()) throw new ToolInputError(ripgrepErrorText(out.stderr, args.pattern));
  const lines: string[] = [];
  for (const l of out.lines) {
    const nul = l.indexOf("\0");
    if (nul === -1) {
      // A file named in `path` that is binary: rg says "<path>: binary file matches (found …)".
      const at = l.lastIndexOf(BINARY_NOTE);
      if (at > 0) lines.push(`${displayPath(ctx.cwd, resolve(ctx.cwd, l.slice(0, at)))}${BINARY_NOTE}`);
      continue;
    }
    // rg prints a CRLF line with its "\r"; a stray carriage return would garble a terminal.
    const text = l.endsWith("\r") ? l.slice(nul + 1, -1) : l.slice(nul + 1);
    lines.push(`${displayPath(ctx.cwd, resolve(ctx.cwd, l.slice(0, nul)))}:${text}`);
  }
  return { lines, truncated: out.truncated };
}

/**
 * One line for rg's error. A pattern neither engine compiles gets rg's multi-line report (the
 * pattern with a caret under the fault, rules of `~`, the reason on an `error:` line, then PCRE2's
 * reason), which cut to its first lines would lose the reason itself. PCRE2's reason is preferred
 * when both are there: with `--engine auto` the default engine's complaint may only be that it
 * lacks look-around, while PCRE2 says what is wrong with the pattern. Its offset is left out: it
 * counts in rg's wrapped `(?:pattern)`, not in the pattern the model wrote.
 */
function ripgrepErrorText(stderr: string, pattern: string): string {
  const lines = stderr.split("\n").map((l) => l.trim());
  const pcre = lines.find((l) => l.startsWith("PCRE2: "))?.replace(/^PCRE2: (error compiling pattern at offset \d+: )?/, "");
  const plain = lines.find((l) => l.startsWith("error: "))?.slice("error: ".length);
  const reason = pcre || plain;
  if (reason) return `invalid regular expression ${JSON.stringify(pattern)}: ${reason}`;
  return `grep failed: ${lines.filter((l) => l && !/^~+$/.test(l)).slice(0, 6).join(" ")}`;
}

/**
 * The path a `glob` filter is matched against, as rg matches it: relative to cwd (so with path
 * "src", "src/**\/*.ts" matches and "deep/*.ts" does not), or relative to the searched folder
 * when that lies outside cwd.
 */
function globSubject(cwd: string, root: string, abs: string): string {
  const fromCwd = relative(cwd, abs);
  const rel = fromCwd.startsWith("..") || isAbsolute(fromCwd) ? relative(root, abs) : fromCwd;
  return rel.split(sep).join("/");
}

async function withJavaScript(args: GrepInput, ctx: ToolContext, root: string, isFile: boolean) {
  let re: RegExp;
  try {
    re = new RegExp(args.pattern, args.ignore_case ? "i" : "");
  } catch (err) {
    // V8 says "Invalid regular expression: /<pattern>/<flags>: <reason>"; the reason, as rg's
    const reason = (err as Error).message.replace(/^Invalid regular expression: \/[\s\S]*\/[dgimsuvy]*: /, "");
    throw new ToolInputError(`invalid regular expression ${JSON.stringify(args.pattern)}: ${reason}`);
  }
  let globMatch: ((p: string) => boolean) | undefined;
  if (args.glob) {
    const { default: picomatch } = await import("picomatch");
    // As with rg --glob: a pattern without "/" matches the base name at any depth.
    globMatch = picomatch(args.glob, { dot: true, basename: !args.glob.includes("/") });
  }
  const lines: string[] = [];
  let truncated = false;
  const files = isFile ? [root] : walkFiles(root, { signal: ctx.signal });
  outer: for await (const abs of files) {
    if (ctx.signal.aborted) break;
    if (globMatch && !isFile && !globMatch(globSubject(ctx.cwd, root, abs))) continue;
    const st = await stat(abs).catch(() => undefined);
    if (!st || st.size > MAX_FALLBACK_FILE_BYTES) continue;
    let data: Buffer;
    try {
      const fh = await open(abs, "r");
      try {
        data = await fh.readFile();
      } finally {
        await fh.close();
      }
    } catch {
      continue;
    }
    const shown = displayPath(ctx.cwd, abs);
    if (looksBinary(data)) {
      // As rg: a binary file is skipped in a folder, and reported in one line when named itself.
      if (isFile && re.test(data.toString("latin1"))) lines.push(`${shown}${BINARY_NOTE}`);
      continue;
    }
    const text = data.toString("utf8").split("\n");
    let perFile = 0;
    for (let i = 0; i < text.length; i++) {
      let line = text[i]!;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (!re.test(line)) continue;
      if (lines.length >= MAX_GREP_LINES) {
        truncated = true;
        break outer;
      }
      lines.push(`${shown}:${i + 1}:${cutLine(line)}`);
      if (++perFile >= MAX_MATCHES_PER_FILE) break;
    }
  }
  return { lines, truncated };
}

/** Runs `grep` (see grep.ts); `opts.ripgrep: false` forces the JavaScript search. */
export async function runGrep(args: GrepInput, ctx: ToolContext, opts: SearchToolOptions): Promise<ToolResult> {
  try {
    if (args.pattern === "") throw new ToolInputError("pattern is empty: give a regular expression");
    const { abs: root, rel } = args.path ? resolvePath(ctx, args.path) : { abs: ctx.cwd, rel: "." };
    const st = await stat(root).catch(() => undefined);
    if (!st) throw new ToolInputError(`path not found: ${rel}`);
    const target = root === ctx.cwd ? undefined : rel;
    const result = await withSearchEngine(
      opts.ripgrep,
      ctx.notice,
      (rg) => withRipgrep(rg, args, ctx, target),
      () => withJavaScript(args, ctx, root, st.isFile()),
    );
    if (ctx.signal.aborted) throw new ToolInputError("grep interrupted");
    if (result.lines.length === 0) return { content: `No matches for ${args.pattern}${args.path ? ` in ${rel}` : ""}` };
    let text = result.lines.join("\n");
    if (result.truncated) text += `\n\n[stopped at ${MAX_GREP_LINES} lines; narrow the pattern, path or glob]`;
    text = capOutput(text, OUTPUT_CAP_BYTES - 500, "narrow the pattern, path or glob").text;
    return { content: text };
  } catch (err) {
    return errorResult(err);
  }
}
