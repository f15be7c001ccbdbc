/**
 * The `sandbox-seatbelt` plugin (LARIK-REFERENCE §19): registers the `seatbelt` sandbox backend
 * on macOS. The host probes it at start-up (`selectSandbox` in kernel/sandbox.ts) and falls back
 * to no sandbox with a one-line reason and fix when it cannot start (nested Seatbelt, for one).
 * Elsewhere it registers nothing and loads none of its code.
 */
import { definePlugin } from "../../kernel/index.js";

// Types only: a value re-export would put the backend on every platform's start-up path.
// `createSeatbeltSandbox` is in ./sandbox.js, `buildProfile` in ./profile.js.
export type { SeatbeltSandbox, SeatbeltOptions } from "./sandbox.js";
export type { ProfileInput } from "./profile.js";

export default definePlugin({
  name: "sandbox-seatbelt",
  description: "Runs bash in a Seatbelt sandbox on macOS: writable project, private $TMPDIR, loopback network only, protected paths",
  async setup(ctx) {
    if (process.platform !== "darwin") return;
    const { createSeatbeltSandbox } = await import("./sandbox.js");
    const sandbox = createSeatbeltSandbox({
      projectRoot: ctx.host.projectRoot,
      settings: ctx.settings as Record<string, unknown>,
      env: ctx.host.env,
      notice: (text) => ctx.notice(text),
    });
    ctx.sandboxes.register(sandbox);
    ctx.onDispose(() => sandbox.dispose());
  },
});
