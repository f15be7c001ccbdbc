/**
 * `write_files` (LARIK-REFERENCE §3): 2–16 files with the same checks as `write` each. Every path
 * is checked before anything is written; a failure while writing stops the batch and the result
 * names what was already written. Per-file permission checks come from `writePaths`. What it does
 * is in write-core.ts, loaded at the first call (see index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";

const input = lazySchema(() =>
  z.object({
    files: z.array(
        z.object({
          path: z.string().check(z.describe("File to write, relative to the working directory or absolute")),
          content: z.string().check(z.describe("The complete new content of the file")),
        }),
      ).check(z.minLength(2, { error: "give 2 to 16 files; to write one file, use write" })).check(z.maxLength(16)).check(z.describe("Files to create or overwrite (2 to 16, distinct paths)")),
  }),
);

/** `write_files`'s arguments, validated. */
export type WriteFilesInput = z.output<typeof input>;

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
  run: async (i, ctx) => (await import("./write-core.js")).runWriteFiles(i, ctx),
});
