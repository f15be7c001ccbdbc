import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, definePlugin, noCheckpoints, PERMISSION_MODES, type CheckpointStore } from "../../kernel/index.js";
import { call, text } from "../../test/fakes/scripted-provider.js";
import { BUILTIN_COMMANDS } from "./index.js";
import { drain, recordingUi, runCommand, testBed } from "./test-helpers.js";

const config = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;

describe("registration", () => {
  it("registers every built-in once, and /help lists them with their arguments", async () => {
    const t = await testBed();
    const names = BUILTIN_COMMANDS.map((c) => c.name);
    expect(names).toEqual(["model", "mode", "effort", "clear", "compact", "undo", "cost", "sessions", "resume", "new", "fork", "rewind", "prompt", "init", "export", "copy", "help", "quit"]);
    for (const n of names) expect(t.host.commands.ownerOf(n)).toBe("commands");
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    const { lines } = await runCommand(t.host, agent, "/help");
    expect(lines[0]).toBe("commands:");
    expect(lines).toContain("  /rewind [n] [files|keep] — List prompts, or branch before prompt n and put it back in the composer");
    expect(lines.filter((l) => l.startsWith("  /"))).toHaveLength(names.length);
  });

  it("refuses idle-only commands while a turn runs, and still answers the others", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("a slow answer that streams for a while")], delayMs: 15 });
    const run = drain(agent.run("hi"));
    for (const cmd of ["/clear", "/compact", "/undo", "/model scripted/m1", "/effort high", "/new", "/fork", "/rewind 1", "/resume x"]) {
      await expect(runCommand(t.host, agent, cmd), cmd).rejects.toThrow(/cannot run while a turn is running/);
    }
    const cost = await runCommand(t.host, agent, "/cost");
    expect(cost.lines.at(-1)).toMatch(/^ctx /);
    await runCommand(t.host, agent, "/mode plan");
    expect(agent.checker.mode).toBe("plan");
    await run;
  });
});

describe("/model, /mode, /effort", () => {
  it("/model lists the current model and the catalog of providers that have keys", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1", effort: "high" });
    const { lines } = await runCommand(t.host, agent, "/model");
    expect(lines[0]).toBe("model: scripted/m1 · effort high · context window 200k");
    expect(lines).toContain("  scripted: ✓ m1 (200k)");
    expect(lines).toContain("  fake: fast (32k)");
    expect(lines.join("\n")).not.toContain("hidden"); // LOCKED_KEY is not set
  });

  it("/model provider/model switches the next request to that provider and saves the default", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("from m1")] });
    await drain(agent.run("one"));
    const { lines } = await runCommand(t.host, agent, "/model fake/fast");
    expect(lines[0]).toBe("model: scripted/m1 → fake/fast · context window 32k");
    expect(agent.spec).toBe("fake/fast");
    t.fake.push({ blocks: [text("from fast")] });
    await drain(agent.run("two"));
    expect(t.fake.requests).toHaveLength(1);
    expect(t.fake.requests[0]!.model).toBe("fast");
    // the whole conversation goes to the new model
    expect(JSON.stringify(t.fake.requests[0]!.messages)).toContain("from m1");
    expect(config(t.configFile).model).toBe("fake/fast");
    expect(agent.history().at(-1)!.model).toBe("fast");
  });

  it("/model with a bad spec or a missing key fails with one line and keeps the model", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    await expect(runCommand(t.host, agent, "/model nosuch/x")).rejects.toThrow(/unknown provider "nosuch".*use one of/);
    await expect(runCommand(t.host, agent, "/model locked/hidden")).rejects.toThrow(/missing API key for locked: set LOCKED_KEY/);
    await expect(runCommand(t.host, agent, "/model a b")).rejects.toThrow(/give one spec/);
    expect(agent.spec).toBe("scripted/m1");
    expect(existsSync(t.configFile)).toBe(false);
  });

  it("/mode shows, sets and saves the mode; a bad mode lists the valid ones", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    expect((await runCommand(t.host, agent, "/mode")).lines).toEqual([`mode: default (modes: ${PERMISSION_MODES.join(", ")})`]);
    expect((await runCommand(t.host, agent, "/mode accept-edits")).lines).toEqual(["mode: default → accept-edits"]);
    expect(agent.checker.mode).toBe("accept-edits");
    expect(config(t.configFile).mode).toBe("accept-edits");
    await expect(runCommand(t.host, agent, "/mode reckless")).rejects.toThrow(/\/mode reckless: use one of default, accept-edits, plan/);
    expect(agent.checker.mode).toBe("accept-edits");
  });

  it("/effort sets a level, `default` clears it, and the saved default follows", async () => {
    const t = await testBed();
    mkdirSync(dirname(t.configFile), { recursive: true });
    writeFileSync(t.configFile, JSON.stringify({ theme: "dark", effort: "low" })); // other keys survive
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    await runCommand(t.host, agent, "/effort xhigh");
    expect(agent.effort).toBe("xhigh");
    expect(config(t.configFile).effort).toBe("xhigh");
    t.provider.push({ blocks: [text("ok")] });
    await drain(agent.run("go"));
    expect(t.provider.requests.at(-1)!.effort).toBe("xhigh");
    expect((await runCommand(t.host, agent, "/effort default")).lines).toEqual(["effort: default (the provider's own)"]);
    expect(agent.effort).toBeUndefined();
    expect(config(t.configFile)).toEqual({ theme: "dark" });
    await expect(runCommand(t.host, agent, "/effort extreme")).rejects.toThrow(/use one of low, medium, high, xhigh, max or default/);
  });
});

describe("/clear, /compact, /undo", () => {
  it("/clear starts a fresh context: the next request carries only the new prompt", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("first answer")] }, { blocks: [text("second answer")] });
    await drain(agent.run("remember 42"));
    await runCommand(t.host, agent, "/clear");
    await drain(agent.run("what number?"));
    const msgs = t.provider.requests.at(-1)!.messages;
    expect(msgs).toHaveLength(1);
    expect(JSON.stringify(msgs)).not.toContain("remember 42");
    expect(agent.history().length).toBe(4); // the transcript keeps everything
  });

  it("/compact summarizes and prints the before/after/saved metrics", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    const long = "word ".repeat(20_000);
    t.provider.push(
      { blocks: [text(`long answer ${long}`)], usage: { input: 26_000 } },
      { blocks: [text("ok")], usage: { input: 27_000 } },
      { blocks: [text("<summary>we talked about words</summary>")] },
    );
    await drain(agent.run("talk"));
    await drain(agent.run("more"));
    const { lines } = await runCommand(t.host, agent, "/compact");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^compacted: 27k prompt → ~\d+(k)? summary · ~\d+k saved$/);
    expect(agent.messages).toHaveLength(1);
    expect(JSON.stringify(agent.messages)).toContain("we talked about words");
    const cost = await runCommand(t.host, agent, "/cost");
    expect(cost.lines.at(-1)).toMatch(/^compactions: 1 · ~\d+k tokens freed$/);
    // after /clear there is nothing to summarize: said, like "nothing to undo", not thrown
    await runCommand(t.host, agent, "/clear");
    expect((await runCommand(t.host, agent, "/compact")).lines).toEqual(["nothing to compact: the context is empty (send a prompt first)"]);
  });

  it("/undo reverts through the checkpoint store and queues a note naming the files", async () => {
    const t = await testBed();
    const undone: string[][] = [["src/a.ts", "b.md"], []];
    const checkpoints: CheckpointStore = { async beginTurn() {}, async capture() {}, undo: async () => undone.shift() ?? [] };
    const agent = await t.host.openAgent({ model: "scripted/m1", checkpoints });
    const { lines } = await runCommand(t.host, agent, "/undo");
    expect(lines).toEqual(["reverted 2 files:", "  src/a.ts", "  b.md"]);
    t.provider.push({ blocks: [text("ok")] });
    await drain(agent.run("continue"));
    const first = t.provider.requests[0]!.messages[0]!.blocks[0]!;
    expect(first.type === "text" && first.text).toMatch(/^<system-note>The user ran \/undo.*src\/a\.ts, b\.md.*Re-read them/);
    expect((await runCommand(t.host, agent, "/undo")).lines).toEqual(["nothing to undo: no turn of this session changed files"]);
  });

  it("/undo restores a file written in the last turn with the kernel's checkpoint store", async () => {
    const put = definePlugin({
      name: "test-put",
      setup(ctx) {
        ctx.tools.register(
          defineTool({
            name: "put",
            description: "Writes a file.",
            input: z.object({ path: z.string(), content: z.string() }),
            kind: "write",
            writePaths: ({ path }) => [path],
            async run({ path, content }, tctx) {
              const abs = join(tctx.cwd, path);
              await tctx.checkpoint(abs);
              writeFileSync(abs, content);
              return { content: "written" };
            },
          }),
        );
      },
    });
    const t = await testBed([put]);
    writeFileSync(join(t.cwd, "a.txt"), "original\n");
    const agent = await t.host.openAgent({ model: "scripted/m1", mode: "yolo" });
    t.provider.push(
      { blocks: [call("p1", "put", { path: "a.txt", content: "changed\n" }), call("p2", "put", { path: "new.txt", content: "new\n" })] },
      { blocks: [text("done")] },
    );
    await drain(agent.run("change files"));
    expect(readFileSync(join(t.cwd, "a.txt"), "utf8")).toBe("changed\n");
    const { lines } = await runCommand(t.host, agent, "/undo");
    expect(lines[0]).toBe("reverted 2 files:");
    expect(lines.slice(1).sort()).toEqual(["  a.txt", "  new.txt"]);
    expect(readFileSync(join(t.cwd, "a.txt"), "utf8")).toBe("original\n");
    expect(existsSync(join(t.cwd, "new.txt"))).toBe(false);
    expect(agent.notes).toHaveLength(1);
    expect(agent.notes[0]).toMatch(/a\.txt/);
  });

  it("/undo says when checkpoints are off", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1", checkpoints: noCheckpoints });
    expect((await runCommand(t.host, agent, "/undo")).lines[0]).toMatch(/checkpoints are off/);
    expect(agent.notes).toEqual([]);
  });
});

describe("/cost", () => {
  it("prices each model that answered, totals them and shows the context meter", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("a")], usage: { input: 50_000, output: 2_000, cache_read: 10_000, cache_write: 2_000 } });
    await drain(agent.run("one"));
    await runCommand(t.host, agent, "/model fake/fast");
    t.fake.push({ blocks: [text("b")], usage: { input: 1_000, output: 100 } });
    await drain(agent.run("two"));
    const { lines } = await runCommand(t.host, agent, "/cost");
    // 50k*3 + 2k*15 + 10k*0.3 + 2k*3.75 = 150000+30000+3000+7500 = 190500 µ$ → $0.1905
    expect(lines).toEqual([
      "scripted/m1 · 1 request · $0.1905",
      "  input 50,000 · output 2,000 · cache read 10,000 · cache write 2,000",
      "fake/fast · 1 request · unpriced",
      "  input 1,000 · output 100 · cache read 0 · cache write 0",
      "total · $0.1905 + unpriced (fake/fast)",
      "  input 51,000 · output 2,100 · cache read 10,000 · cache write 2,000",
      "ctx 3% · 1k/32k",
    ]);
  });

  it("shows the context size of the last request", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    expect((await runCommand(t.host, agent, "/cost")).lines).toEqual(["no model requests in this session yet", "ctx 0% · 0/200k"]);
    t.provider.push({ blocks: [text("a")], usage: { input: 60_000, cache_read: 2_000 } });
    await drain(agent.run("one"));
    expect((await runCommand(t.host, agent, "/cost")).lines.at(-1)).toBe("ctx 31% · 62k/200k");
  });
});

describe("/copy, /prompt, /quit", () => {
  it("/copy sends the last reply to the clipboard, or prints it without one", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    expect((await runCommand(t.host, agent, "/copy")).lines).toEqual(["nothing to copy: no reply yet"]);
    t.provider.push({ blocks: [{ type: "thinking", text: "hmm" }, text("the **answer**"), call("c1", "peek", { word: "x" })] }, { blocks: [text("final reply")] });
    await drain(agent.run("q"));
    const ui = recordingUi(agent);
    expect((await runCommand(t.host, agent, "/copy", ui)).lines).toEqual(["copied the last reply (11 characters)"]);
    expect(ui.copied).toEqual(["final reply"]);
    expect((await runCommand(t.host, agent, "/copy")).lines).toEqual(["final reply"]);
  });

  it("/prompt shows a prompt without notes or attachments, with the menu hints, and copies it", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    t.provider.push({ blocks: [text("a")] }, { blocks: [text("b")] });
    agent.addNote("plan mode is on");
    await drain(agent.run("first prompt\nsecond line"));
    await drain(agent.run([{ type: "text", text: "look at @x.ts" }, { type: "text", text: "FILE BODY", attachment: "x.ts" }]));
    const last = await runCommand(t.host, agent, "/prompt");
    expect(last.lines).toEqual([
      "prompt 2 of 2:",
      "  look at @x.ts",
      "Copy: /prompt 2 copy · Fork: /prompt 2 fork (keeps this turn and its reply) · Rewind: /rewind 2 (branch before it, text back in the composer)",
    ]);
    expect((await runCommand(t.host, agent, "/prompt 1")).lines.slice(0, 3)).toEqual(["prompt 1 of 2:", "  first prompt", "  second line"]);
    const ui = recordingUi(agent);
    await runCommand(t.host, agent, "/prompt 1 copy", ui);
    expect(ui.copied).toEqual(["first prompt\nsecond line"]);
    await expect(runCommand(t.host, agent, "/prompt 3")).rejects.toThrow(/give a prompt number from 1 to 2/);
    await expect(runCommand(t.host, agent, "/prompt 1 paste")).rejects.toThrow(/usage \/prompt \[n\] \[copy\|fork\]/);
  });

  it("/quit asks the front end to quit, and says so where there is none", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    const ui = recordingUi(agent);
    await runCommand(t.host, agent, "/quit", ui);
    expect(ui.quitCalls).toBe(1);
    expect((await runCommand(t.host, agent, "/quit")).lines[0]).toMatch(/nothing to quit/);
  });
});

describe("session commands without a store", () => {
  it("say that a session store is needed", async () => {
    const t = await testBed();
    const agent = await t.host.openAgent({ model: "scripted/m1" });
    for (const c of ["/sessions", "/fork"]) await expect(runCommand(t.host, agent, c)).rejects.toThrow(/needs a session store/);
    expect((await runCommand(t.host, agent, "/new")).lines).toEqual(["to start a new session, run larik without -c or --resume"]);
  });
});
