/**
 * The `/mcp` command (LARIK-REFERENCE §15, §29): `/mcp` shows every server's state, `/mcp <name>`
 * its tools, prompts and log, `/mcp approve <name>` trusts a shared server (pinned to its
 * config hash), `/mcp login|logout <name>` go to the OAuth seam.
 */
import type { Command } from "../../kernel/index.js";
import type { McpConnection } from "./connection.js";
import type { McpManager } from "./manager.js";

function where(c: McpConnection): string {
  const cfg = c.entry.config;
  return cfg ? (cfg.type === "stdio" ? "stdio" : `${cfg.type} ${cfg.url}`) : "invalid config";
}

function summary(c: McpConnection): string {
  const src = c.entry.source === "shared" ? "shared" : "personal";
  let state: string = c.state;
  if (c.state === "connected") {
    const parts = [`${c.tools.length} tools`];
    if (c.prompts.length) parts.push(`${c.prompts.length} prompts`);
    if (c.hasResources) parts.push("resources");
    state += ` (${parts.join(", ")})`;
  } else if (c.state === "unapproved") state += `: run /mcp approve ${c.name}`;
  else if (c.error) state += `: ${c.error}`;
  return `${c.name} [${src}, ${where(c)}] ${state}`;
}

/**
 * Builds `/mcp` over the servers of the manager `getManager` resolves to. The command's name,
 * description and arguments are plain values (menus and `--help` list them at once); the manager
 * and everything it loads are asked for only when the command runs.
 */
export function mcpCommand(getManager: () => Promise<McpManager>): Command {
  return {
    name: "mcp",
    description: "MCP servers: status, tools and prompts; approve shared servers",
    args: "[approve <name> | <name> | login <name> | logout <name>]",
    async run(ctx) {
      const manager = await getManager();
      const [sub, ...rest] = ctx.args.trim().split(/\s+/).filter(Boolean);
      const name = rest.join(" ");
      if (sub === "approve") {
        if (!name) {
          const waiting = manager.connections.filter((c) => c.state === "unapproved").map((c) => c.name);
          ctx.print(waiting.length ? `usage: /mcp approve <name>; waiting for approval: ${waiting.join(", ")}` : "usage: /mcp approve <name>; no shared server is waiting for approval");
          return;
        }
        ctx.print(await manager.approve(name));
        return;
      }
      if (sub === "login" || sub === "logout") {
        if (!name) throw new Error(`usage: /mcp ${sub} <name>`);
        const auth = await import("./auth.js");
        await (sub === "login" ? auth.login(name) : auth.logout(name));
        return;
      }
      if (sub) {
        const c = manager.get(sub);
        if (!c) throw new Error(`no MCP server named "${sub}": /mcp lists them`);
        const { isReadOnly } = await import("./adapter.js");
        ctx.print(summary(c));
        if (c.serverInfo) ctx.print(`  server: ${c.serverInfo.name} ${c.serverInfo.version}`);
        if (c.instructions) ctx.print(`  instructions: ${c.instructions.replace(/\s+/g, " ").slice(0, 300)}`);
        for (const t of c.tools) ctx.print(`  tool ${t.name}${isReadOnly(t) ? " (read-only)" : ""}`);
        for (const p of c.prompts) ctx.print(`  prompt /${p.name}`);
        if (c.entry.config?.type === "stdio") ctx.print(`  log: ${c.logFile}`);
        return;
      }
      if (!manager.connections.length) {
        ctx.print("no MCP servers configured: add mcp_servers to ~/.config/larik/config.json or mcpServers to .mcp.json");
        return;
      }
      ctx.print(`MCP servers (${manager.connections.length}); tools of servers that connect later join after /clear:`);
      for (const c of manager.connections) ctx.print(`  ${summary(c)}`);
    },
  };
}
