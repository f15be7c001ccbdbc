/**
 * The `hooks` plugin: Claude Code compatible shell hooks (LARIK-REFERENCE §14) as taps on the
 * kernel's hook points. See docs/hooks.md for what every event can do.
 */
import { definePlugin } from "../../kernel/index.js";
import { hooksCommand } from "./command.js";
import type { EngineOptions, HookEngine } from "./engine.js";

export type { HookEngine } from "./engine.js";
export { hooksHash, parseHooksConfig, HOOK_EVENTS, type HookEvent, type HooksConfig } from "./config.js";

export default definePlugin({
  name: "hooks",
  description: "Claude Code compatible shell hooks (settings `hooks`)",
  async setup(ctx) {
    const s = ctx.settings;
    const opts: EngineOptions = {
      personal: s.hooks,
      shared: s.shared_hooks,
      approvedHash: s.approved_project_hooks,
      cwd: ctx.cwd,
      projectRoot: ctx.host.projectRoot,
      env: ctx.host.env,
    };
    let engine: Promise<HookEngine> | undefined;
    const getEngine = () => (engine ??= import("./engine.js").then((m) => new m.HookEngine(opts)));
    ctx.commands.register(hooksCommand(getEngine));
    // Most projects configure no hooks: then neither the engine nor a single tap is loaded, and
    // the hook points stay empty (each tap costs every event a call).
    if (s.hooks === undefined && s.shared_hooks === undefined) return;
    const [e, { installTaps }] = await Promise.all([getEngine(), import("./taps.js")]);
    for (const p of e.problems) ctx.notice(p);
    if (e.hasShared && !e.approved) {
      const changed = typeof s.approved_project_hooks === "string" ? " changed since they were approved and" : "";
      ctx.notice(`project hooks in .larik/settings.json${changed} will not run until approved: review them with /hooks, then run /hooks approve`);
    }
    installTaps(ctx, e);
    ctx.onDispose(() => e.killAll());
  },
});
