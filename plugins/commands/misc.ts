/**
 * `/copy`, `/help` and `/quit` (LARIK-REFERENCE §24, §29).
 */
import type { Agent, Command } from "../../kernel/index.js";
import { COMMAND_META } from "./meta.js";

/** The text of the newest assistant message that has any (thinking left out), or undefined. */
export function lastReply(agent: Agent): string | undefined {
  const history = agent.history();
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role !== "assistant") continue;
    const text = m.blocks
      .filter((b) => b.type === "text")
      .map((b) => (b as { text: string }).text)
      .join("")
      .trim();
    if (text) return text;
  }
  return undefined;
}

export const copyCommand: Command = {
  ...COMMAND_META.copy,
  async run(ctx) {
    const text = lastReply(ctx.agent);
    if (text === undefined) {
      ctx.print("nothing to copy: no reply yet");
      return;
    }
    if (!ctx.ui?.copy) {
      ctx.print(text);
      return;
    }
    await ctx.ui.copy(text);
    ctx.print(`copied the last reply (${[...text].length} characters)`);
  },
};

/** Palette sections in the order `/help` lists them (§24). */
const SECTION_ORDER = ["commands", "skills", "custom commands", "review", "MCP prompts"];

export const helpCommand: Command = {
  ...COMMAND_META.help,
  async run(ctx) {
    const bySection = new Map<string, Command[]>();
    for (const c of ctx.host.commands.list()) {
      const s = c.section ?? "commands";
      bySection.set(s, [...(bySection.get(s) ?? []), c]);
    }
    const sections = [...bySection.keys()].sort((a, b) => {
      const ia = SECTION_ORDER.indexOf(a);
      const ib = SECTION_ORDER.indexOf(b);
      return (ia < 0 ? SECTION_ORDER.length : ia) - (ib < 0 ? SECTION_ORDER.length : ib) || a.localeCompare(b);
    });
    for (const s of sections) {
      ctx.print(`${s}:`);
      const cmds = bySection.get(s)!.sort((a, b) => a.name.localeCompare(b.name));
      for (const c of cmds) ctx.print(`  /${c.name}${c.args ? ` ${c.args}` : ""} — ${c.description}`);
    }
  },
};

export const quitCommand: Command = {
  ...COMMAND_META.quit,
  async run(ctx) {
    if (!ctx.ui?.quit) {
      ctx.print("/quit ends an interactive session; there is nothing to quit here");
      return;
    }
    ctx.ui.quit();
  },
};
