/**
 * Shell hooks driven through a real Host + Agent with the scripted provider: every event, every
 * exit-code and JSON path, a timeout, and a hook that leaves a child process running.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, definePlugin, Host, loadSettings, privateProjectFile, type Agent, type AgentEvent, type PermissionMode, type Settings } from "../../kernel/index.js";
import { ScriptedProvider, call, text } from "../../test/fakes/scripted-provider.js";
import hooksPlugin, { hooksHash } from "./index.js";
import { compileMatcher } from "./matcher.js";
import { combine, parseRun } from "./outcome.js";
import { parseHooksConfig } from "./config.js";

let dir: string;
let ran: string[];
const leftovers: number[] = [];

const toolsPlugin = definePlugin({
  name: "test-tools",
  setup(ctx) {
    ctx.tools.register(
      defineTool({
        name: "echo",
        description: "echoes text",
        input: z.object({ text: z.string() }),
        kind: "other",
        async run(i) {
          ran.push(i.text);
          return { content: `echo:${i.text}` };
        },
      }),
    );
  },
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "larik-hooks-"));
  mkdirSync(join(dir, "home"));
  ran = [];
});
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Writes an executable hook script and returns the command that runs it. */
function sh(name: string, body: string): string {
  const p = join(dir, `${name}.sh`);
  writeFileSync(p, `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  return `'${p}'`;
}
const hook = (command: string, matcher?: string, timeout?: number) => [{ matcher, hooks: [{ type: "command", command, timeout }] }];
const read = (name: string) => readFileSync(join(dir, name), "utf8");
const payload = (name: string) => JSON.parse(read(name)) as Record<string, unknown>;

async function open(settings: Settings, scripts: ConstructorParameters<typeof ScriptedProvider>[0], mode: PermissionMode = "yolo", label?: string) {
  const env = { ...process.env, HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "cfg") };
  const host = await Host.create({ plugins: [toolsPlugin, hooksPlugin], settings, cwd: dir, env });
  const provider = new ScriptedProvider(scripts);
  const agent = await host.openAgent({ provider, mode, label });
  return { host, agent, provider };
}

async function drain(agent: Agent, prompt = "hi", answer = { allow: false }): Promise<AgentEvent[]> {
  const evs: AgentEvent[] = [];
  for await (const ev of agent.run(prompt)) {
    evs.push(ev);
    if (ev.type === "permission_request") agent.respond(ev.request_id, answer);
  }
  return evs;
}
const stopReason = (evs: AgentEvent[]) => (evs.find((e) => e.type === "done") as { stop_reason: string }).stop_reason;
const toolOutput = (evs: AgentEvent[]) => (evs.find((e) => e.type === "tool_end") as { output: string } | undefined)?.output;
/** Notice texts shown during a turn (hook payload `notice`) or at start-up (`host.notices`). */
const shown = (evs: AgentEvent[], host: { notices: string[] }) => [
  ...host.notices,
  ...evs.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text),
];
const firstUserText = (p: ScriptedProvider) => p.requests[0]!.messages[0]!.blocks.map((b) => (b.type === "text" ? b.text : "")).join("\n");

/** True while `pid` exists and is not a zombie (Linux /proc). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!cond()) throw new Error(`gave up waiting for ${what}`);
}

describe("matchers and config", () => {
  it("matches anchored, case-insensitive regexes, * and empty; invalid regex compares literally", () => {
    expect(compileMatcher(undefined)("anything")).toBe(true);
    expect(compileMatcher("*")("x")).toBe(true);
    expect(compileMatcher("")("x")).toBe(true);
    expect(compileMatcher("Bash")("bash")).toBe(true);
    expect(compileMatcher("bash")("bash_output")).toBe(false);
    expect(compileMatcher("Edit|Write")("write")).toBe(true);
    expect(compileMatcher("mcp__.*")("mcp__fs__read")).toBe(true);
    expect(compileMatcher("a(b")("A(B")).toBe(true);
    expect(compileMatcher("a(b")("ab")).toBe(false);
  });

  it("reports bad entries one line each and keeps the good ones", () => {
    const { config, problems } = parseHooksConfig({
      PreToolUse: [{ matcher: "echo", hooks: [{ type: "command", command: "true" }, { type: "command" }, { type: "command", command: "x", timeout: -1 }] }],
      Bogus: [],
      Stop: "nope",
      PostToolUse: [{ hooks: [{ type: "prompt", prompt: "is it ok?" }] }],
    });
    expect(config.PreToolUse).toEqual([{ matcher: "echo", hooks: [{ type: "command", command: "true", timeout: undefined }] }]);
    expect(config.PostToolUse).toBeUndefined();
    expect(problems).toHaveLength(5);
    expect(problems.join("\n")).toContain("hooks.PreToolUse[0].hooks[1].command must be a non-empty shell command");
    expect(problems.join("\n")).toContain("hooks.Bogus: unknown hook event");
    expect(problems.join("\n")).toContain("prompt hooks are not supported yet");
  });

  it("combines parallel outcomes: any block, deny > ask > allow, last updatedInput, concatenation", () => {
    const c = combine([
      { permission: "allow", permissionReason: "fine", updatedInput: { a: 1 }, context: ["c1"], messages: ["m1"] },
      { permission: "ask", permissionReason: "hmm", updatedInput: { a: 2 }, context: ["c2"], messages: [] },
      { block: "b1", context: [], messages: ["m2"] },
    ]);
    expect(c).toMatchObject({ permission: "ask", permissionReason: "hmm", updatedInput: { a: 2 }, block: "b1", context: ["c1", "c2"], messages: ["m1", "m2"] });
    expect(combine([{ permission: "ask", context: [], messages: [] }, { permission: "deny", permissionReason: "no", context: [], messages: [] }]).permission).toBe("deny");
  });

  it("reads plain stdout as context only for UserPromptSubmit and SessionStart", () => {
    const run = { command: "x", code: 0, stdout: "plain\n", stderr: "", timedOut: false };
    expect(parseRun("UserPromptSubmit", run, 60).context).toEqual(["plain"]);
    expect(parseRun("SessionStart", run, 60).context).toEqual(["plain"]);
    expect(parseRun("PostToolUse", run, 60).context).toEqual([]);
    expect(parseRun("Stop", run, 60).context).toEqual([]);
  });

  it("pins the approval hash to the content with events in any order", () => {
    const a = { Stop: hook("a"), PreToolUse: hook("b", "echo") };
    const b = { PreToolUse: hook("b", "echo"), Stop: hook("a") };
    expect(hooksHash(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(hooksHash(a)).toBe(hooksHash(b));
    expect(hooksHash(a)).not.toBe(hooksHash({ ...a, Stop: hook("a2") }));
  });
});

describe("SessionStart", () => {
  it("sends the stdin payload and env, adds plain stdout as context, honours the source matcher", async () => {
    const start = sh("start", `cat > "${dir}/start.json"; echo "$LARIK_PROJECT_DIR|$CLAUDE_PROJECT_DIR|$PWD" > "${dir}/env.txt"; echo "project uses pnpm"`);
    const resume = sh("resume", `echo resumed > "${dir}/resume.txt"`);
    const { agent, provider, host } = await open(
      { hooks: { SessionStart: [...hook(start, "startup|clear"), ...hook(resume, "resume")] } },
      [{ blocks: [text("ok")] }, { blocks: [text("ok")] }],
    );
    expect(stopReason(await drain(agent))).toBe("end_turn");
    const p = payload("start.json");
    expect(p).toMatchObject({ hook_event_name: "SessionStart", source: "startup", cwd: host.cwd, permission_mode: "yolo", session_id: agent.session.id });
    expect(p.transcript_path).toBe(agent.session.location);
    expect(read("env.txt").trim()).toBe(`${host.projectRoot}|${host.projectRoot}|${host.cwd}`);
    expect(firstUserText(provider)).toContain('<hook-context source="SessionStart">project uses pnpm</hook-context>');
    expect(existsSync(join(dir, "resume.txt"))).toBe(false);

    agent.clear();
    await drain(agent);
    expect(payload("start.json").source).toBe("clear");
    expect(existsSync(join(dir, "resume.txt"))).toBe(false);
  });

  it("takes hookSpecificOutput.additionalContext and shows systemMessage; exit 2 cannot block it", async () => {
    const a = sh("a", `echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"from json"},"systemMessage":"hello user"}'`);
    const b = sh("b", `echo "nope" >&2; exit 2`);
    const { agent, provider, host } = await open({ hooks: { SessionStart: [{ hooks: [{ type: "command", command: a }, { type: "command", command: b }] }] } }, [
      { blocks: [text("ok")] },
    ]);
    const evs = await drain(agent);
    expect(stopReason(evs)).toBe("end_turn");
    expect(firstUserText(provider)).toContain('<hook-context source="SessionStart">from json</hook-context>');
    expect(shown(evs, host)).toContain("hello user");
    expect(shown(evs, host).some((n) => n.includes("exited with 2 (this event cannot block): nope"))).toBe(true);
  });
});

describe("UserPromptSubmit", () => {
  it("adds plain stdout and additionalContext as context and gets the prompt on stdin", async () => {
    const a = sh("a", `cat > "${dir}/ups.json"; echo "plain context"`);
    const b = sh("b", `echo '{"additionalContext":"json context"}'`);
    const c = sh("c", `echo '{not json'`);
    const { agent, provider } = await open({ hooks: { UserPromptSubmit: [{ hooks: [a, b, c].map((command) => ({ type: "command", command })) }] } }, [
      { blocks: [text("ok")] },
    ]);
    await drain(agent, "do the thing");
    expect(payload("ups.json")).toMatchObject({ hook_event_name: "UserPromptSubmit", prompt: "do the thing" });
    const sent = firstUserText(provider);
    expect(sent).toContain('<hook-context source="UserPromptSubmit">plain context\njson context\n{not json</hook-context>');
  });

  it("exit 2 blocks the prompt with stderr as the reason", async () => {
    const a = sh("a", `echo "secrets are not allowed" >&2; exit 2`);
    const { agent, provider } = await open({ hooks: { UserPromptSubmit: hook(a) } }, []);
    const evs = await drain(agent);
    expect(stopReason(evs)).toBe("blocked");
    expect(evs.some((e) => e.type === "notice" && e.text.includes("secrets are not allowed"))).toBe(true);
    expect(provider.requests).toHaveLength(0);
  });

  it('decision "block" blocks and continue:false halts', async () => {
    const block = sh("block", `echo '{"decision":"block","reason":"not today"}'`);
    const r1 = await open({ hooks: { UserPromptSubmit: hook(block) } }, []);
    const e1 = await drain(r1.agent);
    expect(stopReason(e1)).toBe("blocked");
    expect(e1.some((e) => e.type === "notice" && e.text.includes("not today"))).toBe(true);

    const halt = sh("halt", `echo '{"continue":false,"stopReason":"maintenance window"}'`);
    const r2 = await open({ hooks: { UserPromptSubmit: hook(halt) } }, []);
    const e2 = await drain(r2.agent);
    expect(stopReason(e2)).toBe("hook_stopped");
    expect(e2.some((e) => e.type === "notice" && e.text.includes("maintenance window"))).toBe(true);
    expect(r2.provider.requests).toHaveLength(0);
  });

  it("other exit codes are non-blocking errors shown to the user; systemMessage is shown", async () => {
    const a = sh("a", `echo "disk full" >&2; exit 1`);
    const b = sh("b", `echo '{"systemMessage":"remember to lint"}'`);
    const { agent, host } = await open({ hooks: { UserPromptSubmit: [{ hooks: [a, b].map((command) => ({ type: "command", command })) }] } }, [
      { blocks: [text("ok")] },
    ]);
    const evs = await drain(agent);
    expect(stopReason(evs)).toBe("end_turn");
    expect(shown(evs, host).some((n) => n.includes("failed with exit code 1: disk full"))).toBe(true);
    expect(shown(evs, host)).toContain("remember to lint");
  });

  it("a hook that leaves a child process holding its stdout does not hold the agent", async () => {
    const a = sh("a", `sleep 300 & echo $! > "${dir}/bg.pid"; echo "background started"`);
    const { agent, provider } = await open({ hooks: { UserPromptSubmit: hook(a) } }, [{ blocks: [text("ok")] }]);
    const evs = await drain(agent);
    const pid = Number(read("bg.pid"));
    leftovers.push(pid);
    expect(stopReason(evs)).toBe("end_turn");
    expect(firstUserText(provider)).toContain("background started");
    // The leftover is still running: the agent went on without waiting for it.
    expect(alive(pid)).toBe(true);
  });

  it("a hook that runs past its timeout is killed with its process group and reported", async () => {
    const a = sh("a", `sleep 300 & echo $! > "${dir}/slow.pid"; wait`);
    const { agent, host } = await open({ hooks: { UserPromptSubmit: hook(a, undefined, 1) } }, [{ blocks: [text("ok")] }]);
    const evs = await drain(agent);
    expect(stopReason(evs)).toBe("end_turn");
    const pid = Number(read("slow.pid"));
    leftovers.push(pid);
    expect(shown(evs, host).some((n) => n.includes("timed out after 1 s"))).toBe(true);
    await until(() => !alive(pid), "the timed-out hook's child to die");
  });
});

describe("PreToolUse", () => {
  const useEcho = (t = "hello") => ({ blocks: [call("t1", "echo", { text: t })] });

  it("matches on the tool name, sends tool_name/tool_input/tool_use_id, exit 2 denies with stderr", async () => {
    const a = sh("a", `cat > "${dir}/pre.json"; echo "echo is forbidden" >&2; exit 2`);
    const other = sh("other", `echo ran > "${dir}/other.txt"`);
    const { agent } = await open({ hooks: { PreToolUse: [...hook(a, "ECHO"), ...hook(other, "bash")] } }, [useEcho(), { blocks: [text("done")] }]);
    const evs = await drain(agent);
    expect(payload("pre.json")).toMatchObject({ hook_event_name: "PreToolUse", tool_name: "echo", tool_input: { text: "hello" }, tool_use_id: "t1" });
    expect(toolOutput(evs)).toContain("echo is forbidden");
    expect(ran).toEqual([]);
    expect(existsSync(join(dir, "other.txt"))).toBe(false);
  });

  it('permissionDecision deny and decision "block" deny the call', async () => {
    for (const out of [
      `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy 7"}}`,
      `{"decision":"block","reason":"policy 7"}`,
    ]) {
      ran = [];
      const a = sh("a", `echo '${out}'`);
      const { agent } = await open({ hooks: { PreToolUse: hook(a) } }, [useEcho(), { blocks: [text("done")] }]);
      const evs = await drain(agent);
      expect(toolOutput(evs)).toContain("policy 7");
      expect(ran).toEqual([]);
    }
  });

  it("updatedInput rewrites the call (the last hook's wins) and additionalContext rides on the result", async () => {
    const a = sh("a", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"text":"first"}}}'`);
    const b = sh("b", `sleep 0.2; echo '{"updatedInput":{"text":"rewritten"},"hookSpecificOutput":{"additionalContext":"note from pre"}}'`);
    const { agent } = await open({ hooks: { PreToolUse: [{ hooks: [a, b].map((command) => ({ type: "command", command })) }] } }, [
      useEcho(),
      { blocks: [text("done")] },
    ]);
    const evs = await drain(agent);
    expect(ran).toEqual(["rewritten"]);
    expect(toolOutput(evs)).toContain('echo:rewritten\n\n<hook-context source="PreToolUse">note from pre</hook-context>');
  });

  it("continue:false denies the call and halts the turn", async () => {
    const a = sh("a", `echo '{"continue":false,"stopReason":"budget reached"}'`);
    const { agent, provider } = await open({ hooks: { PreToolUse: hook(a) } }, [useEcho()]);
    const evs = await drain(agent);
    expect(stopReason(evs)).toBe("hook_stopped");
    expect(ran).toEqual([]);
    expect(provider.requests).toHaveLength(1);
  });

  it("a failing hook (exit 1) does not block the call", async () => {
    const a = sh("a", `exit 1`);
    const { agent, host } = await open({ hooks: { PreToolUse: hook(a) } }, [useEcho(), { blocks: [text("done")] }]);
    const evs = await drain(agent);
    expect(ran).toEqual(["hello"]);
    expect(shown(evs, host).some((n) => n.includes("failed with exit code 1"))).toBe(true);
  });

  it("returns allow, ask and legacy approve to the kernel, and deny wins over allow", async () => {
    const allow = sh("allow", `echo '{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"trusted"}}'`);
    const ask = sh("ask", `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`);
    const approve = sh("approve", `echo '{"decision":"approve","reason":"legacy ok"}'`);
    const deny = sh("deny", `exit 2`);
    const decide = async (commands: string[]) => {
      const { host, agent } = await open({ hooks: { PreToolUse: [{ hooks: commands.map((command) => ({ type: "command", command })) }] } }, []);
      return host.hooks.preToolUse.promise({ agent, tool: host.tools.get("echo")!, tool_use_id: "x", input: { text: "a" }, halt: () => {}, notice: () => {} });
    };
    expect(await decide([allow])).toEqual({ decision: "allow", reason: "trusted" });
    expect(await decide([approve])).toEqual({ decision: "allow", reason: "legacy ok" });
    expect(await decide([allow, ask])).toEqual({ decision: "ask", reason: undefined });
    expect((await decide([allow, deny]))?.decision).toBe("deny");
  });
});

describe("PostToolUse", () => {
  it("gets tool_response; decision block and additionalContext reach the model with the result", async () => {
    const a = sh("a", `cat > "${dir}/post.json"; echo '{"decision":"block","reason":"lint failed","hookSpecificOutput":{"additionalContext":"3 warnings"}}'`);
    const { agent, provider } = await open({ hooks: { PostToolUse: hook(a, "echo") } }, [
      { blocks: [call("t1", "echo", { text: "x" })] },
      { blocks: [text("done")] },
    ]);
    const evs = await drain(agent);
    expect(payload("post.json")).toMatchObject({ hook_event_name: "PostToolUse", tool_name: "echo", tool_response: { output: "echo:x", is_error: false } });
    const out = toolOutput(evs)!;
    expect(out).toContain('<hook-feedback source="PostToolUse">lint failed</hook-feedback>');
    expect(out).toContain('<hook-context source="PostToolUse">3 warnings</hook-context>');
    const sent = JSON.stringify(provider.requests[1]!.messages);
    expect(sent).toContain("lint failed");
  });

  it("exit 2 sends stderr as feedback; plain stdout is not context; continue:false halts", async () => {
    const a = sh("a", `echo "ignored stdout"; echo "type errors" >&2; exit 2`);
    const r1 = await open({ hooks: { PostToolUse: hook(a) } }, [{ blocks: [call("t1", "echo", { text: "x" })] }, { blocks: [text("done")] }]);
    const out = toolOutput(await drain(r1.agent))!;
    expect(out).toContain('<hook-feedback source="PostToolUse">type errors</hook-feedback>');
    expect(out).not.toContain("ignored stdout");

    const b = sh("b", `echo '{"continue":false,"stopReason":"enough"}'`);
    const r2 = await open({ hooks: { PostToolUse: hook(b) } }, [{ blocks: [call("t1", "echo", { text: "x" })] }]);
    const evs = await drain(r2.agent);
    expect(stopReason(evs)).toBe("hook_stopped");
    expect(evs.some((e) => e.type === "notice" && e.text.includes("enough"))).toBe(true);
  });
});

describe("Stop and SubagentStop", () => {
  it("exit 2 sends the agent back with stderr, with stop_hook_active set the second time", async () => {
    const a = sh("a", `cat >> "${dir}/stop.jsonl"; echo >> "${dir}/stop.jsonl"; if [ -e "${dir}/once" ]; then exit 0; fi; touch "${dir}/once"; echo "tests fail" >&2; exit 2`);
    const { agent, provider } = await open({ hooks: { Stop: hook(a) } }, [{ blocks: [text("done")] }, { blocks: [text("fixed")] }]);
    expect(stopReason(await drain(agent))).toBe("end_turn");
    const lines = read("stop.jsonl").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(lines.map((l) => l.stop_hook_active)).toEqual([false, true]);
    expect(lines[0].hook_event_name).toBe("Stop");
    expect(JSON.stringify(provider.requests[1]!.messages)).toContain('<hook-feedback source=\\"Stop\\">tests fail</hook-feedback>');
  });

  it('decision "block" continues; continue:false halts', async () => {
    const a = sh("a", `if [ -e "${dir}/once" ]; then exit 0; fi; touch "${dir}/once"; echo '{"decision":"block","reason":"also update docs"}'`);
    const r1 = await open({ hooks: { Stop: hook(a) } }, [{ blocks: [text("done")] }, { blocks: [text("docs done")] }]);
    expect(stopReason(await drain(r1.agent))).toBe("end_turn");
    expect(JSON.stringify(r1.provider.requests[1]!.messages)).toContain("also update docs");

    const b = sh("b", `echo '{"continue":false,"stopReason":"halted"}'`);
    const r2 = await open({ hooks: { Stop: hook(b) } }, [{ blocks: [text("done")] }]);
    expect(stopReason(await drain(r2.agent))).toBe("hook_stopped");
  });

  it("a Stop hook that always blocks sends the agent back at most 5 times, then the turn ends", async () => {
    const a = sh("always", `cat > /dev/null; echo x >> "${dir}/always.log"; echo "not yet" >&2; exit 2`);
    const replies = Array.from({ length: 7 }, (_, i) => ({ blocks: [text(`try ${i}`)] }));
    const { agent, provider } = await open({ hooks: { Stop: hook(a) } }, replies);
    expect(stopReason(await drain(agent))).toBe("end_turn");
    expect(provider.requests).toHaveLength(6);
    expect(read("always.log").trim().split("\n")).toHaveLength(6);
  });

  it("SubagentStop fires for a labelled agent with agent_type, Stop does not", async () => {
    const sub = sh("sub", `cat > "${dir}/sub.json"`);
    const stop = sh("stop", `echo ran > "${dir}/stop.txt"`);
    const { agent } = await open({ hooks: { SubagentStop: hook(sub), Stop: hook(stop) } }, [{ blocks: [text("done")] }], "yolo", "explorer");
    expect(stopReason(await drain(agent))).toBe("end_turn");
    expect(payload("sub.json")).toMatchObject({ hook_event_name: "SubagentStop", agent_type: "explorer", stop_hook_active: false });
    expect(existsSync(join(dir, "stop.txt"))).toBe(false);
  });
});

describe("PreCompact, Notification, SessionEnd", () => {
  it("PreCompact matches manual|auto (an overflow counts as auto) and observes only", async () => {
    const auto = sh("auto", `cat > "${dir}/auto.json"; exit 2`);
    const manual = sh("manual", `cat > "${dir}/manual.json"`);
    const { host, agent } = await open({ hooks: { PreCompact: [...hook(auto, "auto"), ...hook(manual, "manual")] } }, []);
    await host.hooks.preCompact.promise({ agent, trigger: "overflow", notice: () => {} });
    expect(payload("auto.json")).toMatchObject({ hook_event_name: "PreCompact", trigger: "auto" });
    expect(existsSync(join(dir, "manual.json"))).toBe(false);
    await host.hooks.preCompact.promise({ agent, trigger: "manual", notice: () => {} });
    expect(payload("manual.json").trigger).toBe("manual");
  });

  it("Notification runs on a permission prompt; SessionEnd runs on close with the reason", async () => {
    const note = sh("note", `cat > "${dir}/note.json"`);
    const end = sh("end", `cat > "${dir}/end.json"`);
    const { agent } = await open(
      { hooks: { Notification: hook(note, "permission_prompt"), SessionEnd: hook(end) } },
      [{ blocks: [call("t1", "echo", { text: "x" })] }, { blocks: [text("ok")] }],
      "default",
    );
    const evs = await drain(agent);
    expect(evs.some((e) => e.type === "permission_request")).toBe(true);
    await agent.close("exit");
    expect(payload("note.json")).toMatchObject({ hook_event_name: "Notification", message: "Larik needs your permission to use echo", permission_mode: "default" });
    expect(payload("end.json")).toMatchObject({ hook_event_name: "SessionEnd", reason: "exit" });
  });
});

describe("trust of shared project hooks", () => {
  it("unapproved shared hooks do not run and leave one start-up notice; approved ones run", async () => {
    const shared = { UserPromptSubmit: hook(sh("s", `echo "shared ran"`)) };
    const r1 = await open({ shared_hooks: shared }, [{ blocks: [text("ok")] }]);
    await drain(r1.agent);
    expect(firstUserText(r1.provider)).not.toContain("shared ran");
    expect(r1.host.notices.filter((n) => n.includes("/hooks approve"))).toHaveLength(1);

    const r2 = await open({ shared_hooks: shared, approved_project_hooks: hooksHash(shared) }, [{ blocks: [text("ok")] }]);
    await drain(r2.agent);
    expect(firstUserText(r2.provider)).toContain("shared ran");
    expect(r2.host.notices.some((n) => n.includes("/hooks approve"))).toBe(false);

    const edited = { UserPromptSubmit: hook(sh("s2", `echo "edited ran"`)) };
    const r3 = await open({ shared_hooks: edited, approved_project_hooks: hooksHash(shared) }, [{ blocks: [text("ok")] }]);
    await drain(r3.agent);
    expect(firstUserText(r3.provider)).not.toContain("edited ran");
    expect(r3.host.notices.some((n) => n.includes("changed since they were approved"))).toBe(true);
  });

  it("end to end: hooks in .larik/settings.json wait for /hooks approve, which is saved and survives a restart", async () => {
    mkdirSync(join(dir, ".larik"));
    const shared = { UserPromptSubmit: hook(sh("s", `echo "shared ran"`)) };
    writeFileSync(join(dir, ".larik/settings.json"), JSON.stringify({ hooks: shared }));
    const env = { ...process.env, HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "cfg") };
    const start = async () => {
      const { settings } = await loadSettings(dir, env);
      const host = await Host.create({ plugins: [hooksPlugin], settings, cwd: dir, env });
      const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
      const agent = await host.openAgent({ provider, mode: "yolo" });
      return { host, agent, provider };
    };
    const a = await start();
    expect(a.host.notices.some((n) => n.includes("/hooks approve"))).toBe(true);
    await a.host.commands.get("hooks")!.run({ host: a.host, agent: a.agent, args: "approve", print: () => {} });
    const saved = JSON.parse(readFileSync(privateProjectFile(dir, env), "utf8")) as Record<string, unknown>;
    expect(saved.approved_project_hooks).toMatch(/^[0-9a-f]{16}$/);

    const b = await start();
    expect(b.host.notices.some((n) => n.includes("/hooks approve"))).toBe(false);
    await drain(b.agent);
    expect(firstUserText(b.provider)).toContain("shared ran");

    // Editing the shared hooks drops the approval.
    writeFileSync(join(dir, ".larik/settings.json"), JSON.stringify({ hooks: { UserPromptSubmit: hook(sh("s3", `echo "edited"`)) } }));
    const c = await start();
    await drain(c.agent);
    expect(firstUserText(c.provider)).not.toContain("edited");
    expect(c.host.notices.some((n) => n.includes("changed since they were approved"))).toBe(true);
  });

  it("/hooks lists and /hooks approve turns the shared hooks on", async () => {
    const shared = { UserPromptSubmit: hook(sh("s", `echo "shared ran"`)) };
    const { host, agent, provider } = await open({ hooks: { Stop: hook("true") }, shared_hooks: shared }, [{ blocks: [text("ok")] }]);
    const cmd = host.commands.get("hooks")!;
    expect(cmd.args).toBe("[approve]");
    const lines: string[] = [];
    await cmd.run({ host, agent, args: "", print: (t) => lines.push(t) });
    expect(lines.join("\n")).toMatch(/personal hooks:\n {2}Stop: true/);
    expect(lines.join("\n")).toContain("NOT approved");
    lines.length = 0;
    await cmd.run({ host, agent, args: "approve", print: (t) => lines.push(t) });
    expect(lines[0]).toMatch(/approved/);
    await drain(agent);
    expect(firstUserText(provider)).toContain("shared ran");
  });
});
