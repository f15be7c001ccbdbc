/**
 * `headless`: the `-p` front end (LARIK-REFERENCE §22). Runs one prompt, prints the answer
 * (text) or one event per line (`--output json`), auto-denies permission requests, and exits 1
 * when the agent ended in error.
 */
import { definePlugin, parseDuration } from "../../kernel/index.js";
import { outputFormat } from "./output-format.js";

export default definePlugin({
  name: "headless",
  description: "Headless print mode: larik -p",
  setup(ctx) {
    ctx.frontends.register({
      name: "headless",
      description: "run one prompt and print the answer (-p)",
      flag: "print",
      options: {
        print: { type: "boolean", short: "p", description: "headless: run the prompt, print the answer and exit" },
        output: { type: "string", description: "with -p: text (default) or json (one event per line)", value: "<format>", check: (v) => void outputFormat(v) },
        timeout: {
          type: "string",
          description: "with -p: stop after this long: 90 (seconds), 90s, 5m, 1h30m (0 = none)",
          value: "<duration>",
          check: (v) => void parseDuration(v, "--timeout"),
        },
      },
      async run(host, args) {
        const { runHeadless } = await import("./run.js");
        return runHeadless(host, args);
      },
    });
  },
});
