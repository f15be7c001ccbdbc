/**
 * `/hooks` lists the hooks in force; `/hooks approve` approves the shared project hooks,
 * pinning their hash in the private project settings (`approved_project_hooks`, §14, §26).
 */
import { updatePrivateProjectSettings, type Command } from "../../kernel/index.js";
import { DEFAULT_TIMEOUT_S } from "./config.js";
import type { HookEngine } from "./engine.js";

/** One line per configured hook, grouped by source. */
function describeHooks(engine: HookEngine): string[] {
  const lines: string[] = [];
  const all = engine.list();
  if (!all.length) return ["no hooks configured (settings key `hooks`, see docs/hooks.md)"];
  for (const source of ["personal", "project"] as const) {
    const mine = all.filter((h) => h.source === source);
    if (!mine.length) continue;
    const state = source === "personal" ? "" : engine.approved ? " (approved)" : " (NOT approved: run /hooks approve)";
    lines.push(source === "personal" ? "personal hooks:" : `project hooks from .larik/settings.json${state}:`);
    for (const h of mine) {
      const matcher = h.matcher ? ` [${h.matcher}]` : "";
      const timeout = h.hook.timeout ?? DEFAULT_TIMEOUT_S;
      lines.push(`  ${h.event}${matcher}: ${h.hook.command} (timeout ${timeout} s)`);
    }
  }
  return lines;
}

/**
 * `/hooks` over the engine `getEngine` resolves to. Name, description and arguments are plain
 * values for menus and `--help`; the engine is asked for only when the command runs (a host
 * without hooks never builds one otherwise).
 */
export function hooksCommand(getEngine: () => Promise<HookEngine>): Command {
  return {
    name: "hooks",
    description: "List hooks; `approve` lets the shared project hooks run",
    args: "[approve]",
    async run({ host, args, print }) {
      const engine = await getEngine();
      const sub = args.trim();
      if (sub === "") {
        for (const l of describeHooks(engine)) print(l);
        return;
      }
      if (sub !== "approve") {
        print(`unknown argument "${sub}": use /hooks or /hooks approve`);
        return;
      }
      if (!engine.hasShared) {
        print("there are no project hooks to approve");
        return;
      }
      const hash = engine.sharedHash;
      engine.approve();
      try {
        await updatePrivateProjectSettings(host.cwd, (cur) => ({ ...cur, approved_project_hooks: hash }), host.env);
        print(`project hooks approved (hash ${hash}); editing them drops the approval`);
      } catch (err) {
        print(`project hooks approved for this session only: the approval could not be saved: ${(err as Error).message}`);
      }
      for (const l of describeHooks(engine)) print(l);
    },
  };
}
