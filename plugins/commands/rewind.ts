/**
 * `/rewind [n] [files|keep]` and `/prompt [n] [copy|fork]` (LARIK-REFERENCE §7, §29). Both
 * branch only at turn boundaries (before a prompt, or the end; invariant 6): the store writes a
 * new session file holding the messages before that point and never touches the original.
 */
import { changedFiles, ConfigError, replay, type Command, type CommandContext } from "../../kernel/index.js";
import { COMMAND_META } from "./meta.js";
import { listPrompts, oneLine, pickPrompt, requireStore, shownPrompt, switchTo, words, type PromptRef } from "./format.js";
import { openBranch } from "./sessions.js";

/**
 * Branches the current session keeping its first `keep` messages, and switches to the branch
 * when the front end can. Returns the branch id and whether the front end switched.
 */
async function branchAt(ctx: CommandContext, keep: number, command: string, reason: string): Promise<{ id: string; switched: boolean }> {
  const store = requireStore(ctx, command);
  const branch = await store.fork(ctx.host.cwd, ctx.agent.session.id, keep);
  if (!ctx.ui?.switchAgent) {
    await branch.close();
    return { id: branch.id, switched: false };
  }
  const next = await openBranch(ctx, branch);
  await switchTo(ctx, next, reason);
  return { id: branch.id, switched: true };
}

/** The checkpoint unit recorded on the message entry at display index `index`, if any. */
function checkpointTurnOf(ctx: CommandContext, index: number): number | undefined {
  let i = 0;
  for (const e of ctx.agent.session.entries()) {
    if (e.type !== "message" || !e.message) continue;
    if (i++ === index) return typeof e.data?.checkpoint_turn === "number" ? e.data.checkpoint_turn : undefined;
  }
  return undefined;
}

function printPromptList(ctx: CommandContext, prompts: PromptRef[]): void {
  if (!prompts.length) {
    ctx.print("this session has no prompts yet");
    return;
  }
  ctx.print("prompts of this session (/rewind <n> branches before one; /prompt <n> shows it):");
  const width = String(prompts.length).length;
  for (const p of prompts) ctx.print(`  ${String(p.n).padStart(width)}  ${oneLine(shownPrompt(p), 76)}`);
}

export const rewindCommand: Command = {
  ...COMMAND_META.rewind,
  async run(ctx) {
    const [n, how, extra] = words(ctx.args);
    // a prompt a command made is listed, and given back, as the command line typed
    const { all: history, typed } = replay(ctx.agent.session.entries());
    const prompts = listPrompts(history, typed);
    if (!n) {
      printPromptList(ctx, prompts);
      return;
    }
    if (extra !== undefined || (how !== undefined && how !== "files" && how !== "keep")) {
      throw new ConfigError(`/rewind ${ctx.args.trim()}: usage /rewind [n] [files|keep]`);
    }
    const p = pickPrompt(prompts, n, "/rewind");
    const changed = changedFiles(history.slice(p.index));
    let restored: string[] | undefined;
    if (how === "files") {
      // restore before branching: the snapshots belong to this session's checkpoint store
      const turn = checkpointTurnOf(ctx, p.index);
      if (turn === undefined || !ctx.agent.checkpoints.undoSince) {
        throw new Error(`/rewind ${p.n} files: no checkpoints were recorded for prompt ${p.n}; /rewind ${p.n} keep branches and leaves files as they are`);
      }
      restored = await ctx.agent.checkpoints.undoSince(turn);
    }
    const { id, switched } = await branchAt(ctx, p.index, "/rewind", "rewind");
    // the command line, not its expansion: sent again, `/review main..HEAD` collects the diff
    // as it is now and the model gets the prompt that makes, as the first time
    const again = shownPrompt(p);
    if (!switched) {
      ctx.print(`branched before prompt ${p.n} into ${id}: continue it with larik --resume ${id}`);
      ctx.print(`prompt ${p.n} was: ${again}`);
    } else {
      ctx.print(`rewound to before prompt ${p.n}: now in branch ${id} (the original session is unchanged)`);
      if (ctx.ui?.setInput) ctx.ui.setInput(again);
      else ctx.print(`prompt ${p.n} was: ${again}`);
    }
    if (restored) ctx.print(restored.length ? `restored files changed since prompt ${p.n}: ${restored.join(", ")}` : `no files changed since prompt ${p.n}`);
    else if (changed.length && how !== "keep") ctx.print(`files changed since prompt ${p.n} are left as they are (/rewind ${p.n} files restores them): ${changed.join(", ")}`);
  },
};

export const promptCommand: Command = {
  ...COMMAND_META.prompt,
  async run(ctx) {
    let [n, action, extra] = words(ctx.args);
    if (n === "copy" || n === "fork") [n, action, extra] = [undefined, n, action];
    if (extra !== undefined || (action !== undefined && action !== "copy" && action !== "fork")) {
      throw new ConfigError(`/prompt ${ctx.args.trim()}: usage /prompt [n] [copy|fork]`);
    }
    const { all: history, typed } = replay(ctx.agent.session.entries());
    const prompts = listPrompts(history, typed);
    const p = pickPrompt(prompts, n, "/prompt");
    // what the user typed: a command's expansion (a review's whole diff) is /export's to show
    const shown = shownPrompt(p);
    if (action === "copy") {
      if (!ctx.ui?.copy) {
        ctx.print(shown);
        ctx.print("(no clipboard in this front end: the prompt is printed above)");
        return;
      }
      await ctx.ui.copy(shown);
      ctx.print(`copied prompt ${p.n} (${[...shown].length} characters)`);
      return;
    }
    if (action === "fork") {
      if (ctx.agent.running) throw new Error("/prompt fork cannot run while a turn is running: wait for it or press esc");
      // Keep that turn and its reply: the branch ends where the next prompt starts.
      const next = prompts[p.n]?.index ?? history.length;
      const { id, switched } = await branchAt(ctx, next, "/prompt fork", "fork");
      ctx.print(
        switched
          ? `forked after prompt ${p.n} and its reply: now in branch ${id} (the original session is unchanged)`
          : `forked after prompt ${p.n} and its reply into ${id}: continue it with larik --resume ${id}`,
      );
      return;
    }
    ctx.print(`prompt ${p.n} of ${prompts.length}:`);
    for (const line of shown.split("\n")) ctx.print(`  ${line}`);
    if (p.typed !== undefined) {
      ctx.print(`  (the command sent the model a prompt of ${[...p.text].length.toLocaleString("en-US")} characters in its place; /export writes it out)`);
    }
    ctx.print(`Copy: /prompt ${p.n} copy · Fork: /prompt ${p.n} fork (keeps this turn and its reply) · Rewind: /rewind ${p.n} (branch before it, text back in the composer)`);
  },
};
