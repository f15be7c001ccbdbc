/**
 * `edit` (LARIK-REFERENCE §3): one exact-string replacement, unique unless `replace_all`. What it
 * does is in edit-core.ts, loaded at the first call (see index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import { pathSubject } from "./paths.js";

const input = lazySchema(() =>
  z.object({
    path: z.string().check(z.describe("File to edit, relative to the working directory or absolute")),
    old_string: z.string().check(z.describe("Exact text to replace, including whitespace; must occur once unless replace_all")),
    new_string: z.string().check(z.describe("Replacement text")),
    replace_all: z.optional(z.boolean()).check(z.describe("Replace every occurrence (default false)")),
  }),
);

/** The `edit` tool. */
export const editTool = defineTool({
  name: "edit",
  description:
    "Replace exact text in a file. Read the file first; old_string must match exactly (without line-number prefixes) and be unique unless replace_all is set.",
  input,
  inputJsonSchema: INPUT_SCHEMAS.edit,
  kind: "write",
  subject: (i) => pathSubject(i.path),
  writePaths: (i) => [i.path],
  precheck: async (i, ctx) => (await import("./edit-core.js")).editProblem(ctx, i.path, [i], false),
  run: async (i, ctx) => (await import("./edit-core.js")).editFile(ctx, i.path, [i], false),
});
