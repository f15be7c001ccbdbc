/**
 * `/clear`, `/compact` and `/undo` (LARIK-REFERENCE §8, §9, §24): context and file resets.
 * Each writes only new entries or notes; the transcript is never rewritten (invariant 4).
 */
import { noCheckpoints, undoNote, type Command, type CompactResult } from "../../kernel/index.js";
import { COMMAND_META } from "./meta.js";
import { kTokens } from "./format.js";

/** `26k prompt → ~10k summary · ~16k saved` (§9); figures in tokens. */
export function compactLine(r: Pick<CompactResult, "before_tokens" | "after_tokens" | "saved_tokens">): string {
  return `${kTokens(r.before_tokens)} prompt → ~${kTokens(r.after_tokens)} summary · ~${kTokens(r.saved_tokens)} saved`;
}

export const clearCommand: Command = {
  ...COMMAND_META.clear,
  async run(ctx) {
    ctx.agent.clear();
    ctx.print("fresh context: the model starts over; the transcript stays in this session");
  },
};

export const compactCommand: Command = {
  ...COMMAND_META.compact,
  async run(ctx) {
    // an empty context is a state, as "nothing to undo" is, not a failure (`larik -c -p /compact`
    // in a script after /clear exits 0)
    if (!ctx.agent.messages.length && !ctx.agent.running) {
      ctx.print("nothing to compact: the context is empty (send a prompt first)");
      return;
    }
    // Agent.compact holds the turn slot, so esc (agent.cancel) stops it and no prompt races it.
    const r = await ctx.agent.compact("manual");
    ctx.print(`compacted: ${compactLine(r)}`);
  },
};


export const undoCommand: Command = {
  ...COMMAND_META.undo,
  async run(ctx) {
    const { agent } = ctx;
    const files = await agent.checkpoints.undo();
    if (!files.length) {
      ctx.print(
        agent.checkpoints === noCheckpoints
          ? "nothing to undo: checkpoints are off for this session (no checkpoint store is loaded)"
          : "nothing to undo: no turn of this session changed files",
      );
      return;
    }
    agent.addNote(undoNote(files));
    ctx.print(`reverted ${files.length} file${files.length === 1 ? "" : "s"}:`);
    for (const f of files) ctx.print(`  ${f}`);
  },
};
