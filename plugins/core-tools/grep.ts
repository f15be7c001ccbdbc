/**
 * `grep` (LARIK-REFERENCE §3): regex search over files as `path:line:text`, paths relative to
 * cwd, honouring `.gitignore`. What it does is in grep-core.ts, loaded at the first call (see
 * index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import type { SearchToolOptions } from "./glob.js";
import { pathSubject, searchSummary } from "./paths.js";

const input = lazySchema(() =>
  z.object({
    pattern: z.string().check(z.describe("Regular expression to search for")),
    path: z.optional(z.string()).check(z.describe("File or directory to search (default: the working directory)")),
    glob: z.optional(z.string()).check(z.describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.go"')),
    ignore_case: z.optional(z.boolean()).check(z.describe("Case-insensitive search (default false)")),
  }),
);

/** `grep`'s arguments, validated. */
export type GrepInput = z.output<typeof input>;

/** Builds the `grep` tool; `ripgrep: false` forces the JavaScript search. */
export function grepTool(opts: SearchToolOptions = {}) {
  return defineTool({
    name: "grep",
    description:
      "Search file contents with a regular expression. Returns path:line:text, at most 50 matches per file and 500 lines. Honours .gitignore.",
    input,
    inputJsonSchema: INPUT_SCHEMAS.grep,
    kind: "read",
    subject: (i) => (i.path ? pathSubject(i.path) : undefined),
    // the pattern is what was looked for; the path (default: the working directory) comes after
    summary: (i) => searchSummary(i, ["glob"]),
    run: async (i, ctx) => (await import("./grep-core.js")).runGrep(i, ctx, opts),
  });
}
