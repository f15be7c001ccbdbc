/**
 * `write` (LARIK-REFERENCE §3): create or overwrite a file inside the project. An existing file
 * must have been read and be unchanged since (§5); the checkpoint comes first (§8).
 */
import { readFile } from "node:fs/promises";
import * as z from "zod/mini";
import { defineTool, type ToolContext, type ToolResult, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import { miniDiff } from "./diff.js";
import { commitWrite, countLines, prepareWrite, type WriteTarget } from "./fileio.js";
import { errorResult, pathSubject } from "./paths.js";

const input = lazySchema(() =>
  z.object({
    path: z.string().check(z.describe("File to write, relative to the working directory or absolute")),
    content: z.string().check(z.describe("The complete new content of the file")),
  }),
);

/**
 * Writes one prepared target and describes it. Shared with `write_files`.
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

async function run(args: z.output<typeof input>, ctx: ToolContext): Promise<ToolResult> {
  try {
    const target = await prepareWrite(ctx, args.path);
    const { summary, display } = await writeOne(ctx, target, args.content);
    return { content: summary, display };
  } catch (err) {
    return errorResult(err);
  }
}

/** The `write` tool. */
export const writeTool = defineTool({
  name: "write",
  description:
    "Create or overwrite a file with the given content. An existing file must be read first. Prefer edit for changes to existing files.",
  input,
  inputJsonSchema: INPUT_SCHEMAS.write,
  kind: "write",
  subject: (i) => pathSubject(i.path),
  writePaths: (i) => [i.path],
  // an overwrite of a file not read (or changed since) would be refused after the user said yes
  precheck: async (i, ctx) => {
    try {
      await prepareWrite(ctx, i.path);
      return undefined;
    } catch (err) {
      return errorResult(err).content;
    }
  },
  run,
});
