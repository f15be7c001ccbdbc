/**
 * The session commands on the real JSONL store (sessions-jsonl): resume reproduces exactly what
 * was sent, `/fork`, `/rewind` and `/prompt n fork` write new files and leave the parent's bytes
 * alone, `/sessions` marks the current session and branches, and `/export` writes Markdown
 * without overwriting.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { definePlugin, defineTool, Host, replay, type Agent, type Message } from "../kernel/index.js";
import sessionsJsonl from "../plugins/sessions-jsonl/index.js";
import { drain, recordingUi, runCommand, testBed, type TestBed } from "../plugins/commands/test-helpers.js";
import { call, text } from "./fakes/scripted-provider.js";

async function bed(): Promise<TestBed> {
  return testBed([sessionsJsonl]);
}

/** Three turns: a tool round, two parallel tools, a reply with thinking. */
async function threeTurns(t: TestBed, agent: Agent): Promise<void> {
  t.provider.push(
    { blocks: [text("Let me look."), call("t1", "peek", { word: "alpha" })], usage: { input: 100, output: 10 } },
    { blocks: [text("alpha seen")], usage: { input: 120, output: 5 } },
    { blocks: [call("t2", "peek", { word: "b" }), call("t3", "peek", { word: "c" })], usage: { input: 150, output: 12 } },
    { blocks: [text("b and c\u2028seen")], usage: { input: 170, output: 6 } },
    { blocks: [{ type: "thinking", text: "private reasoning", signature: "sig" }, text("third answer")], usage: { input: 200, output: 7, cache_read: 50 } },
  );
  await drain(agent.run("first: peek alpha"));
  await drain(agent.run("second: peek b and c"));
  await drain(agent.run("third: think"));
}

describe("resume", () => {
  it("-c continues the newest session that got a prompt, not a newer empty one", async () => {
    const t = await bed();
    const talked = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("hi")] });
    await drain(talked.run("hello"));
    await talked.close();
    await new Promise((r) => setTimeout(r, 20)); // a later write time for the empty one
    // `larik -p /cost` or a TUI quit at once, killed before it closed (closed, an empty session
    // is removed: next test)
    const empty = await t.host.openAgent({ model: "scripted/m1" });
    const list = await t.host.sessionStore!.list(t.cwd);
    expect(list[0]!.id).toBe(empty.session.id);
    const resumed = await t.host.openAgent({ continue: true });
    expect(resumed.session.id).toBe(talked.session.id);
    await resumed.close();
    await empty.close();
  });

  it("a session closed with nothing in it is not kept: --sessions lists no '(no prompt yet)' row for it", async () => {
    const t = await bed();
    const empty = await t.host.openAgent({ model: "scripted/m1" });
    await runCommand(t.host, empty, "/cost");
    await empty.close();
    expect(await t.host.sessionStore!.list(t.cwd)).toEqual([]);
  });

  it("a resumed agent knows its context size before its first request (the TUI's meter, /cost)", async () => {
    const t = await bed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("a")], usage: { input: 60_000, cache_read: 2_000, cache_write: 500 } });
    await drain(agent.run("one"));
    const id = agent.session.id;
    await agent.close();
    const resumed = await t.host.openAgent({ resume: id });
    expect(resumed.lastContextTokens).toBe(62_500);
    expect((await runCommand(t.host, resumed, "/cost")).lines.at(-1)).toBe("ctx 31% · 63k/200k");
    await runCommand(t.host, resumed, "/clear");
    await resumed.close();
    const cleared = await t.host.openAgent({ resume: id });
    expect(cleared.lastContextTokens).toBe(0);
    await cleared.close();
  });

  it("-c in a subfolder with no sessions of its own points at the project root's", async () => {
    const t = await bed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("hi")] });
    await drain(agent.run("hello"));
    await agent.close();
    execFileSync("git", ["init", "-q", t.cwd]);
    mkdirSync(join(t.cwd, "sub"));
    const sub = await Host.create({ plugins: [sessionsJsonl], cwd: join(t.cwd, "sub"), env: t.env, settings: {} });
    await expect(sub.openAgent({ continue: true })).rejects.toThrow(
      `no session to continue in ${sub.cwd}: start one without -c (the project root ${t.cwd} has sessions: run larik -c there)`,
    );
    // a root without sessions adds nothing
    const other = await Host.create({ plugins: [sessionsJsonl], cwd: join(t.cwd, "sub"), env: { ...t.env, XDG_DATA_HOME: join(t.env.HOME!, "empty") }, settings: {} });
    await expect(other.openAgent({ continue: true })).rejects.toThrow(/^no session to continue in .*: start one without -c$/);
  });

  it("after a /clear, resumes the fresh context, not the one cleared away", async () => {
    const t = await bed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("before")] }, { blocks: [text("after")] });
    await drain(agent.run("old topic"));
    agent.clear();
    await drain(agent.run("new topic"));
    const context: Message[] = JSON.parse(JSON.stringify(agent.messages));
    expect(context.map((m) => m.role)).toEqual(["user", "assistant"]);
    const id = agent.session.id;
    await agent.close();
    const resumed = await t.host.openAgent({ resume: id });
    expect(resumed.messages).toEqual(context);
    await resumed.close();
  });

  it("reproduces exactly the messages, system prompt and tools that were sent", async () => {
    const t = await bed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    await threeTurns(t, agent);
    const sent = t.provider.requests.at(-1)!;
    const context: Message[] = JSON.parse(JSON.stringify(agent.messages));
    const id = agent.session.id;
    await agent.close();

    const resumed = await t.host.openAgent({ resume: id.slice(0, 17) });
    expect(resumed.session.id).toBe(id);
    expect(resumed.spec).toBe("scripted/m1");
    expect(resumed.messages).toEqual(context);
    t.provider.push({ blocks: [text("fourth answer")] });
    await drain(resumed.run("fourth"));
    const next = t.provider.requests.at(-1)!;
    expect(next.system).toBe(sent.system);
    expect(next.tools).toEqual(sent.tools);
    expect(next.messages.slice(0, sent.messages.length)).toEqual(sent.messages);
    expect(next.messages[sent.messages.length]).toEqual(context.at(-1));
    expect(next.messages).toHaveLength(sent.messages.length + 2);
    // usage totals survive the resume
    expect(resumed.usageByModel.get("scripted/m1")).toEqual({ usage: { input: 740 + 10, output: 40 + 5, cache_read: 50, cache_write: 0 }, requests: 6 });
    await resumed.close();
  });

  it("/new then /resume <prefix> switches sessions through the front end; /sessions marks the current one", async () => {
    const t = await bed();
    const first = await t.host.openAgent({ model: "scripted/m1", mode: "accept-edits" });
    t.provider.push({ blocks: [text("one")] });
    await drain(first.run("the first session's prompt"));
    const ui = recordingUi(first);
    await runCommand(t.host, first, "/new", ui);
    const second = ui.agent;
    expect(second).not.toBe(first);
    expect(second.session.id).not.toBe(first.session.id);
    expect(second.checker.mode).toBe("accept-edits");
    expect(second.messages).toEqual([]);
    t.provider.push({ blocks: [text("two")] });
    await drain(second.run("the second session's prompt"));

    const list = await runCommand(t.host, second, "/sessions");
    expect(list.lines).toHaveLength(2);
    expect(list.lines[0]).toMatch(new RegExp(`^${second.session.id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  the second session's prompt  ✓ current$`));
    expect(list.lines[1]).toMatch(new RegExp(`^${first.session.id}  .*  the first session's prompt$`));

    await expect(runCommand(t.host, second, "/resume 2")).resolves.toMatchObject({ lines: [expect.stringMatching(/^to resume 2, run: larik --resume 2$/)] });
    await expect(runCommand(t.host, second, "/resume 2", ui)).rejects.toThrow(/ambiguous/);
    expect((await runCommand(t.host, second, `/resume ${second.session.id}`, ui)).lines).toEqual([`already in session ${second.session.id}`]);
    // the shortest prefix past the timestamp that only the first id has (both may share a second)
    let n = 17;
    while (second.session.id.startsWith(first.session.id.slice(0, n))) n++;
    const r = await runCommand(t.host, second, `/resume ${first.session.id.slice(0, n)}`, ui);
    expect(r.lines.at(-1)).toBe(`resumed ${first.session.id} (1 prompts, scripted/m1)`);
    expect(ui.agent.session.id).toBe(first.session.id);
    expect(ui.agent.history().map((m) => m.blocks[0])).toEqual([text("the first session's prompt"), text("one")]);
    await ui.agent.close();
  });
});

describe("branches on real session files", () => {
  it("/fork copies the session into a new file and leaves the parent's bytes alone", async () => {
    const t = await bed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    await threeTurns(t, agent);
    const parent = agent.session.location;
    const before = readFileSync(parent);
    const ui = recordingUi(agent);
    const { lines } = await runCommand(t.host, agent, "/fork", ui);
    const branch = ui.agent;
    expect(lines).toEqual([`forked ${agent.session.id} into ${branch.session.id}; now in the branch (the original is unchanged)`]);
    expect(branch.session.meta).toMatchObject({ fork_of: agent.session.id, fork_at: 10 });
    expect(branch.history()).toEqual(agent.history());
    expect(branch.messages).toEqual(agent.messages);
    t.provider.push({ blocks: [text("in the branch")] });
    await drain(branch.run("branch prompt"));
    expect(readFileSync(parent).equals(before)).toBe(true);
    expect(readFileSync(branch.session.location, "utf8")).toContain("in the branch");
    // the old agent was closed: its session can be opened again
    const reopened = await t.host.sessionStore!.open(t.cwd, agent.session.id);
    await reopened.close();
    const list = await runCommand(t.host, branch, "/sessions");
    expect(list.lines.find((l) => l.startsWith(branch.session.id))).toMatch(/  ⑂ first: peek alpha  ✓ current$/);
    await branch.close();
  });

  it("/rewind lists prompts, branches before prompt n and puts its text back; the parent is untouched", async () => {
    const t = await bed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    await threeTurns(t, agent);
    const parent = agent.session.location;
    const before = readFileSync(parent);
    const mtime = statSync(parent).mtimeMs;

    const list = await runCommand(t.host, agent, "/rewind");
    expect(list.lines).toEqual([
      "prompts of this session (/rewind <n> branches before one; /prompt <n> shows it):",
      "  1  first: peek alpha",
      "  2  second: peek b and c",
      "  3  third: think",
    ]);
    await expect(runCommand(t.host, agent, "/rewind 4")).rejects.toThrow(/from 1 to 3/);
    await expect(runCommand(t.host, agent, "/rewind 2 maybe")).rejects.toThrow(/usage \/rewind \[n\] \[files\|keep\]/);

    // headless: the branch is written and closed, and the user is told how to reach it
    const headless = await runCommand(t.host, agent, "/rewind 3");
    const hid = /into (\S+):/.exec(headless.lines[0]!)![1]!;
    expect(headless.lines[1]).toBe("prompt 3 was: third: think");
    const h = await t.host.sessionStore!.open(t.cwd, hid);
    expect(replay(h.entries()).all).toHaveLength(8);
    await h.close();

    const ui = recordingUi(agent);
    const r = await runCommand(t.host, agent, "/rewind 2 keep", ui);
    const branch = ui.agent;
    expect(r.lines).toEqual([`rewound to before prompt 2: now in branch ${branch.session.id} (the original session is unchanged)`]);
    expect(ui.input).toBe("second: peek b and c");
    expect(branch.session.meta).toMatchObject({ fork_of: agent.session.id, fork_at: 4 });
    expect(branch.history().map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(branch.history()[1]!.blocks[1]).toMatchObject({ type: "tool_use", id: "t1" });
    expect(branch.messages).toEqual(branch.history());
    t.provider.push({ blocks: [text("second try")] });
    await drain(branch.run("second, differently"));
    expect(t.provider.requests.at(-1)!.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(readFileSync(parent).equals(before)).toBe(true);
    expect(statSync(parent).mtimeMs).toBe(mtime);
    await branch.close();
  });

  it("/prompt n fork keeps that turn and its reply", async () => {
    const t = await bed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    await threeTurns(t, agent);
    const ui = recordingUi(agent);
    const r = await runCommand(t.host, agent, "/prompt 2 fork", ui);
    expect(r.lines[0]).toMatch(/^forked after prompt 2 and its reply: now in branch /);
    const h = ui.agent.history();
    expect(h).toHaveLength(8);
    expect(h.at(-1)!.blocks[0]).toEqual(text("b and c\u2028seen"));
    await ui.agent.close();
  });
});

describe("/export", () => {
  it("writes Markdown of prompts, replies, tool calls and capped results, without thinking or attachment contents, and never overwrites", async () => {
    const t = await bed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    await threeTurns(t, agent);
    const big = Array.from({ length: 500 }, (_, i) => `line ${i}`).join("\n");
    t.provider.push(
      { blocks: [call("t9", "peek", { word: big })] },
      { blocks: [text("a reply with ``` fences ```")] },
    );
    await drain(agent.run([{ type: "text", text: "read @notes.md" }, { type: "text", text: "SECRET ATTACHED BODY", attachment: "notes.md" }]));
    const { lines } = await runCommand(t.host, agent, "/export");
    const name = `larik-${agent.session.id}.md`;
    expect(lines).toEqual([`exported 4 prompts to ${name}`]);
    const file = join(t.cwd, name);
    const md = readFileSync(file, "utf8");
    expect(md.startsWith("# first: peek alpha\n\nSession `")).toBe(true);
    for (const s of ["## Prompt 1\n\nfirst: peek alpha", "## Prompt 4\n\nread @notes.md\n\n_attached: notes.md_", "**Tool call: `peek`**", '"word": "alpha"', "**Result**\n\n```\npeeked alpha\n```", "third answer", "### Reply (m1)"]) {
      expect(md).toContain(s);
    }
    expect(md).not.toContain("private reasoning");
    expect(md).not.toContain("SECRET ATTACHED BODY");
    expect(md).toMatch(/line 38\nline 39\n… \[\d+ more characters not exported\]/);
    expect(md).not.toContain("line 41\n");
    expect(md).toContain("### Reply (m1)\n\na reply with ``` fences ```");

    writeFileSync(join(t.cwd, "mine.md"), "keep me");
    await expect(runCommand(t.host, agent, "/export")).rejects.toThrow(new RegExp(`^${name.replace(/[.]/g, "\\.")} already exists: /export never overwrites`));
    await expect(runCommand(t.host, agent, "/export mine.md")).rejects.toThrow(/mine\.md already exists/);
    expect(readFileSync(join(t.cwd, "mine.md"), "utf8")).toBe("keep me");
    expect(readFileSync(file, "utf8")).toBe(md);
    await expect(runCommand(t.host, agent, "/export no/such/dir.md")).rejects.toThrow(/its folder does not exist/);
    expect((await runCommand(t.host, agent, "/export out.md")).lines).toEqual(["exported 4 prompts to out.md"]);
    expect((await runCommand(t.host, agent, '/export "with space.md"')).lines).toEqual(["exported 4 prompts to with space.md"]);
    expect(readFileSync(join(t.cwd, "with space.md"), "utf8")).toContain("## Prompt 4");
    await agent.close();
  });

  it("/rewind n files restores every file changed since prompt n, then branches", async () => {
    const put = definePlugin({
      name: "put-tool",
      setup(ctx) {
        ctx.tools.register(
          defineTool({
            name: "put",
            description: "write a file",
            input: z.object({ path: z.string(), content: z.string() }),
            kind: "write",
            writePaths: (i) => [i.path],
            async run({ path, content }, tctx) {
              const abs = resolve(tctx.cwd, path);
              await tctx.checkpoint(abs);
              writeFileSync(abs, content);
              return { content: "ok" };
            },
          }),
        );
      },
    });
    const t = await testBed([sessionsJsonl, put]);
    const agent = await t.host.openAgent({ model: "scripted/m1", mode: "yolo" });
    t.provider.push({ blocks: [call("p1", "put", { path: "a.txt", content: "one" })] }, { blocks: [text("made a")] });
    await drain(agent.run("first: make a"));
    t.provider.push({ blocks: [call("p2", "put", { path: "a.txt", content: "two" }), call("p3", "put", { path: "b.txt", content: "new" })] }, { blocks: [text("changed")] });
    await drain(agent.run("second: change a, add b"));
    t.provider.push({ blocks: [text("nothing")] });
    await drain(agent.run("third: talk"));
    expect(readFileSync(join(t.cwd, "a.txt"), "utf8")).toBe("two");
    const ui = recordingUi(agent);
    const r = await runCommand(t.host, agent, "/rewind 2 files", ui);
    expect(r.lines).toContain("restored files changed since prompt 2: b.txt, a.txt");
    expect(readFileSync(join(t.cwd, "a.txt"), "utf8")).toBe("one");
    expect(existsSync(join(t.cwd, "b.txt"))).toBe(false);
    expect(ui.input).toBe("second: change a, add b");
    expect(ui.agent.history()).toHaveLength(4); // prompt 1, its call, result and reply
    await ui.agent.close();
  });
});
