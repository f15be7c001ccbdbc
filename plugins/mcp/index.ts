/**
 * The `mcp` plugin: an MCP client on the official SDK (LARIK-REFERENCE §15). It uses only the
 * kernel's public hook points and registries:
 *
 * - setup reads the server config and starts approved servers in the background (the rest of
 *   the plugin, in `live.ts`, and the SDK load only when a server is configured);
 * - `loadTools` waits a bounded time for servers still starting, then adds their tools (or the
 *   deferred `tool_search` / `call_tool` pair) and the resource tools; the set is then frozen for
 *   the context by the kernel, so late servers join after `/clear` (invariant 1);
 * - `preToolUse` (late stage) checks `call_tool`'s target with the kernel's checker;
 * - `userPromptSubmit` attaches `@server:uri` resource mentions;
 * - the `mcp` command and one command per server prompt.
 *
 * Tests and embedders may build it with {@link createMcpPlugin} to shorten timeouts.
 */
import { definePlugin, type Plugin } from "../../kernel/index.js";
import { collectServers } from "./config.js";
import { mcpCommand } from "./commands.js";
import type { Timeouts } from "./connection.js";
import type { McpManager } from "./manager.js";

/** Tuning for {@link createMcpPlugin}. Times in ms. */
export interface McpPluginOptions {
  timeouts?: Partial<Timeouts>;
  /** Longest wait of a fresh context for servers still starting (default 5 000). */
  waitMs?: number;
}

export const DEFAULT_WAIT_MS = 5_000;

/** Builds the plugin; the default export is `createMcpPlugin()`. */
export function createMcpPlugin(options: McpPluginOptions = {}): Plugin {
  const live = { timeouts: options.timeouts, waitMs: options.waitMs ?? DEFAULT_WAIT_MS };
  return definePlugin({
    name: "mcp",
    description: "MCP servers: tools, resources and prompts (stdio, streamable HTTP, SSE)",
    async setup(ctx) {
      const host = ctx.host;
      const { servers, warnings } = collectServers({ settings: ctx.settings, projectRoot: host.projectRoot, env: host.env });
      for (const w of warnings) ctx.notice(w);
      // Everything past the config (manager, SDK, schemas) loads only when there is a server to
      // start, or when `/mcp` runs without one: most start-ups have no MCP server.
      let manager: Promise<McpManager> | undefined;
      const getManager = () => (manager ??= import("./live.js").then((m) => m.startMcp(ctx, servers, live)));
      ctx.commands.register(mcpCommand(getManager));
      if (servers.length) await getManager();
    },
  });
}

export default createMcpPlugin();
