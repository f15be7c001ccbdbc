/**
 * The `sandbox-bubblewrap` plugin (LARIK-REFERENCE §19): registers the `bubblewrap` sandbox
 * backend on Linux. The host probes it at start-up (`selectSandbox` in kernel/sandbox.ts) and
 * falls back to no sandbox with a one-line reason and fix when it cannot start.
 */
import { definePlugin } from "../../kernel/index.js";
import { createBubblewrapSandbox } from "./sandbox.js";

export { createBubblewrapSandbox, type BubblewrapSandbox, type BubblewrapOptions } from "./sandbox.js";

export default definePlugin({
  name: "sandbox-bubblewrap",
  description: "Runs bash in a bubblewrap sandbox on Linux: read-only /, writable project, private $TMPDIR, no network, protected paths",
  setup(ctx) {
    if (process.platform !== "linux") return;
    const sandbox = createBubblewrapSandbox({
      projectRoot: ctx.host.projectRoot,
      settings: ctx.settings as Record<string, unknown>,
      env: ctx.host.env,
      notice: (text) => ctx.notice(text),
    });
    ctx.sandboxes.register(sandbox);
    ctx.onDispose(() => sandbox.dispose());
  },
});
