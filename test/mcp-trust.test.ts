/**
 * Trust for shared MCP servers (LARIK-REFERENCE §15 "Trust", invariant 7): servers from the
 * project's `.mcp.json` or `shared_mcp_servers` start only after `/mcp approve`, pinned to a hash
 * of their config and read from the private project settings only.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { dataDir, privateProjectFile, updatePrivateProjectSettings, type Host } from "../kernel/index.js";
import { configHash } from "../plugins/mcp/config.js";
import { ScriptedProvider } from "./fakes/scripted-provider.js";
import { FAKE_SERVER, NODE, makeProject, mcpHost, runTurn, type Project } from "./fixtures/mcp/harness.js";

const shared = { command: NODE, args: [FAKE_SERVER] };

let p: Project | undefined;
let host: Host | undefined;
afterEach(async () => {
  await host?.dispose();
  p?.cleanup();
  host = undefined;
  p = undefined;
});

/** Whether the config helper's updatePrivateProjectSettings exists yet (the kernel stub throws). */
let canPersist = true;
beforeAll(async () => {
  const probe = makeProject();
  try {
    await updatePrivateProjectSettings(probe.dir, (c) => c, probe.env);
  } catch {
    canPersist = false;
  } finally {
    probe.cleanup();
  }
});

function writeMcpJson(dir: string, servers: Record<string, unknown>) {
  writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: servers }, null, 2));
}

function writePrivate(proj: Project, doc: Record<string, unknown>) {
  const file = privateProjectFile(proj.dir, proj.env);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(doc));
}

async function toolNames(h: Host): Promise<string[]> {
  const provider = new ScriptedProvider([{ blocks: [{ type: "text", text: "ok" }] }]);
  const agent = await h.openAgent({ provider, mode: "yolo" });
  await runTurn(agent, "hi");
  return provider.requests[0]!.tools.map((t) => t.name);
}

async function status(h: Host): Promise<string> {
  const lines: string[] = [];
  const agent = await h.openAgent({ provider: new ScriptedProvider([]), mode: "yolo" });
  await h.commands.get("mcp")!.run({ host: h, agent, args: "", print: (t) => lines.push(t) });
  return lines.join("\n");
}

describe("shared servers", () => {
  it("an unapproved server from .mcp.json is not started", async () => {
    p = makeProject();
    writeMcpJson(p.dir, { proj: shared });
    host = await mcpHost(p, {});
    expect(await toolNames(host)).not.toContain("mcp__proj__echo");
    expect(host.notices.join("\n")).toContain('mcp server "proj" (from shared project config) is not approved: run /mcp approve proj');
    expect(await status(host)).toContain("proj [shared, stdio] unapproved: run /mcp approve proj");
    // Never spawned: no log was written for it.
    expect(existsSync(join(dataDir(p.env), "logs", "mcp-proj.log"))).toBe(false);
  });

  it("an approved one (hash in the private project settings) starts", async () => {
    p = makeProject();
    writeMcpJson(p.dir, { proj: shared });
    writePrivate(p, { approved_mcp_servers: { proj: configHash(shared) } });
    host = await mcpHost(p, {});
    expect(await toolNames(host)).toContain("mcp__proj__echo");
  });

  it("an approval is pinned to the config: an edited server needs approval again", async () => {
    p = makeProject();
    const edited = { ...shared, args: [FAKE_SERVER, "--junk"] };
    writeMcpJson(p.dir, { proj: edited });
    writePrivate(p, { approved_mcp_servers: { proj: configHash(shared) } });
    host = await mcpHost(p, {});
    expect(await toolNames(host)).not.toContain("mcp__proj__echo");
    expect(host.notices.join("\n")).toContain('"proj" (from shared project config) is not approved (its config changed)');
  });

  it("approvals in merged settings are ignored (a shared file cannot approve itself)", async () => {
    p = makeProject();
    host = await mcpHost(p, { shared_mcp_servers: { proj: shared }, approved_mcp_servers: { proj: configHash(shared) } });
    expect(await toolNames(host)).not.toContain("mcp__proj__echo");
  });

  it("shared_mcp_servers from the config loader replace reading .mcp.json, and personal wins a name clash", async () => {
    p = makeProject();
    writeMcpJson(p.dir, { fromfile: shared });
    host = await mcpHost(p, {
      mcp_servers: { both: shared },
      shared_mcp_servers: { both: { command: "/bin/false" }, other: shared },
    });
    expect(await toolNames(host)).toContain("mcp__both__echo");
    const s = await status(host);
    expect(s).toContain("both [personal, stdio] connected");
    expect(s).toContain("other [shared, stdio] unapproved");
    expect(s).not.toContain("fromfile");
  });

  it("/mcp approve starts the server, and its tools join at the next fresh context", async () => {
    p = makeProject();
    writeMcpJson(p.dir, { proj: shared });
    host = await mcpHost(p, {});
    expect(await toolNames(host)).not.toContain("mcp__proj__echo");
    const lines: string[] = [];
    const agent = await host.openAgent({ provider: new ScriptedProvider([]), mode: "yolo" });
    const run = (args: string) => host!.commands.get("mcp")!.run({ host: host!, agent, args, print: (t) => lines.push(t) });
    await run("approve");
    expect(lines.pop()).toBe("usage: /mcp approve <name>; waiting for approval: proj");
    await expect(run("approve nope")).rejects.toThrow('no MCP server named "nope": shared servers are proj');
    await run("approve proj");
    expect(lines.pop()).toMatch(/^approved mcp server "proj".*; starting it: its tools join after \/clear$/);
    expect(await toolNames(host)).toContain("mcp__proj__echo");
    await run("approve proj");
    expect(lines.pop()).toBe('mcp server "proj" is already approved');
    if (canPersist) {
      const saved = JSON.parse(readFileSync(privateProjectFile(p.dir, p.env), "utf8")) as { approved_mcp_servers: Record<string, string> };
      expect(saved.approved_mcp_servers.proj).toBe(configHash(shared));
    } else {
      console.warn("updatePrivateProjectSettings is still the kernel stub: approval persistence not checked");
    }
  });
});
