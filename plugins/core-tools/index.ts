/**
 * The `core-tools` plugin: the built-in file, search and shell tools of LARIK-REFERENCE §3 —
 * read, write, edit, multi_edit, write_files, glob, grep, bash (+ bash_output, kill_bash),
 * todo_write and raw_output. Registering is cheap: each tool's module holds what the model sees
 * (name, description, input schema) and what permission rules match, and what the tool does is in
 * a `*-core.ts` module (or shells.ts) imported at its first call, with the packages it needs
 * (diff, ignore, picomatch, ripgrep): a `larik -p` start reads none of it before its first model
 * request (docs/architecture.md, "How `larik` starts").
 */
import { definePlugin, type AnyTool } from "../../kernel/index.js";
import type { BackgroundShells } from "./shells.js";
import { bashOutputTool, killBashTool, type ShellsSource } from "./background.js";
import { bashTool } from "./bash.js";
import { editTool } from "./edit.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import { multiEditTool } from "./multi_edit.js";
import { rawOutputTool } from "./raw_output.js";
import { readTool } from "./read.js";
import { todoWriteTool } from "./todo_write.js";
import { writeTool } from "./write.js";
import { writeFilesTool } from "./write_files.js";

/** Every core tool, with `shells` holding background runs; `ripgrep: false` forces the JS search. */
export function coreTools(shells: ShellsSource, opts: { ripgrep?: string | false } = {}): AnyTool[] {
  return [
    readTool,
    writeTool,
    editTool,
    multiEditTool,
    writeFilesTool,
    globTool(opts),
    grepTool(opts),
    bashTool(shells),
    bashOutputTool(shells),
    killBashTool(shells),
    todoWriteTool,
    rawOutputTool,
  ] as AnyTool[];
}

export type { ShellsSource };

export default definePlugin({
  name: "core-tools",
  description: "Built-in tools: read, write, edit, multi_edit, write_files, glob, grep, bash, bash_output, kill_bash, todo_write, raw_output",
  setup(ctx) {
    // made at the first bash call, with the shell code, which a start does not load
    let shells: Promise<BackgroundShells> | undefined;
    const getShells = () => (shells ??= import("./shells.js").then((m) => new m.BackgroundShells()));
    for (const tool of coreTools(getShells)) ctx.tools.register(tool);
    ctx.onDispose(() => shells?.then((s) => s.killAll(), () => {}));
  },
});
