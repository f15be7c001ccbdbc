/**
 * `multi_edit` (LARIK-REFERENCE §3): several `edit`-style replacements in one file, applied in
 * order, all or nothing, with one checkpoint and one write. What it does is in edit-core.ts,
 * loaded at the first call (see index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import { pathSubject } from "./paths.js";

const edit = lazySchema(() =>
  z.object({
    old_string: z.string().check(z.describe("Exact text to replace; must occur once unless replace_all")),
    new_string: z.string().check(z.describe("Replacement text")),
    replace_all: z.optional(z.boolean()).check(z.describe("Replace every occurrence (default false)")),
  }),
);


const input = lazySchema(() =>
  z.object({
    path: z.string().check(z.describe("File to edit, relative to the working directory or absolute")),
    edits: z.array(edit).check(z.minLength(1)).check(z.maxLength(100)).check(z.describe("Replacements applied in order, each to the result of the previous one")),
  }),
);

/** The `multi_edit` tool. */
export const multiEditTool = defineTool({
  name: "multi_edit",
  description:
    "Apply several exact-text replacements to one file in order. All succeed or none is applied. Read the file first.",
  input,
  inputJsonSchema: INPUT_SCHEMAS.multi_edit,
  kind: "write",
  subject: (i) => pathSubject(i.path),
  writePaths: (i) => [i.path],
  precheck: async (i, ctx) => (await import("./edit-core.js")).editProblem(ctx, i.path, i.edits, true),
  run: async (i, ctx) => (await import("./edit-core.js")).editFile(ctx, i.path, i.edits, true),
});
