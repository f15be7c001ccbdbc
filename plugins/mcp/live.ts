/**
 * The part of the `mcp` plugin that exists only once servers are configured: the manager, the
 * `loadTools` / `preToolUse` / `userPromptSubmit` taps and the prompt commands. `index.ts`
 * imports this module on demand, so a start-up without MCP servers (the common case) compiles
 * none of it, nor the SDK, nor classic zod (which `schema.ts` needs for `z.fromJSONSchema`).
 */
import { join } from "node:path";
import {
  dataDir,
  privateProjectFile,
  updatePrivateProjectSettings,
  type AnyTool,
  type Disposer,
  type PluginContext,
  type PreToolDecision,
  type ToolCallInfo,
} from "../../kernel/index.js";
import { toolSearchSetting, type ServerEntry } from "./config.js";
import { DEFAULT_TIMEOUTS, type McpConnection, type Timeouts } from "./connection.js";
import { McpManager, privateApprovals } from "./manager.js";
import { mcpName, NameAllocator } from "./naming.js";
import { promptCommand } from "./prompts.js";
import type { McpTool } from "./adapter.js";

/** What {@link startMcp} needs besides the plugin context. Times in ms. */
export interface LiveOptions {
  timeouts?: Partial<Timeouts>;
  /** Longest wait of a fresh context for servers still starting. */
  waitMs: number;
}

/**
 * Builds the manager of `servers` and, when there are any, starts the approved ones in the
 * background and taps the hook points that bring their tools, resources and prompts in. With no
 * servers it returns an empty manager, which is all `/mcp` needs to answer. Never throws for a
 * server: failures become connection states and notices.
 */
export function startMcp(ctx: PluginContext, servers: ServerEntry[], options: LiveOptions): McpManager {
  const host = ctx.host;
  const env = host.env;
  const { waitMs } = options;
  const timeouts: Timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };

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
  ctx.onDispose(() => manager.closeAll());
  if (!servers.length) return manager;
  manager.startAll();

  /** `call_tool` definitions of live contexts → the permission decision for their target. */
  const callTools = new WeakMap<AnyTool, (info: ToolCallInfo) => PreToolDecision | undefined>();

  ctx.hooks.loadTools.tap(async (tools) => {
    // The schema code (classic zod, Ajv) compiles while the servers are still starting.
    const [{ adaptTool }, { resourceTools }, deferred] = await Promise.all([
      import("./adapter.js"),
      import("./resources.js"),
      import("./deferred.js"),
      manager.waitReady(waitMs),
    ]);
    const alloc = new NameAllocator(tools.map((t) => t.name));
    const adapted: McpTool[] = [];
    for (const conn of manager.connections) {
      if (conn.state === "starting") {
        ctx.notice(`mcp server "${conn.name}" is still starting: this context goes on without its tools (a fresh one, after /clear or in a new session, has them)`);
      }
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
    if (deferred.shouldDefer(toolSearchSetting(ctx.settings), adapted)) {
      const d = deferred.deferredTools(adapted);
      callTools.set(d.callTool, (info) => {
        const r = d.resolve(info.input);
        return r ? deferred.callToolDecision(info, r) : undefined;
      });
      added.push(...d.tools.filter(free));
    } else added.push(...adapted.map((a) => a.tool));
    return [...tools, ...added];
  });

  ctx.hooks.preToolUse.tap(
    (info) => callTools.get(info.tool)?.(info),
    // Late, so user PreToolUse hooks decide first (the hook point bails on the first answer).
    { stage: 100 },
  );

  ctx.hooks.userPromptSubmit.tap(async (info) => {
    if (!info.prompt.includes("@")) return undefined;
    const named = manager.connections.filter((c) => info.prompt.includes(`@${c.name}:`));
    if (!named.length) return undefined;
    if (named.some((c) => c.state === "starting")) await manager.waitReady(waitMs);
    const { expandMentions } = await import("./resources.js");
    for (const text of await expandMentions(info.prompt, named.filter((c) => c.state === "connected"))) info.addContext(text);
    return undefined;
  });

  return manager;
}
