/**
 * The mcp plugin with tiny fake stdio servers: crash at start, junk on stdout before the
 * handshake, no handshake at all, a crash during a call; env expansion; name de-duplication;
 * schema normalization; image limits; deferred tools past 30.
 */
import { readdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { Host, Settings } from "../kernel/index.js";
import { ScriptedProvider, call, text } from "./fakes/scripted-provider.js";
import { FAKE_SERVER, NODE, makeProject, mcpHost, runTurn, toolResults, type Project } from "./fixtures/mcp/harness.js";

const fake = (...args: string[]) => ({ command: NODE, args: [FAKE_SERVER, ...args] });

/** Pids of live processes whose command line contains `needle` (Linux /proc). */
function processesWith(needle: string): number[] {
  const pids: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, "utf8").includes(needle)) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

let p: Project | undefined;
let host: Host | undefined;
afterEach(async () => {
  await host?.dispose();
  p?.cleanup();
  host = undefined;
  p = undefined;
});

async function start(servers: Record<string, unknown>, extra: Settings = {}, env: NodeJS.ProcessEnv = {}, connectMs = 15_000) {
  p = makeProject(env);
  host = await mcpHost(p, { mcp_servers: servers, ...extra }, { timeouts: { connectMs } });
  return host;
}

/** One turn that calls the given tools, then ends; returns the provider and events. */
async function callTools(h: Host, calls: [string, unknown][], mode: "yolo" | "default" = "yolo", allow = false) {
  const provider = new ScriptedProvider([{ blocks: calls.map(([n, i], k) => call(`c${k}`, n, i)) }, { blocks: [text("done")] }]);
  const agent = await h.openAgent({ provider, mode });
  const events = await runTurn(agent, "go", () => allow);
  return { provider, events, agent };
}

describe("faulty servers are reported by name and never take the agent down", () => {
  it("a server that crashes at start", async () => {
    const h = await start({ crashy: fake("--crash-start"), good: fake() });
    const provider = new ScriptedProvider([{ blocks: [text("still here")] }]);
    const agent = await h.openAgent({ provider, mode: "yolo" });
    const events = await runTurn(agent, "hi");
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const names = provider.requests[0]!.tools.map((t) => t.name);
    expect(names).toContain("mcp__good__echo");
    expect(names.some((n) => n.startsWith("mcp__crashy"))).toBe(false);
    const notice = h.notices.find((n) => n.includes('"crashy"'));
    expect(notice).toMatch(/mcp server "crashy" failed: the server exited before the handshake \(stderr: fake: cannot start: missing FAKE_TOKEN\)/);
  });

  it("a server that prints junk on stdout before the handshake", async () => {
    const h = await start({ noisy: fake("--junk") });
    const { provider } = await callTools(h, [["mcp__noisy__echo", { text: "hi" }]]);
    expect(toolResults(provider, 1)[0]!.content).toBe("echo: hi");
    expect(h.notices.find((n) => n.includes('"noisy"'))).toMatch(/mcp server "noisy" wrote non-protocol output to stdout/);
  });

  it("a server still starting when the wait ends: the context goes on without it and says so", async () => {
    p = makeProject();
    host = await mcpHost(p, { mcp_servers: { slow: fake("--hang", `--tag=slow-${process.pid}`), good: fake() } }, { waitMs: 3000 });
    const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
    const events = await runTurn(await host.openAgent({ provider, mode: "yolo" }), "hi");
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const names = provider.requests[0]!.tools.map((t) => t.name);
    expect(names).toContain("mcp__good__echo");
    expect(names.some((n) => n.startsWith("mcp__slow"))).toBe(false);
    const said = [...host.notices, ...events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)];
    expect(said).toContain('mcp server "slow" is still starting: this context goes on without its tools (a fresh one, after /clear or in a new session, has them)');
  });

  it("a server that never answers the handshake, and is stopped when the host closes", async () => {
    const tag = `--tag=stuck-${process.pid}-${Date.now()}`;
    const h = await start({ stuck: fake("--hang", tag), good: fake() }, {}, {}, 1000);
    const provider = new ScriptedProvider([{ blocks: [call("c1", "mcp__good__echo", { text: "x" })] }, { blocks: [text("ok")] }]);
    const agent = await h.openAgent({ provider, mode: "yolo" });
    const events = await runTurn(agent, "hi");
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(toolResults(provider, 1)[0]!.content).toBe("echo: x");
    expect(h.notices.find((n) => n.includes('"stuck"'))).toMatch(/mcp server "stuck" failed: no handshake within 1 s/);
    expect(provider.requests[0]!.tools.some((t) => t.name.startsWith("mcp__stuck"))).toBe(false);
    // the server ignores stdin closing; by the time the host is closed it must be gone, not orphaned
    await h.dispose();
    host = undefined;
    expect(processesWith(tag)).toEqual([]);
  }, 20_000);

  it("a server that crashes during a call", async () => {
    const h = await start({ fragile: fake() });
    const provider = new ScriptedProvider([
      { blocks: [call("c1", "mcp__fragile__crash", {})] },
      { blocks: [call("c2", "mcp__fragile__echo", { text: "x" })] },
      { blocks: [text("done")] },
    ]);
    const agent = await h.openAgent({ provider, mode: "yolo" });
    const events = await runTurn(agent, "go");
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const [r] = toolResults(provider, 1);
    expect(r!.is_error).toBe(true);
    expect(r!.content).toMatch(/mcp server "fragile" exited during the call of crash/);
    // The next call to the dead server (same context) is an error result too.
    const [r2] = toolResults(provider, 2);
    expect(r2!.is_error).toBe(true);
    expect(r2!.content).toMatch(/mcp server "fragile" is not connected \(failed: the server closed the connection/);
    expect(events.some((e) => e.type === "notice" && /mcp server "fragile" is down/.test(e.text))).toBe(true);
    // A fresh context no longer offers its tools; /mcp shows the failure.
    const next = await callTools(h, []);
    expect(next.provider.requests[0]!.tools.some((t) => t.name.startsWith("mcp__fragile"))).toBe(false);
    const lines: string[] = [];
    await h.commands.get("mcp")!.run({ host: h, agent: next.agent, args: "", print: (t) => lines.push(t) });
    expect(lines.join("\n")).toMatch(/fragile \[personal, stdio\] failed: /);
  });

  it("a command that does not exist", async () => {
    const h = await start({ ghost: { command: "/nonexistent/larik-mcp-server" } });
    const { events } = await callTools(h, []);
    expect(events.at(-1)).toMatchObject({ type: "done" });
    expect(h.notices.find((n) => n.includes('"ghost"'))).toMatch(/mcp server "ghost" failed: .*ENOENT/);
  });
});

describe("configuration", () => {
  it("expands ${VAR} and ${VAR:-default} and passes only the configured env", async () => {
    const h = await start(
      {
        fake: {
          command: "${NODE_BIN}",
          args: [FAKE_SERVER, "--tools=${TOOLSET:-basic}"],
          env: { FAKE_SECRET: "${MY_SECRET}", FAKE_DEFAULT: "${NOT_SET_ANYWHERE:-fallback}" },
        },
        broken: { command: NODE, args: [FAKE_SERVER], env: { X: "${NOT_SET_ANYWHERE}" } },
      },
      {},
      { MY_SECRET: "s3cret", NODE_BIN: NODE, LARIK_PARENT_ONLY: "leak" },
    );
    const { provider } = await callTools(h, [
      ["mcp__fake__env", { name: "FAKE_SECRET" }],
      ["mcp__fake__env", { name: "FAKE_DEFAULT" }],
      ["mcp__fake__env", { name: "LARIK_PARENT_ONLY" }],
    ]);
    expect(toolResults(provider, 1).map((r) => r.content)).toEqual(["FAKE_SECRET=s3cret", "FAKE_DEFAULT=fallback", "LARIK_PARENT_ONLY=(unset)"]);
    expect(h.notices.find((n) => n.includes('"broken"'))).toMatch(/environment variable NOT_SET_ANYWHERE is not set \(used in env.X\)/);
  });

  it("sanitizes and de-duplicates tool names", async () => {
    const h = await start({ "my.srv": fake("--tools=names") });
    const { provider } = await callTools(h, [
      ["mcp__my_srv__read_file", {}],
      ["mcp__my_srv__read_file_2", {}],
      ["mcp__my_srv__read_file_3", {}],
    ]);
    const names = provider.requests[0]!.tools.map((t) => t.name).filter((n) => n.startsWith("mcp__"));
    expect(names).toHaveLength(4);
    for (const n of names) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(new Set(names).size).toBe(4);
    expect(names.find((n) => n.includes("xxxx"))).toMatch(/^mcp__my_srv__x+_[0-9a-f]{8}$/);
    expect(toolResults(provider, 1).map((r) => r.content)).toEqual(["called read.file", "called read_file", "called read file"]);
  });

  it("normalizes schemas with $ref, $defs and nullable unions, and validates against the original", async () => {
    const h = await start({ s: fake("--tools=refs") });
    const { provider } = await callTools(h, [
      ["mcp__s__refs", { point: { x: "left", y: 1 } }],
      ["mcp__s__refs", { point: { x: 1, y: 2 }, label: null }],
      ["mcp__s__refs", { point: { x: 1, y: 2 }, label: "waytoolong" }],
    ]);
    const spec = provider.requests[0]!.tools.find((t) => t.name === "mcp__s__refs")!;
    expect(spec.input_schema).toEqual({
      type: "object",
      properties: {
        point: { type: "object", properties: { x: { type: "integer" }, y: { type: "integer" } }, required: ["x", "y"] },
        label: { type: "string", maxLength: 5, description: "A label" },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["point"],
    });
    const [bad, nullOk, tooLong] = toolResults(provider, 1);
    expect(bad!.content).toMatch(/^INVALID_ARGUMENTS: mcp__s__refs: point\.x: /);
    // A top-level null is an unused argument (the kernel drops it); the server's schema allows it anyway.
    expect(nullOk!.content).toBe("called refs");
    expect(tooLong!.content).toMatch(/^INVALID_ARGUMENTS: mcp__s__refs: label: /);
  });

  it("passes at most 4 images and describes the rest", async () => {
    const h = await start({ img: fake() });
    const { provider } = await callTools(h, [["mcp__img__image", { count: 5 }], ["mcp__img__fail", {}]]);
    const [r, fail] = toolResults(provider, 1);
    expect(r!.images).toHaveLength(4);
    expect(r!.content).toMatch(/not shown \(at most 4 images per call\)/);
    expect(r!.content).toMatch(/image\/svg\+xml.*not shown \(only PNG, JPEG, GIF and WebP/);
    expect(r!.content).toMatch(/\[audio audio\/wav, 3 bytes: not shown\]/);
    expect(fail).toMatchObject({ content: "it broke", is_error: true });
  });
});

describe("deferred tools", () => {
  it("past 30 tools withholds definitions behind tool_search and call_tool", async () => {
    const h = await start({ many: fake("--tools=many:40") });
    const provider = new ScriptedProvider([
      { blocks: [call("c1", "tool_search", { query: "celsius temperatures" })] },
      {
        blocks: [
          call("c2", "call_tool", { tool: "mcp__many__tool7", arguments: '{"value": 3}' }),
          call("c3", "call_tool", { tool: "mcp__many__tool7", arguments: { value: "hot" } }),
          call("c4", "call_tool", { tool: "mcp__many__nope", arguments: {} }),
        ],
      },
      { blocks: [text("done")] },
    ]);
    // Default mode: a read-only target runs without a prompt, checked as itself.
    const agent = await h.openAgent({ provider, mode: "default" });
    const events = await runTurn(agent, "convert");
    expect(events.filter((e) => e.type === "permission_request")).toHaveLength(0);
    const tools = provider.requests[0]!.tools;
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["call_tool", "tool_search"]));
    expect(names.some((n) => n.startsWith("mcp__"))).toBe(false);
    const search = tools.find((t) => t.name === "tool_search")!;
    expect(search.description).toContain("mcp__many__tool7: Convert temperatures between Celsius and Fahrenheit");
    expect(search.description).toContain("mcp__many__tool39: Tool number 39");
    const [found] = toolResults(provider, 1);
    const first = JSON.parse(found!.content.split("\n")[0]!);
    expect(first).toMatchObject({ name: "mcp__many__tool7", input_schema: { type: "object" } });
    const [ok, bad, unknown] = toolResults(provider, 2);
    expect(ok!.content).toBe('tool7({"value":3})');
    expect(bad!.content).toMatch(/^INVALID_ARGUMENTS: call_tool: arguments: INVALID_ARGUMENTS: mcp__many__tool7: value:/);
    expect(unknown!.content).toMatch(/unknown deferred tool "mcp__many__nope"/);
  });

  it("call_tool asks for a target that is not read-only, and tool_search on/off override the count", async () => {
    const h = await start({ f: fake() }, { tool_search: "on" });
    const provider = new ScriptedProvider([{ blocks: [call("c1", "call_tool", { tool: "mcp__f__crash", arguments: {} })] }, { blocks: [text("ok")] }]);
    const agent = await h.openAgent({ provider, mode: "default" });
    const events = await runTurn(agent, "go", () => false);
    expect(events.filter((e) => e.type === "permission_request").map((e) => (e as { tool_name: string }).tool_name)).toEqual(["call_tool"]);
    expect(toolResults(provider, 1)[0]!.content).toMatch(/denied/);
    expect(provider.requests[0]!.tools.map((t) => t.name)).toEqual(["call_tool", "tool_search"]);
    await h.dispose();
    p!.cleanup();
    const h2 = await start({ many: fake("--tools=many:40") }, { tool_search: "off" });
    const { provider: p2 } = await callTools(h2, []);
    expect(p2.requests[0]!.tools.filter((t) => t.name.startsWith("mcp__many__"))).toHaveLength(40);
    expect(p2.requests[0]!.tools.some((t) => t.name === "tool_search")).toBe(false);
  });
});
