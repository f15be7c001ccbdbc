/**
 * The mcp plugin against real servers from npm (@modelcontextprotocol/server-everything and
 * server-filesystem over stdio), driven through a real Host and Agent with the scripted provider.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataDir, type Host, type ToolSpec } from "../kernel/index.js";
import { ScriptedProvider, call, text } from "./fakes/scripted-provider.js";
import { EVERYTHING, FILESYSTEM, NODE, makeProject, mcpHost, runTurn, toolResults, type Project } from "./fixtures/mcp/harness.js";

const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;

/** Keys no provider-facing schema may carry after normalization. */
function badKeys(schema: unknown, out: string[] = []): string[] {
  if (Array.isArray(schema)) schema.forEach((s) => badKeys(s, out));
  else if (schema && typeof schema === "object") {
    for (const [k, v] of Object.entries(schema)) {
      if (k === "$ref" || k === "$defs" || k === "definitions" || k === "$schema") out.push(k);
      badKeys(v, out);
    }
  }
  return out;
}

describe("mcp with server-everything (stdio)", () => {
  let p: Project;
  let host: Host;
  beforeAll(async () => {
    p = makeProject();
    host = await mcpHost(p, { mcp_servers: { everything: { command: NODE, args: [EVERYTHING, "stdio"] } } });
  });
  afterAll(async () => {
    await host.dispose();
    p.cleanup();
  });

  it("advertises its tools with provider-safe names and schemas and calls one", async () => {
    const provider = new ScriptedProvider([{ blocks: [call("c1", "mcp__everything__echo", { message: "hello mcp" })] }, { blocks: [text("done")] }]);
    const agent = await host.openAgent({ provider, mode: "yolo" });
    const events = await runTurn(agent, "echo something");
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const tools: ToolSpec[] = provider.requests[0]!.tools;
    const mcp = tools.filter((t) => t.name.startsWith("mcp__everything__"));
    expect(mcp.map((t) => t.name)).toEqual(expect.arrayContaining(["mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image"]));
    for (const t of tools) {
      expect(t.name).toMatch(NAME_RE);
      expect(badKeys(t.input_schema), t.name).toEqual([]);
      expect(t.input_schema.type, t.name).toBe("object");
    }
    const echo = tools.find((t) => t.name === "mcp__everything__echo")!;
    expect(echo.input_schema).toEqual({ type: "object", properties: { message: { type: "string", description: "Message to echo" } }, required: ["message"] });
    expect(toolResults(provider, 1)[0]).toMatchObject({ content: "Echo: hello mcp" });
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["list_mcp_resources", "read_mcp_resource"]));
  });

  it("marks tools read-only only with readOnlyHint and a closed world", async () => {
    const agent = await host.openAgent({ provider: new ScriptedProvider([]), mode: "default" });
    const { tools } = await agent.context();
    const kind = (n: string) => tools.find((t) => t.name === n)?.kind;
    expect(kind("mcp__everything__echo")).toBe("read"); // readOnlyHint true, openWorldHint false
    expect(kind("mcp__everything__gzip-file-as-resource")).toBe("other"); // open world
    expect(kind("mcp__everything__toggle-simulated-logging")).toBe("other"); // not read-only
  });

  it("validates arguments against the server's schema before asking permission", async () => {
    const provider = new ScriptedProvider([
      { blocks: [call("c1", "mcp__everything__get-sum", { a: "one", b: 2 }), call("c2", "mcp__everything__toggle-simulated-logging", {})] },
      { blocks: [text("ok")] },
    ]);
    const agent = await host.openAgent({ provider, mode: "default" });
    const events = await runTurn(agent, "sum", () => false);
    const asked = events.filter((e) => e.type === "permission_request").map((e) => (e as { tool_name: string }).tool_name);
    expect(asked).toEqual(["mcp__everything__toggle-simulated-logging"]);
    const [sum, toggle] = toolResults(provider, 1);
    expect(sum!.is_error).toBe(true);
    expect(sum!.content).toMatch(/^INVALID_ARGUMENTS: mcp__everything__get-sum: a: /);
    expect(toggle!.content).toMatch(/denied/);
  });

  it("passes images on", async () => {
    const provider = new ScriptedProvider([{ blocks: [call("c1", "mcp__everything__get-tiny-image", {})] }, { blocks: [text("ok")] }]);
    const agent = await host.openAgent({ provider, mode: "yolo" });
    await runTurn(agent, "image");
    const [r] = toolResults(provider, 1);
    expect(r!.images?.length).toBe(1);
    expect(r!.images![0]!.media_type).toBe("image/png");
    expect(r!.content).toMatch(/image\/png/);
  });

  it("lists and reads resources", async () => {
    const uri = "demo://resource/static/document/architecture.md";
    const provider = new ScriptedProvider([
      { blocks: [call("c1", "list_mcp_resources", { server: "everything" }), call("c2", "read_mcp_resource", { server: "everything", uri })] },
      { blocks: [text("ok")] },
    ]);
    const agent = await host.openAgent({ provider, mode: "default" });
    const events = await runTurn(agent, "resources");
    expect(events.some((e) => e.type === "permission_request")).toBe(false);
    const [list, read] = toolResults(provider, 1);
    const rows = JSON.parse(list!.content) as { server: string; uri: string }[];
    expect(rows.map((r) => r.uri)).toContain(uri);
    expect(rows.every((r) => r.server === "everything")).toBe(true);
    expect(read!.is_error).toBeUndefined();
    expect(read!.content).toContain(`<mcp-resource uri="${uri}"`);
    expect(read!.content.length).toBeGreaterThan(200);
  });

  it("attaches @server:uri mentions to the prompt", async () => {
    const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
    const agent = await host.openAgent({ provider, mode: "yolo" });
    await runTurn(agent, "summarize @everything:demo://resource/static/document/features.md please, and keep @unknown:thing as prose");
    const sent = JSON.stringify(provider.requests[0]!.messages);
    expect(sent).toContain('<mcp-resource server=\\"everything\\" uri=\\"demo://resource/static/document/features.md\\">');
    expect(sent).not.toContain('server=\\"unknown\\"');
    expect(sent).not.toContain("could not be read");
    expect(sent).toContain("keep @unknown:thing as prose");
  });

  it("turns server prompts into slash commands", async () => {
    const cmd = host.commands.get("mcp__everything__args-prompt");
    expect(cmd).toBeDefined();
    expect(cmd!.args).toBe("<city> [state]");
    expect(cmd!.section).toBe("MCP prompts");
    const agent = await host.openAgent({ provider: new ScriptedProvider([]), mode: "yolo" });
    const ctx = (args: string) => ({ host, agent, args, print: () => {} });
    await expect(cmd!.run(ctx("Paris Ile de France"))).resolves.toEqual({ prompt: "What's weather in Paris, Ile de France?" });
    await expect(cmd!.run(ctx("Boston"))).resolves.toEqual({ prompt: "What's weather in Boston?" });
    await expect(cmd!.run(ctx(""))).rejects.toThrow("/mcp__everything__args-prompt needs <city>");
  });

  it("reports status with /mcp", async () => {
    const lines: string[] = [];
    const agent = await host.openAgent({ provider: new ScriptedProvider([]), mode: "yolo" });
    await host.commands.get("mcp")!.run({ host, agent, args: "", print: (t) => lines.push(t) });
    expect(lines.join("\n")).toMatch(/everything \[personal, stdio\] connected \(\d+ tools, \d+ prompts, resources\)/);
    lines.length = 0;
    await host.commands.get("mcp")!.run({ host, agent, args: "everything", print: (t) => lines.push(t) });
    expect(lines.join("\n")).toContain("tool echo (read-only)");
    expect(lines.join("\n")).toContain("prompt /args-prompt");
  });
});

describe("mcp with server-filesystem (stdio)", () => {
  let p: Project;
  let host: Host;
  let root: string;
  beforeAll(async () => {
    p = makeProject();
    root = join(p.dir, "files");
    mkdirSync(root);
    writeFileSync(join(root, "note.txt"), "the filesystem server read this\n");
    host = await mcpHost(p, { mcp_servers: { fs: { command: NODE, args: [FILESYSTEM, root] } } });
  });
  afterAll(async () => {
    await host.dispose();
    p.cleanup();
  });

  it("reads a file through the agent and logs the server's stderr", async () => {
    const provider = new ScriptedProvider([
      { blocks: [call("c1", "mcp__fs__read_text_file", { path: join(root, "note.txt") }), call("c2", "mcp__fs__list_directory", { path: root })] },
      { blocks: [text("ok")] },
    ]);
    const agent = await host.openAgent({ provider, mode: "yolo" });
    await runTurn(agent, "read the note");
    const tools = provider.requests[0]!.tools;
    for (const t of tools) {
      expect(t.name).toMatch(NAME_RE);
      expect(badKeys(t.input_schema)).toEqual([]);
    }
    const [read, list] = toolResults(provider, 1);
    expect(read!.content).toContain("the filesystem server read this");
    expect(list!.content).toContain("note.txt");
    const log = join(dataDir(p.env), "logs", "mcp-fs.log");
    expect(existsSync(log)).toBe(true);
    expect(readFileSync(log, "utf8")).toMatch(/Secure MCP Filesystem Server running on stdio/);
  });
});
