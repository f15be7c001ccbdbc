/**
 * `tui`: the interactive terminal front end (LARIK-REFERENCE §24), claiming a plain `larik`
 * run in a terminal. Registering costs nothing: Ink, React, marked and the app are imported
 * when the run starts.
 */
import { definePlugin } from "../../kernel/index.js";

export default definePlugin({
  name: "tui",
  description: "Interactive terminal UI: larik in a terminal",
  setup(ctx) {
    ctx.frontends.register({
      name: "tui",
      description: "the interactive terminal UI (default in a terminal)",
      interactive: true,
      async run(host, args) {
        // Ink and React take about half a second to import; say something at once meanwhile.
        // runTui erases this line before the first frame.
        if (process.stdout.isTTY && process.stdin.isTTY) process.stdout.write("\x1b[2mlarik: starting…\x1b[22m");
        const { runTui } = await import("./run.js");
        return runTui(host, args);
      },
    });
  },
});
