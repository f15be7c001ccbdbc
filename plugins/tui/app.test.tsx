/**
 * Component tests of the TUI: the App rendered by ink-testing-library, driven by keys on stdin,
 * over a real Host, a real Agent and the scripted provider, with real files in temp dirs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { isPrompt, typedPrompt, type Agent, type AgentEvent, type Command } from "../../kernel/index.js";
import { call, text } from "../../test/fakes/scripted-provider.js";
import { historyFile } from "./history.js";
import { loadMarkdown } from "./markdown.js";
import { commandsPlugin, GatedProvider, KEY, rig, waitFor, type Rig } from "./test-kit.js";

let current: Rig | undefined;
beforeAll(() => loadMarkdown());
afterEach(() => {
  current?.unmount();
  current = undefined;
});

async function make(opts: Parameters<typeof rig>[0]): Promise<Rig> {
  current = await rig(opts);
  return current;
}

function cmd(name: string, description: string, extra: Partial<Command> = {}): Command {
  return { name, description, run: vi.fn(async () => {}), ...extra };
}

describe("conversation", () => {
  it("shows a streaming reply in the live region, then prints the final text once", async () => {
    const provider = new GatedProvider("Hello **wor", "ld**.\n\nSecond paragraph here.");
    const r = await make({ provider });
    await r.type("hi");
    await r.press(KEY.enter);
    // unfinished Markdown shows as typed until the paragraph completes
    await r.until("Hello **wor");
    // mid-stream: the turn is live and the rest has not arrived
    expect(r.screen()).toContain("esc to interrupt");
    expect(r.screen()).not.toContain("Second paragraph");
    provider.release();
    await r.until("Second paragraph here.");
    await r.controller.idle();
    await r.until(/Hello world\./);
    const screen = r.screen();
    expect(screen.match(/Hello world/g)).toHaveLength(1);
    expect(screen).not.toContain("esc to interrupt");
    expect(screen).toContain("hi");
  });

  it("says once that a turn stopped at max_turns, as an error", async () => {
    const r = await make({
      settings: { max_turns: 1 },
      scripts: [{ blocks: [call("t1", "read", { path: "notes.txt" })] }],
      setupDir: (d) => writeFileSync(join(d, "notes.txt"), "hello\n"),
    });
    await r.type("read notes");
    await r.press(KEY.enter);
    await r.controller.idle();
    await r.until("max_turns");
    expect(r.screen().match(/stopped after 1 model rounds \(max_turns\)/g)).toHaveLength(1);
  });

  it("renders Markdown with code blocks and lists", async () => {
    const r = await make({ scripts: [{ blocks: [text("# Title\n\nSome `code` and:\n\n```js\nconst x = 1;\n```\n\n- one\n- two\n")] }] });
    await r.type("md");
    await r.press(KEY.enter);
    await r.until("const x = 1;");
    await r.controller.idle();
    const s = r.screen();
    expect(s).toContain("Title");
    expect(s).not.toContain("```");
    expect(s).toMatch(/\* one/);
  });

  it("shows tool rows with a compact input summary and the result", async () => {
    const r = await make({
      scripts: [{ blocks: [text("Reading."), call("t1", "read", { path: "notes.txt" })] }, { blocks: [text("It says hello.")] }],
      setupDir: (d) => writeFileSync(join(d, "notes.txt"), "hello\nworld\n"),
    });
    await r.type("read notes");
    await r.press(KEY.enter);
    await r.until("It says hello.");
    const s = r.screen();
    expect(s).toMatch(/● read notes\.txt/);
    expect(s).toMatch(/⎿ .*hello/);
  });

  it("shows why a failed call stopped, as larik -p's ✗ line does, not the first line of its output", async () => {
    const r = await make({});
    const output = "> build\ncompiling 1 of 300\n[timed out after 5 s; the command and its child processes were killed]";
    r.controller.onEvent({ type: "tool_start", tool_id: "t1", tool_name: "bash", input: { command: "npm run build" } } as AgentEvent);
    r.controller.onEvent({ type: "tool_end", tool_id: "t1", tool_name: "bash", input: { command: "npm run build" }, output, is_error: true } as AgentEvent);
    await r.until("⎿ [timed out after 5 s");
    expect(r.screen()).toMatch(/✗ bash npm run build/);
    expect(r.screen()).not.toContain("⎿ > build");
  });

  it("a refused call's row: no {} for arguments cut short, the reason in user words; one more line is (+1 line)", async () => {
    const r = await make({});
    const refusal = 'INVALID_JSON: the arguments of read were not complete JSON ({"path": "a.t). Resend the call with the complete JSON arguments.';
    r.controller.onEvent({ type: "tool_start", tool_id: "t1", tool_name: "read", input: {}, refused: true } as AgentEvent);
    r.controller.onEvent({ type: "tool_end", tool_id: "t1", tool_name: "read", input: {}, output: refusal, is_error: true } as AgentEvent);
    r.controller.onEvent({ type: "tool_start", tool_id: "t2", tool_name: "glob", input: { pattern: "*.js" } } as AgentEvent);
    r.controller.onEvent({ type: "tool_end", tool_id: "t2", tool_name: "glob", input: { pattern: "*.js" }, output: "a.js\nb.js", is_error: false } as AgentEvent);
    await r.until("(+1 line)");
    const s = r.screen();
    expect(s).toMatch(/✗ read\s*\n\s*⎿ arguments not complete JSON: \{"path": "a\.t/);
    expect(s).not.toContain("{}");
    expect(s).not.toContain("Resend");
    expect(s).toMatch(/⎿ a\.js {2}\(\+1 line\)/);
  });

  it("shows edit and write results as a coloured diff", async () => {
    const r = await make({
      mode: "yolo",
      scripts: [
        { blocks: [call("t1", "read", { path: "sum.js" })] },
        { blocks: [call("t2", "edit", { path: "sum.js", old_string: "a - b", new_string: "a + b" })] },
        { blocks: [text("Fixed.")] },
      ],
      setupDir: (d) => writeFileSync(join(d, "sum.js"), "export const sum = (a, b) => a - b;\n"),
    });
    await r.type("fix it");
    await r.press(KEY.enter);
    await r.until("Fixed.");
    const s = r.screen();
    expect(s).toMatch(/● edit sum\.js/);
    expect(s).toContain("updated sum.js (+1 −1)");
    expect(s).toContain("-export const sum = (a, b) => a - b;");
    expect(s).toContain("+export const sum = (a, b) => a + b;");
  });

  it("collapses thinking to 'Thought for Ns' and ctrl+o prints it in full", async () => {
    const r = await make({
      scripts: [{ blocks: [{ type: "thinking", text: "secret plan: add numbers", duration_ms: 3000 }, text("Answer.")] }],
    });
    await r.type("think");
    await r.press(KEY.enter);
    await r.until("Answer.");
    expect(r.screen()).toContain("Thought for 3s");
    expect(r.screen()).not.toContain("secret plan");
    await r.press(KEY.ctrlO);
    await r.until("secret plan: add numbers");
  });

  it("prints the final todo list when the turn ends", async () => {
    const todos = [
      { content: "Write the test", status: "completed" },
      { content: "Fix the bug", status: "in_progress", active_form: "Fixing the bug" },
      { content: "Run the suite", status: "pending" },
    ];
    const r = await make({ scripts: [{ blocks: [call("t1", "todo_write", { todos })] }, { blocks: [text("Planned.")] }] });
    await r.type("plan");
    await r.press(KEY.enter);
    await r.until("Planned.");
    await r.controller.idle();
    await r.until("Todos");
    const s = r.screen();
    expect(s).toContain("☑ Write the test");
    expect(s).toContain("◐ Fixing the bug");
    expect(s).toContain("☐ Run the suite");
  });

  it("styles notices and errors and labels subagent rows", async () => {
    const r = await make({});
    const events: AgentEvent[] = [
      { type: "notice", text: "a plain notice" },
      { type: "error", text: "something broke" },
      { type: "tool_start", tool_id: "s1", tool_name: "grep", input: { pattern: "TODO" }, agent: "explore" },
      { type: "tool_end", tool_id: "s1", tool_name: "grep", input: { pattern: "TODO" }, output: "3 matches", is_error: false, agent: "explore" },
    ];
    for (const e of events) r.controller.onEvent(e);
    await r.until("3 matches");
    const s = r.screen();
    expect(s).toContain("! a plain notice");
    expect(s).toContain("error: something broke");
    expect(s).toContain("↳ [explore] ● grep TODO");
  });

  it("replays the history of a resumed session", async () => {
    const r = await make({ scripts: [{ blocks: [text("first answer")] }] });
    await r.type("first question");
    await r.press(KEY.enter);
    await r.until("first answer");
    await r.controller.idle();
    const { TuiController } = await import("./controller.js");
    const again = new TuiController(r.host, r.controller.agent, { tickMs: 0 });
    const kinds = again.snapshot().items.map((i) => i.kind);
    expect(kinds).toEqual(["banner", "user", "assistant"]);
  });

  it("replays a prompt a command made as the command line typed, as it showed live", async () => {
    const collected = "Review the code changes that Larik collected below.\n+a changed line";
    const r = await make({
      scripts: [{ blocks: [text("looks fine")] }, { blocks: [text("plain answer")] }],
      plugins: [commandsPlugin([cmd("review", "Review changes", { run: async () => ({ prompt: collected, mentions: false }) })])],
    });
    await r.controller.submit("/review main..HEAD");
    await r.controller.idle();
    await r.controller.submit("and the tests?");
    await r.controller.idle();
    const shown = (c: { snapshot(): { items: readonly unknown[] } }) =>
      c.snapshot().items.flatMap((i) => {
        const it = i as { kind: string; text?: string };
        return it.kind === "user" || it.kind === "command" ? [`${it.kind}: ${it.text}`] : [];
      });
    await waitFor(() => shown(r.controller).length === 2, "the two prompt rows");
    expect(shown(r.controller)).toEqual(["command: /review main..HEAD", "user: and the tests?"]);
    // resumed: the same rows, not the review prompt (a whole diff) the model got
    const { TuiController } = await import("./controller.js");
    const again = new TuiController(r.host, r.controller.agent, { tickMs: 0 });
    expect(again.snapshot().items.map((i) => i.kind)).toEqual(["banner", "command", "assistant", "user", "assistant"]);
    expect(shown(again)).toEqual(["command: /review main..HEAD", "user: and the tests?"]);
  });
});

describe("permission prompt", () => {
  function editScripts() {
    return [
      { blocks: [call("t1", "read", { path: "a.txt" })] },
      { blocks: [call("t2", "edit", { path: "a.txt", old_string: "one", new_string: "two" })] },
      { blocks: [text("Edited.")] },
    ];
  }

  it("shows the tool and a diff preview; y allows, calling agent.respond exactly once", async () => {
    const r = await make({ scripts: editScripts(), setupDir: (d) => writeFileSync(join(d, "a.txt"), "one\n") });
    const respond = vi.spyOn(r.controller.agent, "respond");
    await r.type("edit");
    await r.press(KEY.enter);
    await r.until("Allow edit?");
    await r.until("+two");
    const s = r.screen();
    expect(s).toContain("edit a.txt");
    expect(s).toContain("-one");
    expect(s).toMatch(/always allow edit/);
    // the checker's plain "edit needs approval" would only repeat the title
    expect(s).not.toContain("needs approval");
    await r.press("y");
    await r.until("Edited.");
    expect(respond).toHaveBeenCalledTimes(1);
    expect(respond.mock.calls[0]![1]).toEqual({ allow: true });
    expect(readFileSync(join(r.dir, "a.txt"), "utf8")).toBe("two\n");
    expect(r.screen()).not.toContain("Allow edit?");
  });

  it("a answers always with the suggested rule; the rule is then in force", async () => {
    const r = await make({ scripts: editScripts(), setupDir: (d) => writeFileSync(join(d, "a.txt"), "one\n") });
    const respond = vi.spyOn(r.controller.agent, "respond");
    await r.type("edit");
    await r.press(KEY.enter);
    await r.until("Allow edit?");
    await r.press("a");
    await r.until("Edited.");
    expect(respond).toHaveBeenCalledTimes(1);
    expect(respond.mock.calls[0]![1]).toEqual({ allow: true, always: true });
    expect(r.controller.agent.checker.allow.length).toBe(1);
    expect(r.screen()).toContain("always allowing");
  });

  it("n asks for a reason and denies with it", async () => {
    const r = await make({
      scripts: [{ blocks: [call("t1", "bash", { command: "rm -rf build" })] }, { blocks: [text("Understood.")] }],
    });
    const respond = vi.spyOn(r.controller.agent, "respond");
    await r.type("clean");
    await r.press(KEY.enter);
    await r.until("Allow bash?");
    expect(r.screen()).toContain("rm -rf build");
    await r.press("n");
    await r.until("Tell the model why");
    await r.type("keep the build");
    await r.press(KEY.enter);
    await r.until("Understood.");
    expect(respond).toHaveBeenCalledTimes(1);
    expect(respond.mock.calls[0]![1]).toEqual({ allow: false, reason: "keep the build" });
    expect(JSON.stringify(r.provider.requests[1]!.messages)).toContain("keep the build");
  });

  it("shows the checker's reason when it says more than the title", async () => {
    const r = await make({});
    const a = { respond: vi.fn() } as unknown as Agent;
    const reason = "bash needs approval: $( is never allowed by a rule pattern";
    r.controller.onEvent({ type: "permission_request", request_id: "p1", tool_id: "t1", tool_name: "bash", input: { command: "echo $(date)" }, cwd: r.dir, reason } as AgentEvent, a);
    await r.until("Allow bash?");
    await r.until("is never allowed by a rule pattern");
  });

  it("queues several requests labelled by agent and answers each exactly once", async () => {
    const r = await make({});
    const a = { respond: vi.fn() } as unknown as Agent;
    const b = { respond: vi.fn() } as unknown as Agent;
    const ask = (id: string, agent?: string) =>
      ({ type: "permission_request", request_id: id, tool_id: `t-${id}`, tool_name: "bash", input: { command: `echo ${id}` }, cwd: r.dir, agent }) as AgentEvent;
    r.controller.onEvent(ask("p1", "explore"), a);
    r.controller.onEvent(ask("p2"), b);
    await r.until("[explore] Allow bash?");
    expect(r.screen()).toContain("(1 of 2)");
    await r.press("y");
    await r.until("echo p2");
    expect(r.screen()).not.toContain("(1 of 2)");
    await r.press(KEY.esc);
    await waitFor(() => !r.screen().includes("Allow bash?"), "prompt to close");
    expect(a.respond).toHaveBeenCalledTimes(1);
    expect(a.respond).toHaveBeenCalledWith("p1", { allow: true });
    expect(b.respond).toHaveBeenCalledTimes(1);
    expect(b.respond).toHaveBeenCalledWith("p2", { allow: false });
  });
});

describe("palette", () => {
  const commands = () => [
    cmd("model", "Switch the model", { args: "[provider/model]" }),
    cmd("mode", "Switch the permission mode", { args: "[mode]" }),
    cmd("compact", "Summarize the context now"),
    cmd("cost", "Usage and cost"),
    cmd("copy", "Copy the last reply"),
    cmd("resume", "Resume a session", { args: "<id>" }),
    cmd("review", "Review changes", { section: "review" }),
  ];

  it("filters exact, then prefix, then substring", async () => {
    const r = await make({ plugins: [commandsPlugin(commands())] });
    await r.type("/mode");
    await r.until("/mode");
    const rows = r.screen().split("\n").filter((l) => /^[❯ ] \/\w/.test(l));
    expect(rows.map((l) => l.slice(2).split(/\s+/)[0])).toEqual(["/mode", "/model"]);
    await r.press(KEY.backspace, KEY.backspace, KEY.backspace, KEY.backspace);
    await r.type("cop");
    await r.until("/copy");
    // "/cop": copy is a prefix match; nothing else contains "cop"
    const rows2 = r.screen().split("\n").filter((l) => /^[❯ ] \/\w/.test(l));
    expect(rows2.map((l) => l.slice(2).split(/\s+/)[0])).toEqual(["/copy"]);
    // prefix matches come before matches inside a name
    await r.press(KEY.backspace, KEY.backspace, KEY.backspace);
    await r.type("re");
    await r.until("/resume");
    const rows3 = r.screen().split("\n").filter((l) => /^[❯ ] \/\w/.test(l));
    expect(rows3.map((l) => l.slice(2).split(/\s+/)[0])).toEqual(["/resume", "/review"]);
    await r.press(KEY.backspace, KEY.backspace);
    await r.type("st");
    await r.until("/cost");
    const rows4 = r.screen().split("\n").filter((l) => /^[❯ ] \/\w/.test(l));
    expect(rows4.map((l) => l.slice(2).split(/\s+/)[0])).toEqual(["/cost"]);
  });

  it("tab completes the selected command and enter runs it with the ui handle", async () => {
    const list = commands();
    const r = await make({ plugins: [commandsPlugin(list)] });
    await r.type("/comp");
    await r.until("/compact");
    await r.press(KEY.tab);
    await r.until("› /compact ");
    expect(r.controller.snapshot().input.text).toBe("/compact ");
    await r.press(KEY.enter);
    const compact = list.find((c) => c.name === "compact")!;
    await waitFor(() => (compact.run as ReturnType<typeof vi.fn>).mock.calls.length === 1, "/compact to run");
    const ctx = (compact.run as ReturnType<typeof vi.fn>).mock.calls[0]![0];
    expect(ctx.args).toBe("");
    expect(typeof ctx.ui.switchAgent).toBe("function");
    expect(typeof ctx.ui.setInput).toBe("function");
  });

  it("enter on a command with a required argument completes instead of running", async () => {
    const list = commands();
    const r = await make({ plugins: [commandsPlugin(list)] });
    await r.type("/resu");
    await r.until("/resume");
    await r.press(KEY.enter);
    expect(r.controller.snapshot().input.text).toBe("/resume ");
    expect(list.find((c) => c.name === "resume")!.run).not.toHaveBeenCalled();
  });

  it("a command's print shows as plain output (not a notice) and setInput fills the composer", async () => {
    const r = await make({
      plugins: [
        commandsPlugin([
          cmd("hello", "Say hello", {
            run: async (ctx) => {
              ctx.print("hello from a command");
              ctx.ui?.setInput?.("draft text");
            },
          }),
        ]),
      ],
    });
    await r.type("/hello");
    await r.press(KEY.enter);
    await r.until("hello from a command");
    expect(r.screen()).not.toContain("! hello from a command");
    expect(r.controller.snapshot().input.text).toBe("draft text");
  });

  it("/exit runs /quit as in Claude Code; a misspelt command gets the nearest name", async () => {
    const quit = cmd("quit", "Quit");
    const r = await make({ plugins: [commandsPlugin([...commands(), quit])] });
    await r.type("/exit");
    await r.press(KEY.enter);
    await waitFor(() => (quit.run as ReturnType<typeof vi.fn>).mock.calls.length === 1, "/quit to run");
    await r.type("/comapct");
    await r.press(KEY.enter);
    await r.until("unknown command /comapct: did you mean /compact?");
    await r.type("/zzzz");
    await r.press(KEY.enter);
    await r.until("unknown command /zzzz: type / to list them; a leading space sends the text as a prompt");
    // and so it is: a leading space makes the text a prompt
    await r.type(" /zzzz please");
    await r.press(KEY.enter);
    await r.until("┃  /zzzz please");
  });

  it("names a failing command once in its error, as larik -p does", async () => {
    const mode = cmd("mode", "Permission mode", {
      run: async () => {
        throw new Error("/mode bogus: use one of default, accept-edits, plan, yolo");
      },
    });
    const other = cmd("other", "Fails plainly", {
      run: async () => {
        throw new Error("no model is configured");
      },
    });
    const r = await make({ plugins: [commandsPlugin([mode, other])] });
    await r.type("/mode bogus");
    await r.press(KEY.enter);
    await r.until("use one of default");
    expect(r.screen()).toContain("error: /mode bogus: use one of default, accept-edits, plan, yolo");
    expect(r.screen()).not.toContain("/mode: /mode bogus");
    await r.type("/other");
    await r.press(KEY.enter);
    await r.until("/other: no model is configured");
  });

  it("refuses idle-only commands during a turn", async () => {
    const provider = new GatedProvider("working", " done");
    const clear = cmd("clear", "Fresh context", { idleOnly: true });
    const r = await make({ provider, plugins: [commandsPlugin([clear])] });
    await r.type("go");
    await r.press(KEY.enter);
    await r.until("working");
    await r.type("/clear");
    await r.press(KEY.enter);
    await r.until("cannot run while");
    expect(clear.run).not.toHaveBeenCalled();
    provider.release();
    await r.controller.idle();
  });
});

describe("composer", () => {
  it("queues prompts typed during a turn and runs them after it", async () => {
    const provider = new GatedProvider("first reply", " continues", ["second reply"]);
    const r = await make({ provider });
    await r.type("one");
    await r.press(KEY.enter);
    await r.until("first reply");
    await r.type("two");
    await r.press(KEY.enter);
    await r.until("queued: two");
    expect((provider as GatedProvider).requests).toHaveLength(1);
    provider.release();
    await r.until("second reply");
    await r.controller.idle();
    expect(provider.requests).toHaveLength(2);
    expect(r.screen()).not.toContain("queued: two");
  });

  it("esc interrupts a running turn", async () => {
    const provider = new GatedProvider("partial answer", " never");
    const r = await make({ provider });
    await r.type("go");
    await r.press(KEY.enter);
    await r.until("partial answer");
    await r.press(KEY.esc);
    await r.until("interrupted by user");
    await r.controller.idle();
    expect(r.screen()).not.toContain("never");
    // the partial reply's assistant_message repeats neither the text streamed nor, as text, the marker the notice says
    expect(r.screen().split("partial answer")).toHaveLength(2);
    expect(r.screen().split("interrupted by user")).toHaveLength(2);
    expect(r.screen()).not.toContain("[interrupted");
  });

  it("shift+enter, alt+enter and ctrl+j insert newlines; enter submits", async () => {
    const r = await make({ scripts: [{ blocks: [text("got it")] }] });
    await r.type("a");
    await r.press(KEY.altEnter);
    await r.type("b");
    await r.press(KEY.ctrlJ);
    await r.type("c");
    await r.press("\x1b[13;2u");
    await r.type("d");
    expect(r.controller.snapshot().input.text).toBe("a\nb\nc\nd");
    await r.press(KEY.enter);
    await r.until("got it");
    expect(JSON.stringify(r.provider.requests[0]!.messages[0]!.blocks)).toContain("a\\nb\\nc\\nd");
  });

  // typing faster than a frame, or a paste without bracketed paste, hands Ink "text\r" as one input
  it("keys that arrive in one chunk act as typed one by one: the prompt, a history search, a denial's reason", async () => {
    const r = await make({
      scripts: [{ blocks: [call("t1", "bash", { command: "rm -rf build" })] }, { blocks: [text("Understood.")] }],
    });
    r.history.entries.push("run the unit tests", "deploy to staging");
    // ctrl+r, a query and Enter
    await r.press("\x12deploy\r");
    expect(r.controller.snapshot().input.text).toBe("deploy to staging");
    await r.press(KEY.ctrlC);
    const respond = vi.spyOn(r.controller.agent, "respond");
    await r.press("clean\r");
    await r.until("Allow bash?");
    await r.press("n");
    await r.until("Tell the model why");
    await r.press("keep the build\r");
    await r.until("Understood.");
    expect(JSON.stringify(r.provider.requests[0]!.messages)).toContain("clean");
    expect(respond.mock.calls[0]![1]).toEqual({ allow: false, reason: "keep the build" });
  });

  /** A turn whose model asks to run `rm -rf build`, up to its permission prompt, with a clock to move. */
  async function bashPrompt(promptGuardMs = 0) {
    const clock = { now: 1_000_000 };
    const r = await make({
      scripts: [{ blocks: [call("t1", "bash", { command: "rm -rf build" })] }, { blocks: [text("Understood.")] }],
      controller: { promptGuardMs, now: () => clock.now },
    });
    const respond = vi.spyOn(r.controller.agent, "respond");
    await r.type("clean");
    await r.press(KEY.enter);
    await r.until("Allow bash?");
    return { r, respond, clock };
  }

  it("keys typed before a prompt could be read answer nothing: typing 'thank' as it pops up saves no rule", async () => {
    const { r, respond, clock } = await bashPrompt(500);
    // the rest of a sentence, typed one key at a time: `a` would have been "always allow"
    for (const k of ["t", "h", "a", "n", "k", KEY.enter]) await r.press(k);
    clock.now += 499;
    await r.press("y");
    expect(respond).not.toHaveBeenCalled();
    expect(r.controller.snapshot().input.text).toBe("");
    // esc denies at once all the same
    await r.press(KEY.esc);
    await r.until("Understood.");
    expect(respond.mock.calls).toHaveLength(1);
    expect(respond.mock.calls[0]![1]).toEqual({ allow: false });
  });

  it("once a prompt has been up half a second, its keys answer it", async () => {
    const { r, respond, clock } = await bashPrompt(500);
    clock.now += 500;
    await r.press("y");
    await r.until("Understood.");
    expect(respond.mock.calls[0]![1]).toEqual({ allow: true });
  });

  it("a chunk of keys never answers a permission prompt: n, a reason and Enter at once would have picked Yes", async () => {
    const { r, respond } = await bashPrompt();
    for (const chunk of ["nno thanks\r", "y\r", "a\r", "\r\r"]) await r.press(chunk);
    expect(respond).not.toHaveBeenCalled();
    expect(r.screen()).toContain("Allow bash?");
    await r.press("n");
    await r.until("Tell the model why");
    await r.press(KEY.enter);
    await r.until("Understood.");
    expect(respond.mock.calls).toHaveLength(1);
    expect(respond.mock.calls[0]![1]).toEqual({ allow: false, reason: undefined });
  });

  it("a bracketed paste keeps its newlines and does not submit", async () => {
    const r = await make({});
    await r.press(KEY.pasteStart, "line one\rline two\r", KEY.pasteEnd);
    expect(r.controller.snapshot().input.text).toBe("line one\nline two\n");
    expect(r.controller.snapshot().running).toBe(false);
  });

  it("up/down walk the history, which is saved per project (≤500)", async () => {
    const r = await make({ scripts: [{ blocks: [text("A")] }, { blocks: [text("B")] }] });
    await r.type("first prompt");
    await r.press(KEY.enter);
    await r.until("A");
    await r.controller.idle();
    await r.type("second prompt");
    await r.press(KEY.enter);
    await r.controller.idle();
    await r.press(KEY.up);
    expect(r.controller.snapshot().input.text).toBe("second prompt");
    await r.press(KEY.up);
    expect(r.controller.snapshot().input.text).toBe("first prompt");
    await r.press(KEY.down, KEY.down);
    expect(r.controller.snapshot().input.text).toBe("");
    await r.history.flush();
    const saved = readFileSync(historyFile(r.dir, r.env), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(saved).toEqual(["first prompt", "second prompt"]);
  });

  it("ctrl+r searches the history", async () => {
    const r = await make({});
    r.history.entries.push("run the unit tests", "deploy to staging", "run lint");
    await r.press(KEY.ctrlR);
    await r.until("history search:");
    await r.type("unit");
    await r.until("run the unit tests");
    await r.press(KEY.enter);
    expect(r.controller.snapshot().input.text).toBe("run the unit tests");
  });

  it("@ opens a gitignore-aware file picker; tab completes folders then files", async () => {
    const r = await make({
      setupDir: (d) => {
        mkdirSync(join(d, "src"));
        writeFileSync(join(d, "src", "main.ts"), "export {};\n");
        writeFileSync(join(d, "src", "secret.log"), "x\n");
        writeFileSync(join(d, ".gitignore"), "*.log\n");
      },
    });
    await r.type("look at @sr");
    await r.until("@src/");
    await r.press(KEY.tab);
    expect(r.controller.snapshot().input.text).toBe("look at @src/");
    await r.until("@src/main.ts");
    expect(r.screen()).not.toContain("secret.log");
    await r.press(KEY.tab);
    expect(r.controller.snapshot().input.text).toBe("look at @src/main.ts ");
  });

  it("attaches mentioned files to the prompt and counts them as read", async () => {
    const r = await make({
      scripts: [{ blocks: [text("seen")] }],
      setupDir: (d) => writeFileSync(join(d, "notes.md"), "alpha\nbeta\n"),
    });
    await r.type("summarize @notes.md please");
    await r.press(KEY.enter);
    await r.until("seen");
    await r.controller.idle();
    const blocks = r.provider.requests[0]!.messages[0]!.blocks as { text?: string; attachment?: string }[];
    const att = blocks.find((b) => b.attachment === "notes.md");
    expect(att?.text).toContain("alpha");
    expect(r.controller.agent.files.lastRead(join(r.dir, "notes.md"))).toBeGreaterThan(0);
  });

  it("a mention of a path where there is nothing is a notice (a typo shows); a word that is no path is not", async () => {
    const r = await make({ scripts: [{ blocks: [text("seen")] }] });
    await r.type("fix @src/missing.ts and see @Override");
    await r.press(KEY.enter);
    await r.until("seen");
    await r.controller.idle();
    const notices = r.controller.snapshot().items.flatMap((i) => (i.kind === "notice" ? [i.text] : []));
    expect(notices).toEqual(["@src/missing.ts not attached: there is no file or folder at src/missing.ts"]);
    expect(r.screen()).toContain("! @src/missing.ts not attached: there is no file or folder at src/missing.ts");
  });

  it("a command's prompt with mentions: false (a review's diff) attaches no file, now or queued", async () => {
    const data = "review this diff:\n+read @notes.md";
    const provider = new GatedProvider("first", " reply");
    const r = await make({
      provider,
      plugins: [commandsPlugin([cmd("data", "Send data", { run: async () => ({ prompt: data, mentions: false }) }), cmd("skill", "Send a prompt", { run: async () => ({ prompt: "see @notes.md" }) })])],
      setupDir: (d) => writeFileSync(join(d, "notes.md"), "secret-alpha\n"),
    });
    void r.controller.submit("/data");
    await waitFor(() => provider.requests.length === 1, "the first request");
    // queued while the first turn runs, then sent as it is
    await r.controller.submit("/data");
    await r.controller.submit("/skill");
    provider.release();
    await waitFor(() => provider.requests.length === 3, "the queued requests");
    await r.controller.idle();
    const last = (i: number) => JSON.stringify(provider.requests[i]!.messages.at(-1));
    expect(last(0)).toContain("+read @notes.md");
    expect(last(0)).not.toContain("secret-alpha");
    expect(last(1)).toContain("+read @notes.md");
    expect(last(1)).not.toContain("secret-alpha");
    // an ordinary command's prompt still attaches what it mentions
    expect(last(2)).toContain("secret-alpha");
    // each prompt is stored with the command line typed, which titles the session (now or queued)
    const prompts = r.controller.agent.session.entries().filter((e) => e.type === "message" && e.message && isPrompt(e.message));
    expect(prompts.map((e) => typedPrompt(e))).toEqual(["/data", "/data", "/skill"]);
  });

  it("a queued command's prompt waits, and is then shown, as the command line typed", async () => {
    const provider = new GatedProvider("first", " reply");
    const r = await make({
      provider,
      plugins: [commandsPlugin([cmd("data", "Send data", { run: async () => ({ prompt: "collected data:\n+a diff line", mentions: false }) }), cmd("skill", "Send a prompt", { run: async () => ({ prompt: "the long prompt of a skill" }) })])],
    });
    void r.controller.submit("a question");
    await waitFor(() => provider.requests.length === 1, "the first request");
    await r.controller.submit("/data main..HEAD");
    await r.controller.submit("/skill");
    await waitFor(() => r.controller.snapshot().queued.length === 2, "two queued prompts");
    expect(r.controller.snapshot().queued).toEqual(["/data main..HEAD", "/skill"]);
    await r.until("queued: /data main..HEAD");
    expect(r.screen()).not.toContain("collected data");
    provider.release();
    await waitFor(() => provider.requests.length === 3, "the queued requests");
    await r.controller.idle();
    const rows = () =>
      r.controller.snapshot().items.flatMap((i) => {
        const it = i as { kind: string; text?: string };
        return it.kind === "user" || it.kind === "command" ? [`${it.kind}: ${it.text}`] : [];
      });
    await waitFor(() => rows().length >= 5, () => `five prompt rows, not ${JSON.stringify(rows())}`);
    // each command row when it ran, then again where its turn starts (as a resume shows it)
    expect(rows()).toEqual(["user: a question", "command: /data main..HEAD", "command: /skill", "command: /data main..HEAD", "command: /skill"]);
  });

  it("!cmd runs in the shell, shows output and sends it with the next prompt", async () => {
    const r = await make({ scripts: [{ blocks: [text("noted")] }] });
    await r.type("!echo shell-says-hi");
    await r.press(KEY.enter);
    await r.until("shell-says-hi");
    await r.until("exit 0");
    expect(r.controller.agent.notes.join("\n")).toContain("shell-says-hi");
    await r.type("next");
    await r.press(KEY.enter);
    await r.until("noted");
    const first = JSON.stringify(r.provider.requests[0]!.messages[0]);
    expect(first).toContain("shell-says-hi");
  });

  it("!cmd honours bash deny rules", async () => {
    const r = await make({ settings: { permissions: { deny: ["bash(rm *)"] } } });
    await r.type("!rm -rf x");
    await r.press(KEY.enter);
    await r.until("refused");
  });

  it("ctrl+g replaces the draft with what the external editor saved", async () => {
    const r = await make({ controller: { editExternally: (t) => ({ text: `${t} (edited)` }) } });
    await r.type("draft");
    await r.press("\x07");
    expect(r.controller.snapshot().input.text).toBe("draft (edited)");
  });

  it("ctrl+c clears, then a second ctrl+c quits; ctrl+d on empty input quits", async () => {
    const r = await make({});
    const quit = vi.fn();
    r.controller.onQuit(quit);
    await r.type("some text");
    await r.press(KEY.ctrlC);
    expect(r.controller.snapshot().input.text).toBe("");
    await r.until("press ctrl+c again to quit");
    expect(quit).not.toHaveBeenCalled();
    await r.press(KEY.ctrlC);
    expect(quit).toHaveBeenCalledTimes(1);

    const r2 = await rig({});
    const quit2 = vi.fn();
    r2.controller.onQuit(quit2);
    await r2.type("x");
    await r2.press(KEY.ctrlD);
    expect(quit2).not.toHaveBeenCalled();
    await r2.press(KEY.backspace, KEY.ctrlD);
    expect(quit2).toHaveBeenCalledTimes(1);
    r2.unmount();
  });
});

describe("footer", () => {
  it("shows mode, model and the context meter; shift+tab cycles the mode", async () => {
    const r = await make({
      scripts: [{ blocks: [text("big")], usage: { input: 62_000 } }],
      settings: { models: { "scripted/x": { context_window: 200_000, input_price: 3, output_price: 15 } } },
    });
    expect(r.screen()).toMatch(/default · scripted\/x · sandbox off · \$0\.000 · ctx 0% · 0\/200k/);
    await r.type("go");
    await r.press(KEY.enter);
    await r.until("ctx 31% · 62k/200k");
    expect(r.screen()).toMatch(/\$0\.186/);
    await r.press(KEY.shiftTab);
    await r.until(/^accept-edits · /m);
    expect(r.controller.agent.checker.mode).toBe("accept-edits");
    await r.press(KEY.shiftTab);
    expect(r.controller.agent.checker.mode).toBe("plan");
  });
});

describe("live region height", () => {
  it("never grows past the screen: a long reply shows its tail while streaming", async () => {
    const long = Array.from({ length: 80 }, (_, i) => `line ${i + 1}`).join("\n");
    const provider = new GatedProvider("```\n" + long + "\n", "```\n");
    const r = await make({ provider, rows: 20 });
    await r.type("go");
    await r.press(KEY.enter);
    await r.until("line 80");
    // the live part is everything after the echoed prompt
    const live = r.screen().split("go\n").pop()!.replace(/^\n+/, "");
    expect(live.split("\n").length).toBeLessThan(20);
    expect(live).not.toContain("line 1\n");
    provider.release();
    await r.controller.idle();
    await r.until("line 1\n");
  });

  it("keeps no timers while idle", async () => {
    const r = await make({ scripts: [{ blocks: [text("done")] }], controller: { tickMs: 50 } });
    await r.type("go");
    await r.press(KEY.enter);
    await r.until("done");
    await r.controller.idle();
    await waitFor(() => !r.controller.hasTimers, "timers to stop");
  });
});

describe("files", () => {
  it("does not create a history file before anything is submitted", async () => {
    const r = await make({});
    expect(existsSync(historyFile(r.dir, r.env))).toBe(false);
  });
});
