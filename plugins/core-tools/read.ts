/**
 * `read` (LARIK-REFERENCE §3): line-numbered text, images as images, binaries and directories
 * refused. What it does is in read-core.ts, loaded at the first call (see index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import { pathSubject } from "./paths.js";

/** Lines returned when `limit` is absent (§3). */
export const DEFAULT_READ_LIMIT = 2000;

const input = lazySchema(() =>
  z.object({
    path: z.string().check(z.describe("File to read, relative to the working directory or absolute")),
    offset: z.optional(z.int().check(z.gte(1)).check(z.lte(100_000_000))).check(z.describe("First line to return, 1-based")),
    limit: z.optional(z.int().check(z.gte(1)).check(z.lte(100_000_000))).check(z.describe(`Maximum number of lines (default ${DEFAULT_READ_LIMIT})`)),
  }),
);

/** `read`'s arguments, validated. */
export type ReadInput = z.output<typeof input>;

/** The `read` tool. */
export const readTool = defineTool({
  name: "read",
  description:
    "Read a text file with line numbers (number, tab, text). Use offset and limit for large files. Images (png, jpg, gif, webp) are returned as images.",
  input,
  inputJsonSchema: INPUT_SCHEMAS.read,
  kind: "read",
  subject: (i) => pathSubject(i.path),
  run: async (i, ctx) => (await import("./read-core.js")).runRead(i, ctx),
});
