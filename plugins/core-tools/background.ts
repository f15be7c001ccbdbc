/**
 * `bash_output` and `kill_bash` (LARIK-REFERENCE §3): read and stop the background shells that
 * `bash` with `run_in_background` starts. The shells and what these tools do are in shells.ts,
 * loaded at the first call that needs them (see index.ts).
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import type { BackgroundShells } from "./shells.js";

/**
 * The plugin's background shells as the tools get them: made at the first call that needs them
 * (index.ts), so that a start does not load the shell code.
 */
export type ShellsSource = () => BackgroundShells | Promise<BackgroundShells>;

const shellIdInput = lazySchema(() => z.object({ id: z.string().check(z.describe('Background shell id, e.g. "bg-1"')) }));

/** The tool line's argument: the shell's id (`→ bash_output bg-1`), not its JSON. */
function shellIdSummary(input: unknown): string | undefined {
  const id = (input as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? id : undefined;
}

/** Builds `bash_output` over `shells`. */
export function bashOutputTool(shells: ShellsSource) {
  return defineTool({
    name: "bash_output",
    description: "Get new output of a background shell started with bash run_in_background, and whether it is still running.",
    input: shellIdInput,
    inputJsonSchema: INPUT_SCHEMAS.bash_output,
    kind: "read",
    summary: shellIdSummary,
    run: async ({ id }) => (await import("./shells.js")).runBashOutput(await shells(), id),
  });
}

/** Builds `kill_bash` over `shells`. */
export function killBashTool(shells: ShellsSource) {
  return defineTool({
    name: "kill_bash",
    description: "Stop a background shell (and its child processes) started with bash run_in_background.",
    input: shellIdInput,
    inputJsonSchema: INPUT_SCHEMAS.kill_bash,
    // It only stops a process the agent itself started, but it still changes something.
    kind: "other",
    subject: ({ id }) => id,
    summary: shellIdSummary,
    run: async ({ id }) => (await import("./shells.js")).runKillBash(await shells(), id),
  });
}
