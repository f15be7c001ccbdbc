/**
 * `glob` (LARIK-REFERENCE §3): files matching a doublestar pattern, newest-modified first,
 * relative to cwd, honouring `.gitignore`. What it does is in glob-core.ts, loaded at the first
 * call (see index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import { pathSubject, searchSummary } from "./paths.js";
import type { RipgrepOption } from "./walk.js";

const input = lazySchema(() =>
  z.object({
    pattern: z.string().check(z.describe('Glob pattern such as "**/*.ts" or "src/**/test_*.py"')),
    path: z.optional(z.string()).check(z.describe("Directory to search (default: the working directory)")),
  }),
);

/** `glob`'s arguments, validated. */
export type GlobInput = z.output<typeof input>;

/** Options for building the search tools (tests force the fallback with `ripgrep: false`). */
export interface SearchToolOptions {
  ripgrep?: RipgrepOption;
}

/** Builds the `glob` tool. */
export function globTool(opts: SearchToolOptions = {}) {
  return defineTool({
    name: "glob",
    description:
      'Find files by glob pattern (e.g. "**/*.ts"), newest-modified first. Honours .gitignore. Use grep to search file contents.',
    input,
    inputJsonSchema: INPUT_SCHEMAS.glob,
    kind: "read",
    subject: (i) => (i.path ? pathSubject(i.path) : undefined),
    summary: (i) => searchSummary(i),
    run: async (i, ctx) => (await import("./glob-core.js")).runGlob(i, ctx, opts),
  });
}
