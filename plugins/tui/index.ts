/**
 * `tui`: the interactive terminal front end (LARIK-REFERENCE §24), claiming a plain `larik`
 * run in a terminal. Registering costs nothing: Ink, React, marked and the app are imported
 * when the run starts, while the session opens.
 */
import { definePlugin } from "../../kernel/index.js";

const noop = () => undefined;

export default definePlugin({
  name: "tui",
  description: "Interactive terminal UI: larik in a terminal",
  setup(ctx) {
    ctx.frontends.register({
      name: "tui",
      description: "the interactive terminal UI (default in a terminal)",
      interactive: true,
      async run(host, args) {
        const tty = process.stdout.isTTY && process.stdin.isTTY;
        // Ink and React take about half a second to import; say something at once meanwhile.
        // runTui erases this line before the first frame.
        if (tty) process.stdout.write("\x1b[2mlarik: starting…\x1b[22m");
        const ui = import("./run.js");
        // imported here, not at the top: a `larik -p` start would load it (and the prompt history) for nothing
        const { needsSetup, openSession, showNoticesBeforeFailure } = await import("./session-open.js");
        // the session opens meanwhile: a bad --resume id or a missing key is said as soon as
        // it is known, not once the UI has loaded (first-run setup needs the UI to ask)
        const opening = tty && !needsSetup(host, args) ? openSession(host, args) : undefined;
        if (opening) {
          // a failure to open is said at once; one of the UI's comes from `await ui` below
          const failed = await Promise.race([ui.then(noop, noop), opening.then(noop, (err: unknown) => ({ err }))]);
          if (failed) {
            process.stdout.write("\r\x1b[2K");
            showNoticesBeforeFailure(host, process.stderr);
            throw failed.err;
          }
        }
        const { runTui } = await ui;
        return runTui(host, args, undefined, { opening });
      },
    });
  },
});
