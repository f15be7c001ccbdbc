/**
 * Every example plugin in examples/ (one per registry) loads through a larik.config.ts and works;
 * the README quotes the tool example verbatim; this repository's own larik.config.ts loads once
 * approved.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { approveProjectConfig, defineTool, definePlugin, Host, loadConfig, type AgentEvent } from "../kernel/index.js";
import { call, ScriptedProvider, text } from "./fakes/scripted-provider.js";

const root = resolve(import.meta.dirname, "..");
const EXAMPLES = ["word-count-plugin", "echo-provider-plugin", "shout-command-plugin", "guard-hook-plugin", "answer-frontend-plugin"];

function tempEnv() {
  const home = mkdtempSync(join(tmpdir(), "larik-ex-home-"));
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, "data"), XDG_CACHE_HOME: join(home, "cache"), PATH: process.env.PATH };
  return { home, env };
}

async function hostWithExamples() {
  const { home, env } = tempEnv();
  mkdirSync(join(home, ".config", "larik"), { recursive: true });
  const list = EXAMPLES.map((e) => JSON.stringify(join(root, "examples", `${e}.ts`))).join(", ");
  writeFileSync(join(home, ".config", "larik", "larik.config.ts"), `import { defineConfig } from "larik";\nexport default defineConfig({ plugins: [${list}] });\n`);
  const project = mkdtempSync(join(tmpdir(), "larik-ex-proj-"));
  writeFileSync(join(project, "a.txt"), "three small words\n");
  const cfg = await loadConfig(project, env);
  expect(cfg.notices).toEqual([]);
  const bash = definePlugin({
    name: "fake-bash",
    setup(ctx) {
      ctx.tools.register(defineTool({ name: "bash", description: "x", input: z.object({ command: z.string() }), kind: "bash", subject: (i) => i.command, run: async () => ({ content: "ran" }) }));
    },
  });
  const host = await Host.create({ plugins: [bash, ...cfg.plugins], cwd: project, settings: cfg.settings, env });
  return { host, project };
}

async function drain(it: AsyncIterable<AgentEvent>) {
  const out: AgentEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe("examples", () => {
  it("the README quotes examples/word-count-plugin.ts verbatim", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(readme).toContain(readFileSync(join(root, "examples/word-count-plugin.ts"), "utf8").trim());
  });

  it("loads one plugin per registry through larik.config.ts", async () => {
    const { host } = await hostWithExamples();
    expect(host.failed).toEqual([]);
    expect(host.plugins).toEqual(["fake-bash", ...EXAMPLES.map((e) => e.replace(/-plugin$/, ""))]);
    expect(host.tools.get("word_count")).toBeDefined();
    // what `larik --version` says the README's plugin contributes
    expect(host.pluginDescriptions.find(([n]) => n === "word-count")?.[1]).toBe("A word_count tool: counts the words of a file in the project");
    expect(host.providers.get("echo")).toBeDefined();
    expect(host.commands.get("shout")).toBeDefined();
    expect(host.frontends.get("answer")?.subcommand).toBe("answer");
  });

  it("the tool plugin counts words and its postToolUse tap shows a notice", async () => {
    const { host } = await hostWithExamples();
    const provider = new ScriptedProvider([{ blocks: [call("t1", "word_count", { path: "a.txt" })] }, { blocks: [text("3 words")] }]);
    const agent = await host.openAgent({ provider, model: "s/x" });
    const events = await drain(agent.run("count"));
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({ output: "a.txt: 3 words", is_error: false });
    // shown in this turn, with its call: not a host notice, which every session of a server would get at its next turn
    const shown = events.findIndex((e) => e.type === "notice" && e.text === "counted: a.txt: 3 words");
    expect(shown).toBeGreaterThan(events.findIndex((e) => e.type === "tool_start"));
    expect(host.notices).not.toContain("counted: a.txt: 3 words");
  });

  it("the provider plugin answers through the loop", async () => {
    const { host } = await hostWithExamples();
    const agent = await host.openAgent({ model: "echo/parrot" });
    const events = await drain(agent.run("hello"));
    const msg = events.find((e) => e.type === "assistant_message") as Extract<AgentEvent, { type: "assistant_message" }>;
    expect(msg.message.blocks).toEqual([{ type: "text", text: "olleh" }]);
    const usage = events.find((e) => e.type === "usage") as Extract<AgentEvent, { type: "usage" }>;
    expect(usage.usage.context_window).toBe(8192);
    expect(usage.usage.cost_usd).toBe(0);
  });

  it("the command plugin expands to a prompt", async () => {
    const { host } = await hostWithExamples();
    const agent = await host.openAgent({ model: "echo/parrot" });
    const printed: string[] = [];
    const cmd = host.commands.get("shout")!;
    expect(await cmd.run({ host, agent, args: "fix it now", print: (t) => printed.push(t) })).toEqual({ prompt: "FIX IT NOW!" });
    expect(await cmd.run({ host, agent, args: "", print: (t) => printed.push(t) })).toBeUndefined();
    expect(printed).toEqual(["usage: /shout <words>"]);
  });

  it("the hook plugin denies rm -rf even in yolo mode", async () => {
    const { host } = await hostWithExamples();
    const provider = new ScriptedProvider([
      { blocks: [call("t1", "bash", { command: "rm -rf build" }), call("t2", "bash", { command: "ls" })] },
      { blocks: [text("ok")] },
    ]);
    const agent = await host.openAgent({ provider, model: "s/x", mode: "yolo" });
    const events = await drain(agent.run("clean"));
    const ends = events.filter((e) => e.type === "tool_end") as Extract<AgentEvent, { type: "tool_end" }>[];
    expect(ends.map((e) => [e.input, e.is_error])).toEqual([
      [{ command: "rm -rf build" }, true],
      [{ command: "ls" }, false],
    ]);
    expect(ends[0]!.output).toContain("guard-hook: rm -rf is not allowed here");
  });

  it("the front-end plugin prints only the final answer", async () => {
    const { host } = await hostWithExamples();
    const writes: string[] = [];
    const orig = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((s: string) => (writes.push(String(s)), true)) as typeof process.stdout.write;
    try {
      const code = await host.frontends.get("answer")!.run(host, { values: { model: "echo/parrot" }, positionals: ["abc"] });
      expect(code).toBe(0);
    } finally {
      process.stdout.write = orig;
    }
    expect(writes.join("")).toBe("cba\n");
  });

  it("this repository's larik.config.ts is skipped until approved, then adds its plugin", async () => {
    const { env } = tempEnv();
    const before = await loadConfig(root, env);
    expect(before.plugins).toEqual([]);
    expect(before.notices.join("\n")).toMatch(/larik config approve/);
    await approveProjectConfig(root, env);
    const after = await loadConfig(root, env);
    expect(after.plugins.map((p) => p.name)).toEqual(["word-count"]);
    expect(after.settings.max_turns).toBe(100);
  });
});
