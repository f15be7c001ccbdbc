/**
 * `commands`: the built-in slash commands (LARIK-REFERENCE §29) — model and mode switches,
 * context resets, undo, cost, sessions and branches, `/init`, export, clipboard, help and quit. Front ends
 * only render and dispatch them through the host's `commands` registry. See docs/commands.md.
 */
import { definePlugin, type Command } from "../../kernel/index.js";
import { COMMAND_META, type CommandMeta } from "./meta.js";

export type { CostReport, CostRow } from "./cost.js";

/**
 * `meta` with a `run` that imports the implementation on first use: `--help`, menus and `/help`
 * read the metadata, and a start-up runs no command, so none of their code loads then.
 */
function lazyCommand(meta: CommandMeta, load: () => Promise<Command>): Command {
  let impl: Promise<Command> | undefined;
  return { ...meta, run: async (ctx) => (await (impl ??= load())).run(ctx) };
}

const context = () => import("./context.js");
const model = () => import("./model.js");
const sessions = () => import("./sessions.js");
const rewind = () => import("./rewind.js");
const misc = () => import("./misc.js");

/** Every built-in command, in `/help` order. */
export const BUILTIN_COMMANDS: readonly Command[] = [
  lazyCommand(COMMAND_META.model, async () => (await model()).modelCommand),
  lazyCommand(COMMAND_META.mode, async () => (await model()).modeCommand),
  lazyCommand(COMMAND_META.effort, async () => (await model()).effortCommand),
  lazyCommand(COMMAND_META.clear, async () => (await context()).clearCommand),
  lazyCommand(COMMAND_META.compact, async () => (await context()).compactCommand),
  lazyCommand(COMMAND_META.undo, async () => (await context()).undoCommand),
  lazyCommand(COMMAND_META.cost, async () => (await import("./cost.js")).costCommand),
  lazyCommand(COMMAND_META.sessions, async () => (await sessions()).sessionsCommand),
  lazyCommand(COMMAND_META.resume, async () => (await sessions()).resumeCommand),
  lazyCommand(COMMAND_META.new, async () => (await sessions()).newCommand),
  lazyCommand(COMMAND_META.fork, async () => (await sessions()).forkCommand),
  lazyCommand(COMMAND_META.rewind, async () => (await rewind()).rewindCommand),
  lazyCommand(COMMAND_META.prompt, async () => (await rewind()).promptCommand),
  lazyCommand(COMMAND_META.init, async () => (await import("./init.js")).initCommand),
  lazyCommand(COMMAND_META.export, async () => (await import("./export.js")).exportCommand),
  lazyCommand(COMMAND_META.copy, async () => (await misc()).copyCommand),
  lazyCommand(COMMAND_META.help, async () => (await misc()).helpCommand),
  lazyCommand(COMMAND_META.quit, async () => (await misc()).quitCommand),
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
