/**
 * `commands`: the built-in slash commands (LARIK-REFERENCE §29) — model and mode switches,
 * context resets, undo, cost, sessions and branches, export, clipboard, help and quit. Front ends
 * only render and dispatch them through the host's `commands` registry. See docs/commands.md.
 */
import { definePlugin, type Command } from "../../kernel/index.js";
import { clearCommand, compactCommand, undoCommand } from "./context.js";
import { costCommand } from "./cost.js";
import { exportCommand } from "./export.js";
import { copyCommand, helpCommand, quitCommand } from "./misc.js";
import { effortCommand, modeCommand, modelCommand } from "./model.js";
import { promptCommand, rewindCommand } from "./rewind.js";
import { forkCommand, newCommand, resumeCommand, sessionsCommand } from "./sessions.js";

export { costReport, costLines, type CostReport, type CostRow } from "./cost.js";
export { sessionMarkdown } from "./export.js";
export { compactLine } from "./context.js";

/** Every built-in command, in `/help` order. */
export const BUILTIN_COMMANDS: readonly Command[] = [
  modelCommand,
  modeCommand,
  effortCommand,
  clearCommand,
  compactCommand,
  undoCommand,
  costCommand,
  sessionsCommand,
  resumeCommand,
  newCommand,
  forkCommand,
  rewindCommand,
  promptCommand,
  exportCommand,
  copyCommand,
  helpCommand,
  quitCommand,
];

/**
 * `c` refusing to run while a turn runs when it is `idleOnly` (§24: commands that would race a
 * running turn are refused). Front ends check `idleOnly` too; this keeps headless and embedders
 * safe when they do not.
 */
export function idleGuarded(c: Command): Command {
  if (!c.idleOnly) return c;
  return {
    ...c,
    async run(ctx) {
      if (ctx.agent.running) throw new Error(`/${c.name} cannot run while a turn is running: wait for it to finish or press esc`);
      return c.run(ctx);
    },
  };
}

export default definePlugin({
  name: "commands",
  description: "Built-in slash commands: /model, /mode, /undo, /cost, /fork, /rewind, /export, …",
  setup(ctx) {
    for (const c of BUILTIN_COMMANDS) ctx.commands.register(idleGuarded({ section: "commands", ...c }));
  },
});
