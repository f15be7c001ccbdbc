/**
 * The `mcp` plugin: an MCP client on the official SDK (LARIK-REFERENCE §15). It uses only the
 * kernel's public hook points and registries:
 *
 * - setup reads the server config and starts approved servers in the background (no SDK import
 *   happens unless a server is configured);
 * - `loadTools` waits a bounded time for servers still starting, then adds their tools (or the
 *   deferred `tool_search` / `call_tool` pair) and the resource tools; the set is then frozen for
 *   the context by the kernel, so late servers join after `/clear` (invariant 1);
 * - `preToolUse` (late stage) checks `call_tool`'s target with the kernel's checker;
 * - `userPromptSubmit` attaches `@server:uri` resource mentions;
 * - the `mcp` command and one command per server prompt.
 *
 * Tests and embedders may build it with {@link createMcpPlugin} to shorten timeouts.
 */
import { join } from "node:path";
import {
  dataDir,
  definePlugin,
  privateProjectFile,
  updatePrivateProjectSettings,
  type AnyTool,
  type Disposer,
  type Plugin,
} from "../../kernel/index.js";
import { collectServers, toolSearchSetting } from "./config.js";
import { DEFAULT_TIMEOUTS, type McpConnection, type Timeouts } from "./connection.js";
import { McpManager, privateApprovals } from "./manager.js";
import { adaptTool, type McpTool } from "./adapter.js";
import { mcpName, NameAllocator } from "./naming.js";
import { resourceTools, expandMentions } from "./resources.js";
import { promptCommand } from "./prompts.js";
import { callToolDecision, deferredTools, shouldDefer } from "./deferred.js";
import { mcpCommand } from "./commands.js";

/** Tuning for {@link createMcpPlugin}. Times in ms. */
export interface McpPluginOptions {
  timeouts?: Partial<Timeouts>;
  /** Longest wait of a fresh context for servers still starting (default 5 000). */
  waitMs?: number;
}

export const DEFAULT_WAIT_MS = 5_000;

/** Builds the plugin; the default export is `createMcpPlugin()`. */
export function createMcpPlugin(options: McpPluginOptions = {}): Plugin {
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  return definePlugin({
    name: "mcp",
    description: "MCP servers: tools, resources and prompts (stdio, streamable HTTP, SSE)",
    setup(ctx) {
      const host = ctx.host;
      const env = host.env;
      const { servers, warnings } = collectServers({ settings: ctx.settings, projectRoot: host.projectRoot, env });
      for (const w of warnings) ctx.notice(w);

      const promptDisposers = new Map<string, Disposer[]>();
      const registerPrompts = (conn: McpConnection) => {
        for (const d of promptDisposers.get(conn.name) ?? []) d();
        // This server's old commands are gone now, so every listed name is someone else's.
        const alloc = new NameAllocator(host.commands.list().map((c) => c.name));
        promptDisposers.set(
          conn.name,
          conn.prompts.map((p) => ctx.commands.register(promptCommand(conn, p, alloc.take(mcpName(conn.name, p.name))))),
        );
      };

      const manager = new McpManager(
        servers,
        { cwd: host.cwd, env, logDir: join(dataDir(env), "logs"), timeouts, notify: (t) => ctx.notice(t), onChange: registerPrompts },
        privateApprovals(privateProjectFile(host.cwd, env), (fn) => updatePrivateProjectSettings(host.cwd, fn, env)),
      );
      ctx.commands.register(mcpCommand(manager));
      ctx.onDispose(() => manager.closeAll());
      if (!servers.length) return;
      manager.startAll();

      /** `call_tool` definitions of live contexts → how to find their target. */
      const callTools = new WeakMap<AnyTool, ReturnType<typeof deferredTools>["resolve"]>();

      ctx.hooks.loadTools.tap(async (tools) => {
        await manager.waitReady(waitMs);
        const alloc = new NameAllocator(tools.map((t) => t.name));
        const adapted: McpTool[] = [];
        for (const conn of manager.connections) {
          if (conn.state === "starting") ctx.notice(`mcp server "${conn.name}" is still starting: its tools join after /clear`);
          if (conn.state !== "connected") continue;
          for (const t of conn.tools) {
            try {
              adapted.push(await adaptTool(conn, t, alloc.take(mcpName(conn.name, t.name))));
            } catch (err) {
              ctx.notice(`mcp tool ${t.name} of "${conn.name}" skipped: ${err instanceof Error ? err.message : String(err)}`);
            }
          }
        }
        const added: AnyTool[] = [];
        const free = (t: AnyTool) => !tools.some((x) => x.name === t.name);
        if (manager.connections.some((c) => c.state === "connected" && c.hasResources)) {
          added.push(...resourceTools(() => manager.connections).filter(free));
        }
        if (shouldDefer(toolSearchSetting(ctx.settings), adapted)) {
          const d = deferredTools(adapted);
          callTools.set(d.callTool, d.resolve);
          added.push(...d.tools.filter(free));
        } else added.push(...adapted.map((a) => a.tool));
        return [...tools, ...added];
      });

      ctx.hooks.preToolUse.tap(
        (info) => {
          const resolve = callTools.get(info.tool);
          const r = resolve?.(info.input);
          return r ? callToolDecision(info, r) : undefined;
        },
        // Late, so user PreToolUse hooks decide first (the hook point bails on the first answer).
        { stage: 100 },
      );

      ctx.hooks.userPromptSubmit.tap(async (info) => {
        if (!info.prompt.includes("@")) return undefined;
        const named = manager.connections.filter((c) => info.prompt.includes(`@${c.name}:`));
        if (!named.length) return undefined;
        if (named.some((c) => c.state === "starting")) await manager.waitReady(waitMs);
        for (const text of await expandMentions(info.prompt, named.filter((c) => c.state === "connected"))) info.addContext(text);
        return undefined;
      });
    },
  });
}

export default createMcpPlugin();
