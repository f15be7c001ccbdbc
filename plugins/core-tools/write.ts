/**
 * `write` (LARIK-REFERENCE §3): create or overwrite a file inside the project. An existing file
 * must have been read and be unchanged since (§5); the checkpoint comes first (§8). What it does
 * is in write-core.ts, loaded at the first call (see index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import { pathSubject } from "./paths.js";

const input = lazySchema(() =>
  z.object({
    path: z.string().check(z.describe("File to write, relative to the working directory or absolute")),
    content: z.string().check(z.describe("The complete new content of the file")),
  }),
);

/** `write`'s arguments, validated. */
export type WriteInput = z.output<typeof input>;

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
  precheck: async (i, ctx) => (await import("./write-core.js")).writeProblem(i, ctx),
  run: async (i, ctx) => (await import("./write-core.js")).runWrite(i, ctx),
});
