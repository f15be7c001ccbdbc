/**
 * The `core-tools` plugin: the built-in file, search and shell tools of LARIK-REFERENCE §3 —
 * read, write, edit, multi_edit, write_files, glob, grep, bash (+ bash_output, kill_bash),
 * todo_write and raw_output. Registering is cheap: heavy modules (diff, ignore, picomatch,
 * ripgrep) load on first use.
 */
import { definePlugin, type AnyTool } from "../../kernel/index.js";
import { BackgroundShells, bashOutputTool, killBashTool } from "./background.js";
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
export function coreTools(shells: BackgroundShells, opts: { ripgrep?: string | false } = {}): AnyTool[] {
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

export { BackgroundShells };

export default definePlugin({
  name: "core-tools",
  description: "Built-in tools: read, write, edit, multi_edit, write_files, glob, grep, bash, bash_output, kill_bash, todo_write, raw_output",
  setup(ctx) {
    const shells = new BackgroundShells();
    for (const tool of coreTools(shells)) ctx.tools.register(tool);
    ctx.onDispose(() => shells.killAll());
  },
});
