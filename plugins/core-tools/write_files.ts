/**
 * `write_files` (LARIK-REFERENCE §3): 2–16 files with the same checks as `write` each. Every path
 * is checked before anything is written; a failure while writing stops the batch and the result
 * names what was already written. Per-file permission checks come from `writePaths`.
 */
import { resolve } from "node:path";
import * as z from "zod/mini";
import { defineTool, expandHome, type ToolContext, type ToolResult, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import { prepareWrite, type WriteTarget } from "./fileio.js";
import { writeOne } from "./write.js";

const input = lazySchema(() =>
  z.object({
    files: z.array(
        z.object({
          path: z.string().check(z.describe("File to write, relative to the working directory or absolute")),
          content: z.string().check(z.describe("The complete new content of the file")),
        }),
      ).check(z.minLength(2)).check(z.maxLength(16)).check(z.describe("Files to create or overwrite (2 to 16, distinct paths)")),
  }),
);

async function run(args: z.output<typeof input>, ctx: ToolContext): Promise<ToolResult> {
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

/** The `write_files` tool. */
export const writeFilesTool = defineTool({
  name: "write_files",
  description:
    "Create or overwrite 2 to 16 files in one call, with the same rules as write. Stops at the first failure and reports what was written.",
  input,
  inputJsonSchema: INPUT_SCHEMAS.write_files,
  kind: "write",
  writePaths: (i) => i.files.map((f) => f.path),
  // the paths, not the contents: `a.ts, b.ts`
  summary: (i) => {
    const files = (i as { files?: unknown } | undefined)?.files;
    return Array.isArray(files) ? files.map((f) => (typeof f?.path === "string" ? f.path : "?")).join(", ") : undefined;
  },
  run,
});
