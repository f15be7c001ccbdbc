/**
 * `/sessions`, `/resume [id]`, `/new` and `/fork` (LARIK-REFERENCE §7, §29). A switch opens a new
 * agent, hands it to the front end (`ui.switchAgent`) and closes the old one; without a front
 * end that can switch (headless), the command says how to get there from the command line.
 */
import { ConfigError, sessionLine, type Agent, type Command, type CommandContext, type SessionHandle, type SessionSummary } from "../../kernel/index.js";
import { COMMAND_META } from "./meta.js";
import { requireStore, switchTo, words } from "./format.js";

async function printSessions(ctx: CommandContext, command: string): Promise<SessionSummary[]> {
  const list = await requireStore(ctx, command).list(ctx.host.cwd);
  if (!list.length) ctx.print(`no sessions in ${ctx.host.cwd}`);
  for (const s of list) ctx.print(sessionLine(s, ctx.agent.session.id));
  return list;
}

/** Options that carry the user's current choices into the agent that replaces this one. */
function carried(ctx: CommandContext) {
  return { mode: ctx.agent.checker.mode, effort: ctx.agent.effort };
}

/** The same provider instance and model, so a new session or branch needs no key lookup. */
function sameModel(ctx: CommandContext) {
  return { provider: ctx.agent.provider, model: ctx.agent.spec };
}

/**
 * Opens an agent on a branch just made by the store, with this agent's model, mode and effort.
 * Closes the branch (releasing its lock) when that fails.
 */
export async function openBranch(ctx: CommandContext, branch: SessionHandle): Promise<Agent> {
  try {
    return await ctx.host.openAgent({ session: branch, ...sameModel(ctx), ...carried(ctx) });
  } catch (err) {
    await branch.close();
    throw err;
  }
}

export const sessionsCommand: Command = {
  ...COMMAND_META.sessions,
  async run(ctx) {
    await printSessions(ctx, "/sessions");
  },
};

export const resumeCommand: Command = {
  ...COMMAND_META.resume,
  async run(ctx) {
    const [want, extra] = words(ctx.args);
    if (extra !== undefined) throw new ConfigError(`/resume ${ctx.args.trim()}: give one session id or prefix`);
    if (!want) {
      const list = await printSessions(ctx, "/resume");
      if (list.length) ctx.print("resume one with /resume <id or unique prefix>");
      return;
    }
    const store = requireStore(ctx, "/resume");
    const hits = (await store.list(ctx.host.cwd)).filter((s) => s.id.startsWith(want));
    if (hits.length === 1 && hits[0]!.id === ctx.agent.session.id) {
      ctx.print(`already in session ${ctx.agent.session.id}`);
      return;
    }
    if (!ctx.ui?.switchAgent) {
      ctx.print(`to resume ${hits.length === 1 ? hits[0]!.id : want}, run: larik --resume ${hits.length === 1 ? hits[0]!.id : want}`);
      return;
    }
    // The store resolves the prefix itself and names the candidates when it is ambiguous.
    const next = await ctx.host.openAgent({ resume: want, ...carried(ctx) });
    await switchTo(ctx, next, "resume");
    for (const w of next.session.warnings) ctx.print(w);
    ctx.print(`resumed ${next.session.id} (${next.prompts().length} prompts, ${next.spec})`);
  },
};

export const newCommand: Command = {
  ...COMMAND_META.new,
  async run(ctx) {
    if (!ctx.ui?.switchAgent) {
      ctx.print("to start a new session, run larik without -c or --resume");
      return;
    }
    const next = await ctx.host.openAgent({ ...sameModel(ctx), ...carried(ctx) });
    await switchTo(ctx, next, "new");
    ctx.print(`new session ${next.session.id}`);
  },
};

export const forkCommand: Command = {
  ...COMMAND_META.fork,
  async run(ctx) {
    const store = requireStore(ctx, "/fork");
    const from = ctx.agent.session.id;
    const branch = await store.fork(ctx.host.cwd, from);
    if (!ctx.ui?.switchAgent) {
      await branch.close();
      ctx.print(`forked ${from} into ${branch.id}: continue it with larik --resume ${branch.id}`);
      return;
    }
    const next = await openBranch(ctx, branch);
    await switchTo(ctx, next, "fork");
    ctx.print(`forked ${from} into ${branch.id}; now in the branch (the original is unchanged)`);
  },
};
