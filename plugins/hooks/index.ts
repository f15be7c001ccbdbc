/**
 * The `hooks` plugin: Claude Code compatible shell hooks (LARIK-REFERENCE §14) as taps on the
 * kernel's hook points. See docs/hooks.md for what every event can do.
 */
import { definePlugin } from "../../kernel/index.js";
import { hooksCommand } from "./command.js";
import { HookEngine } from "./engine.js";
import { installTaps } from "./taps.js";

export { HookEngine } from "./engine.js";
export { hooksHash, parseHooksConfig, HOOK_EVENTS, type HookEvent, type HooksConfig } from "./config.js";

export default definePlugin({
  name: "hooks",
  description: "Claude Code compatible shell hooks (settings `hooks`)",
  setup(ctx) {
    const s = ctx.settings;
    const engine = new HookEngine({
      personal: s.hooks,
      shared: s.shared_hooks,
      approvedHash: s.approved_project_hooks,
      cwd: ctx.cwd,
      projectRoot: ctx.host.projectRoot,
      env: ctx.host.env,
    });
    for (const p of engine.problems) ctx.notice(p);
    if (engine.hasShared && !engine.approved) {
      const changed = typeof s.approved_project_hooks === "string" ? " changed since they were approved and" : "";
      ctx.notice(`project hooks in .larik/settings.json${changed} will not run until approved: review them with /hooks, then run /hooks approve`);
    }
    installTaps(ctx, engine);
    ctx.commands.register(hooksCommand(engine));
    ctx.onDispose(() => engine.killAll());
  },
});
