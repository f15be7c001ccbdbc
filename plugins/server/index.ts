/**
 * `server`: the HTTP + SSE front end, `larik serve` (LARIK-REFERENCE §21). Registering costs
 * nothing: h3 and the server code load when the subcommand runs. Embedders can start the same
 * server on their own host with `startServer` from `./server.js`.
 */
import { definePlugin } from "../../kernel/index.js";
import { SERVE_OPTIONS } from "./cli-options.js";

export default definePlugin({
  name: "server",
  description: "HTTP + SSE API over many sessions: larik serve",
  setup(ctx) {
    ctx.frontends.register({
      name: "server",
      description: "serve the HTTP + SSE API (prints {\"url\",\"token\"} on stdout)",
      subcommand: "serve",
      options: SERVE_OPTIONS,
      async run(host, args) {
        const { runServe } = await import("./serve.js");
        return runServe(host, args);
      },
    });
  },
});
