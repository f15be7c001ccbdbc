/**
 * `bash` (LARIK-REFERENCE §3): runs `bash -c` in the working directory, in its own process
 * group, with a timeout; output capped head and tail, the exact output kept for `raw_output`.
 * What it does is in bash-core.ts, loaded at the first call (see index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import type { ShellsSource } from "./background.js";

/** Default and largest timeout, in seconds (§3). */
export const DEFAULT_TIMEOUT_S = 120;
const MAX_TIMEOUT_S = 600;

const TIMEOUT_UNIT = `must be in seconds, more than 0 and at most ${MAX_TIMEOUT_S} (default ${DEFAULT_TIMEOUT_S})`;

const input = lazySchema(() =>
  z.object({
    command: z.string().check(z.describe("The command to run with bash -c")),
    // Models used to millisecond timeouts send 120000: the message names the unit.
    timeout: z.optional(z.number().check(z.positive({ error: TIMEOUT_UNIT })).check(z.lte(MAX_TIMEOUT_S, { error: TIMEOUT_UNIT }))).check(z.describe(`Timeout in seconds (default ${DEFAULT_TIMEOUT_S}, max ${MAX_TIMEOUT_S})`)),
    run_in_background: z.optional(z.boolean()).check(z.describe("Start the command in the background and return an id at once; read it with bash_output, stop it with kill_bash")),
    sandbox: z.optional(z.boolean()).check(z.describe("Set false to run outside the OS sandbox (asks for approval)")),
    checkpoint_paths: z.optional(z.array(z.string()).check(z.maxLength(64))).check(z.describe("Files the command will change that git does not track (ignored or outside a repo), saved first for /undo")),
  }),
);

/** `bash`'s arguments, validated. */
export type BashInput = z.output<typeof input>;

/** Builds the `bash` tool; background runs are kept in `shells`. */
export function bashTool(shells: ShellsSource) {
  return defineTool({
    name: "bash",
    description:
      "Run a shell command with bash -c in the working directory. stdin is closed; output (stdout and stderr together) is capped, keeping head and tail. Use run_in_background for servers and watchers.",
    input,
    inputJsonSchema: INPUT_SCHEMAS.bash,
    kind: "bash",
    subject: (i) => i.command,
    run: async (i, ctx) => (await import("./bash-core.js")).runBash(i, ctx, await shells()),
  });
}
