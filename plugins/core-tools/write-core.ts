/**
 * What `write` and `write_files` do (the tools are write.ts and write_files.ts; this module loads
 * at the first call): an existing file must have been read and be unchanged since
 * (LARIK-REFERENCE §5); the checkpoint comes first (§8).
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { expandHome, type ToolCheckContext, type ToolContext, type ToolResult } from "../../kernel/index.js";
import type { WriteInput } from "./write.js";
import type { WriteFilesInput } from "./write_files.js";
import { miniDiff } from "./diff.js";
import { commitWrite, countLines, prepareWrite, type WriteTarget } from "./fileio.js";
import { errorResult } from "./paths.js";


/**
 * Writes one prepared target and describes it. Shared by both tools.
 * @throws ToolInputError when the checkpoint or the write fails.
 */
export async function writeOne(ctx: ToolContext, target: WriteTarget, content: string): Promise<{ summary: string; display: unknown }> {
  const before = target.exists ? await readFile(target.abs, "utf8").catch(() => undefined) : undefined;
  await commitWrite(ctx, target, content);
  const lines = countLines(content);
  const bytes = Buffer.byteLength(content);
  const size = `${lines} ${lines === 1 ? "line" : "lines"}, ${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
  const summary = target.exists ? `Overwrote ${target.rel} (${size})` : `Created ${target.rel} (${size})`;
  const display = {
    type: "diff",
    path: target.rel,
    created: !target.exists,
    ...(await miniDiff(target.rel, before ?? "", content)),
  };
  return { summary, display };
}

/** Runs `write` (see write.ts). */
export async function runWrite(args: WriteInput, ctx: ToolContext): Promise<ToolResult> {
  try {
    const target = await prepareWrite(ctx, args.path);
    const { summary, display } = await writeOne(ctx, target, args.content);
    return { content: summary, display };
  } catch (err) {
    return errorResult(err);
  }
}

/** `write`'s check before the user is asked: the text of the error the write would end in, if any. */
export async function writeProblem(args: WriteInput, ctx: ToolCheckContext): Promise<string | undefined> {
  try {
    await prepareWrite(ctx, args.path);
    return undefined;
  } catch (err) {
    return errorResult(err).content;
  }
}

/** Runs `write_files` (see write_files.ts): every path is checked before anything is written. */
export async function runWriteFiles(args: WriteFilesInput, ctx: ToolContext): Promise<ToolResult> {
  const seen = new Map<string, string>();
  for (const f of args.files) {
    const abs = resolve(ctx.cwd, expandHome(f.path));
    const prev = seen.get(abs);
    if (prev !== undefined) {
      return { content: `duplicate path: ${f.path} and ${prev} are the same file; give each file once. Nothing was written.`, is_error: true };
    }
    seen.set(abs, f.path);
  }
  const targets: WriteTarget[] = [];
  for (const f of args.files) {
    try {
      targets.push(await prepareWrite(ctx, f.path));
    } catch (err) {
      return { content: `${(err as Error).message}. Nothing was written.`, is_error: true };
    }
  }
  const written: string[] = [];
  const displays: unknown[] = [];
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i]!;
    try {
      const { summary, display } = await writeOne(ctx, t, args.files[i]!.content);
      written.push(summary);
      displays.push(display);
    } catch (err) {
      const rest = targets.slice(i + 1).map((x) => x.rel);
      const lines = [
        `Stopped at ${t.rel}: ${(err as Error).message}`,
        written.length ? `Already written:\n${written.map((w) => `- ${w}`).join("\n")}` : "Nothing was written.",
      ];
      if (rest.length) lines.push(`Not written: ${rest.join(", ")}`);
      return { content: lines.join("\n"), is_error: true, display: { type: "diffs", files: displays } };
    }
  }
  return { content: written.join("\n"), display: { type: "diffs", files: displays } };
}
