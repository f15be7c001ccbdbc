import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, defineTool, definePlugin, expandMentions, Host, lazySchema, type Plugin } from "../kernel/index.js";
import { call, ScriptedProvider, text } from "./fakes/scripted-provider.js";
import { drain } from "./fakes/drain.js";
import { toolsPlugin } from "./fakes/loop-tools.js";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "larik-loop-"));
}



async function setup(scripts: ConstructorParameters<typeof ScriptedProvider>[0], opts: { mode?: "default" | "yolo"; log?: string[]; plugins?: Plugin[] } = {}) {
  const log = opts.log ?? [];
  const host = await Host.create({ plugins: [toolsPlugin(log), ...(opts.plugins ?? [])], cwd: tmp(), settings: {} });
  const provider = new ScriptedProvider(scripts);
  const agent = await host.openAgent({ provider, model: "scripted/test", mode: opts.mode ?? "default" });
  return { host, provider, agent, log };
}

describe("agent loop", () => {
  it("runs tool rounds until a reply without tool calls, answering every tool_use in order", async () => {
    const { agent, provider } = await setup([
      { blocks: [text("Looking."), call("t1", "peek", { word: "a" }), call("t2", "peek", { word: "b" })] },
      { blocks: [text("Done: a and b.")] },
    ]);
    const events = await drain(agent.run("peek twice"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(provider.requests).toHaveLength(2);
    const second = provider.requests[1]!.messages;
    expect(second.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const results = second[2]!.blocks;
    expect(results).toEqual([
      { type: "tool_result", id: "t1", content: "peeked a" },
      { type: "tool_result", id: "t2", content: "peeked b" },
    ]);
    const types = events.map((e) => e.type);
    expect(types).toContain("assistant_message");
    expect(types).toContain("usage");
    expect(types.filter((t) => t === "tool_end")).toHaveLength(2);
  });

  it("runs consecutive read-only calls in parallel", async () => {
    const log: string[] = [];
    let openB!: () => void;
    const bStarted = new Promise<void>((r) => (openB = r));
    // a waits until b has started: only possible when they run concurrently
    const host = await Host.create({ plugins: [toolsPlugin(log, { a: bStarted }, { b: () => openB() })], cwd: tmp(), settings: {} });
    const provider = new ScriptedProvider([
      { blocks: [call("t1", "peek", { word: "a" }), call("t2", "peek", { word: "b" })] },
      { blocks: [text("ok")] },
    ]);
    const agent = await host.openAgent({ provider, model: "scripted/x", mode: "default" });
    await drain(agent.run("go"));
    expect(log.indexOf("start b")).toBeLessThan(log.indexOf("end a"));
  });

  it("returns a denial with the user's reason to the model and goes on", async () => {
    const { agent, provider, log } = await setup([{ blocks: [call("t1", "poke", { what: "x" })] }, { blocks: [text("understood")] }]);
    const events = await drain(agent.run("poke it"), (e) => {
      if (e.type === "permission_request") agent.respond(e.request_id, { allow: false, reason: "not today" });
    });
    expect(log).not.toContain("poke x");
    const result = provider.requests[1]!.messages[2]!.blocks[0]!;
    expect(result).toMatchObject({ type: "tool_result", id: "t1", is_error: true });
    expect((result as { content: string }).content).toContain("not today");
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
  });

  it("refuses a second answer to the same permission request", async () => {
    const { agent, log } = await setup([{ blocks: [call("t1", "poke", { what: "x" })] }, { blocks: [text("ok")] }]);
    let second: unknown;
    const events = await drain(agent.run("poke"), (e) => {
      if (e.type === "permission_request") {
        agent.respond(e.request_id, { allow: true });
        try {
          agent.respond(e.request_id, { allow: false });
        } catch (err) {
          second = err;
        }
      }
    });
    // the checks above ran: there was one request, and the first answer is the one that counted
    expect(events.filter((e) => e.type === "permission_request")).toHaveLength(1);
    expect(String(second)).toMatch(/already answered/);
    expect(log).toEqual(["poke x"]);
  });

  it("answers every tool_use when a turn is interrupted mid-tool", async () => {
    const { agent, provider } = await setup(
      [{ blocks: [text("working"), call("t1", "poke", { what: "slow" }), call("t2", "peek", { word: "never" })] }, { blocks: [text("after")] }],
      { mode: "yolo" },
    );
    const events = await drain(agent.run("go"), (e) => {
      if (e.type === "tool_start" && e.tool_id === "t1") setTimeout(() => agent.cancel(), 20);
    });
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
    const last = agent.messages.at(-1)!;
    expect(last.role).toBe("user");
    expect(last.blocks.map((b) => (b as { id: string }).id)).toEqual(["t1", "t2"]);
    expect((last.blocks[1] as { content: string }).content).toBe("interrupted by user");
    // the next prompt is merged into the trailing user message so roles alternate
    await drain(agent.run("continue"));
    const req = provider.requests[1]!;
    const roles = req.messages.map((m) => m.role);
    for (let i = 1; i < roles.length; i++) expect(roles[i]).not.toBe(roles[i - 1]);
  });

  it("close() during a tool call lets the cancelled turn write its tool results before the session closes", async () => {
    const { agent } = await setup([{ blocks: [call("t1", "poke", { what: "slow" })] }], { mode: "yolo" });
    const started = new Promise<void>((resolve) => {
      void drain(agent.run("go"), (e) => {
        if (e.type === "tool_start") resolve();
      });
    });
    await started;
    let lastAtClose: unknown;
    const close = agent.session.close.bind(agent.session);
    agent.session.close = async () => {
      lastAtClose = agent.session.entries().at(-1);
      return close();
    };
    await agent.close("exit");
    expect(lastAtClose).toMatchObject({ type: "message", message: { role: "user", blocks: [{ type: "tool_result", id: "t1" }] } });
  });

  it("keeps partial text with an interrupted marker when the stream is cut", async () => {
    const { agent } = await setup([{ blocks: [text("a long answer that streams slowly")], delayMs: 15 }]);
    const events = await drain(agent.run("talk"), (e) => {
      if (e.type === "text_delta") agent.cancel();
    });
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
    const msg = agent.messages.at(-1)!;
    expect(msg.role).toBe("assistant");
    expect(JSON.stringify(msg.blocks)).toContain("interrupted by user");
  });

  it("keeps the prompt prefix byte-identical across the requests of one context", async () => {
    const { agent, provider } = await setup([
      { blocks: [call("t1", "peek", { word: "a" })] },
      { blocks: [call("t2", "peek", { word: "b" })] },
      { blocks: [text("end")] },
      { blocks: [text("second turn")] },
    ]);
    await drain(agent.run("one"));
    await drain(agent.run("two"));
    const [r0, ...rest] = provider.requests;
    for (const r of rest) {
      expect(r.system).toBe(r0!.system);
      expect(JSON.stringify(r.tools)).toBe(JSON.stringify(r0!.tools));
    }
    // each request's messages start with the previous request's messages
    for (let i = 1; i < provider.requests.length; i++) {
      const prev = JSON.stringify(provider.requests[i - 1]!.messages);
      expect(JSON.stringify(provider.requests[i]!.messages).startsWith(prev.slice(0, -1))).toBe(true);
    }
    expect(r0!.tools.map((t) => t.name)).toEqual(["peek", "poke"]);
  });

  it("returns INVALID_ARGUMENTS and INVALID_JSON results and the turn goes on", async () => {
    const { agent, provider } = await setup([
      {
        blocks: [
          call("t1", "peek", { word: 42 }),
          { type: "tool_use", id: "t2", name: "peek", input: {}, raw_input: '{"word": "tru' },
          call("t3", "nosuch", {}),
          call("t4", "Peek", { word: "x" }),
          call("t5", "poke_file", { what: "x" }),
          { type: "tool_use", id: "t6", name: "peek", input: {}, raw_input: '["x"]' },
        ],
      },
      { blocks: [text("retrying")] },
    ]);
    const events = await drain(agent.run("go"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const results = provider.requests[1]!.messages[2]!.blocks as { content: string; is_error?: boolean }[];
    expect(results[0]!.content).toMatch(/^INVALID_ARGUMENTS: peek: word:/);
    expect(results[1]!.content).toBe('INVALID_JSON: the arguments of peek were not complete JSON ({"word": "tru). Resend the call with the complete JSON arguments.');
    // complete JSON of the wrong kind is not called incomplete
    expect(results[5]!.content).toBe('INVALID_JSON: the arguments of peek must be one JSON object, got an array (["x"]). Resend the call with the arguments as a JSON object.');
    expect(results[2]!.content).toBe('unknown tool "nosuch": available tools are peek, poke');
    expect(results[3]!.content).toBe('unknown tool "Peek" (did you mean "peek"?): available tools are peek, poke');
    expect(results[4]!.content).toBe('unknown tool "poke_file" (did you mean "poke"?): available tools are peek, poke');
    expect(results.every((r) => r.is_error)).toBe(true);
  });

  it("lists at most 40 tools to a call of an unknown one", async () => {
    const many = definePlugin({
      name: "many-tools",
      setup(ctx) {
        for (let i = 10; i < 55; i++) {
          ctx.tools.register(defineTool({ name: `t${i}`, description: "A numbered test tool.", input: z.object({}), kind: "read", run: async () => ({ content: "ok" }) }));
        }
      },
    });
    const { agent, provider } = await setup([{ blocks: [call("c1", "nosuch", {})] }, { blocks: [text("ok")] }], { plugins: [many] });
    await drain(agent.run("go"));
    const result = (provider.requests[1]!.messages.at(-1)!.blocks[0] as { content: string }).content;
    expect(result).toMatch(/^unknown tool "nosuch": available tools are peek, poke, t10, .*, t47, and 7 more$/);
  });

  it("refuses a second turn while one runs", async () => {
    const { agent } = await setup([{ blocks: [text("slow")], delayMs: 20 }]);
    const it1 = agent.run("one");
    expect(() => agent.run("two")).toThrow(/already running/);
    await drain(it1);
  });

  it("puts queued notes into the next user message as system-notes", async () => {
    const { agent, provider } = await setup([{ blocks: [text("ok")] }]);
    agent.addNote("files were reverted: a.txt");
    await drain(agent.run("hello"));
    const first = provider.requests[0]!.messages[0]!;
    expect(first.blocks[0]).toEqual({ type: "text", text: "<system-note>files were reverted: a.txt</system-note>" });
    expect(first.blocks[1]).toEqual({ type: "text", text: "hello" });
    // the prompt list shows what the user typed, not the note sent with it (as the server's does)
    expect(agent.prompts()).toEqual([{ index: 0, text: "hello" }]);
  });

  it("sends a queued note once: the next prompt goes without it", async () => {
    const { agent, provider } = await setup([{ blocks: [text("ok")] }, { blocks: [text("ok")] }]);
    agent.addNote("files were reverted: a.txt");
    await drain(agent.run("hello"));
    await drain(agent.run("again"));
    expect(provider.requests[1]!.messages.at(-1)!.blocks).toEqual([{ type: "text", text: "again" }]);
  });

  it("a mention note goes with its own prompt: one refused as busy hands none to the running turn or the next", async () => {
    const { agent, provider } = await setup([{ blocks: [text("slow")], delayMs: 30 }, { blocks: [text("ok")] }]);
    // expanding a mention of nothing leaves the agent's queue alone: the note comes back to the caller
    const x = await expandMentions("see @docs/missing.md", agent);
    expect(x.notes).toEqual(["The user's mention @docs/missing.md was not attached: there is no file or folder at docs/missing.md."]);
    const running = agent.run("first");
    expect(() => agent.run(x.blocks, { notes: x.notes })).toThrow(/already running/);
    await drain(running);
    await drain(agent.run("second"));
    const sent = provider.requests.flatMap((r) => r.messages.flatMap((m) => m.blocks)).filter((b) => b.type === "text").map((b) => (b as { text: string }).text);
    expect(sent.filter((t) => t.includes("system-note"))).toEqual([]);
    // accepted, the prompt carries its notes
    const { agent: a2, provider: p2 } = await setup([{ blocks: [text("ok")] }]);
    await drain(a2.run(x.blocks, { notes: x.notes }));
    expect(p2.requests[0]!.messages[0]!.blocks[0]).toEqual({ type: "text", text: `<system-note>${x.notes[0]}</system-note>` });
  });

  it("a mention followed by prose punctuation attaches the file it names, with its line range", async () => {
    const { agent } = await setup([]);
    mkdirSync(join(agent.host.cwd, "src"));
    writeFileSync(join(agent.host.cwd, "src", "a.ts"), "one\ntwo\n");
    writeFileSync(join(agent.host.cwd, "odd,"), "a name that ends in a comma\n");
    const x = await expandMentions("see @src/a.ts, then @src/a.ts#L2. and @odd, (or @nowhere.md.) @alice! (@src/, mail@src/a.ts)", agent);
    const attached = x.blocks.slice(1).map((b) => (b as { attachment?: string }).attachment);
    expect(attached).toEqual(["src/a.ts", "src/a.ts#L2-2", "odd,", "src/"]);
    expect((x.blocks[2] as { text: string }).text).toBe('<file path="src/a.ts" lines="2-2">\n     2\ttwo\n</file>');
    expect(x.notices).toEqual(["@nowhere.md not attached: there is no file or folder at nowhere.md"]);
  });

  it("stops at max_turns", async () => {
    const host = await Host.create({ plugins: [toolsPlugin([])], cwd: tmp(), settings: { max_turns: 2 } });
    const provider = new ScriptedProvider([
      { blocks: [call("t1", "peek", { word: "a" })] },
      { blocks: [call("t2", "peek", { word: "a" })] },
      { blocks: [call("t3", "peek", { word: "a" })] },
    ]);
    const agent = await host.openAgent({ provider, model: "s/x" });
    const events = await drain(agent.run("loop"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "max_turns" });
    expect(provider.requests).toHaveLength(2);
  });

  it("ends with an error event and stop reason error when the provider fails", async () => {
    const { agent } = await setup([{ error: new Error("boom") }]);
    const events = await drain(agent.run("x"));
    expect(events.filter((e) => e.type === "error").map((e) => (e as { text: string }).text)).toEqual(["boom"]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "error" });
  });
});

describe("plugin host", () => {
  it("reports a plugin that throws in setup by name and starts without it", async () => {
    const bad = definePlugin({
      name: "broken",
      setup(ctx) {
        ctx.tools.register(defineTool({ name: "half", description: "x", input: z.object({}), kind: "read", run: async () => ({ content: "" }) }));
        throw new Error("cannot start");
      },
    });
    const host = await Host.create({ plugins: [bad, toolsPlugin([])], cwd: tmp(), settings: {} });
    expect(host.plugins).toEqual(["test-tools"]);
    expect(host.notices.join("\n")).toMatch(/plugin "broken" failed in setup: cannot start/);
    expect(host.tools.get("half")).toBeUndefined();
  });

  it("re-raises an error from a hook with the plugin and hook name", async () => {
    const thrower = definePlugin({
      name: "grumpy",
      setup(ctx) {
        ctx.hooks.userPromptSubmit.tap(() => {
          throw new Error("no prompts today");
        });
      },
    });
    const { agent } = await setup([{ blocks: [text("never")] }], { plugins: [thrower] });
    const events = await drain(agent.run("hi"));
    const err = events.find((e) => e.type === "error") as { text: string };
    expect(err.text).toBe('plugin "grumpy" failed in hook "userPromptSubmit": no prompts today');
  });

  it("a throw in preToolUse blocks that call (fails closed); one in postToolUse is a notice and the result stands", async () => {
    const strict = definePlugin({
      name: "strict",
      setup(ctx) {
        ctx.hooks.preToolUse.tap((info) => {
          if ((info.input as { word?: string }).word === "x") throw new Error("policy server down");
          return undefined;
        });
        ctx.hooks.postToolUse.tap(() => {
          throw new Error("cannot log");
        });
      },
    });
    const { agent, provider, log } = await setup(
      [{ blocks: [call("t1", "peek", { word: "x" }), call("t2", "peek", { word: "y" })] }, { blocks: [text("ok")] }],
      { plugins: [strict] },
    );
    const events = await drain(agent.run("peek"));
    expect(log).toEqual(["start y", "end y"]);
    const results = provider.requests[1]!.messages.at(-1)!.blocks as { id: string; content: string; is_error?: boolean }[];
    expect(results.map((b) => [b.id, b.content, b.is_error ?? false])).toEqual([
      ["t1", 'blocked: plugin "strict" failed in hook "preToolUse": policy server down', true],
      ["t2", "peeked y", false],
    ]);
    expect(events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toContain(
      'plugin "strict" failed in hook "postToolUse": cannot log',
    );
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
  });

  it("a tap given tapable's (name, fn) skips the plugin at setup with a line saying how to tap", async () => {
    const p = definePlugin({
      name: "tapable-habit",
      setup(ctx) {
        (ctx.hooks.preToolUse.tap as unknown as (n: string, f: () => void) => void)("mine", () => undefined);
      },
    });
    const host = await Host.create({ plugins: [toolsPlugin([]), p], cwd: tmp(), settings: {} });
    expect(host.notices).toEqual([
      'plugin "tapable-habit" failed in setup: hooks.preToolUse.tap expects a function, got string: the tap is named after your plugin, so write hooks.preToolUse.tap(fn); started without it',
    ]);
  });

  it("a malformed tool is refused at registration, so its plugin is skipped by name instead of every turn failing", async () => {
    let builds = 0;
    const registers = (name: string, tool: Record<string, unknown>) =>
      definePlugin({ name, setup: (ctx) => void ctx.tools.register({ description: "d", kind: "read", input: z.object({}), run: async () => ({ content: "" }), ...tool } as never) });
    const host = await Host.create({
      plugins: [
        toolsPlugin([]),
        registers("json-schema", { name: "js", input: { type: "object", properties: {} } }),
        registers("no-input", { name: "ni", input: undefined }),
        registers("typo-kind", { name: "tk", kind: "readonly" }),
        registers("spaced", { name: "my tool" }),
        registers("lazy", { name: "lz", input: lazySchema(() => (builds++, z.object({}))) }),
      ],
      cwd: tmp(),
      settings: {},
    });
    expect(host.notices).toEqual([
      'plugin "json-schema" failed in setup: tool "js": input must be a zod 4 schema such as z.object({ … }), got a JSON Schema (it may go in inputJsonSchema, beside a zod schema); started without it',
      'plugin "no-input" failed in setup: tool "ni": input must be a zod 4 schema such as z.object({ … }), got undefined; started without it',
      'plugin "typo-kind" failed in setup: tool "tk": kind must be one of read, write, bash, network, other, got "readonly"; started without it',
      'plugin "spaced" failed in setup: tool "my tool": a name is 1 to 64 letters, digits, _ or - (what model APIs accept); started without it',
    ]);
    // a lazy schema is taken without being built
    expect(host.tools.get("lz")).toBeDefined();
    expect(builds).toBe(0);
  });

  it("a slash command registered with its slash, or without run, is refused naming it", async () => {
    const registers = (name: string, command: Record<string, unknown>) =>
      definePlugin({ name, setup: (ctx) => void ctx.commands.register({ description: "d", run: async () => undefined, ...command } as never) });
    const host = await Host.create({ plugins: [registers("slashed", { name: "/deploy" }), registers("runless", { name: "deploy", run: undefined }), registers("fine", { name: "ship:it" })], cwd: tmp(), settings: {} });
    expect(host.notices).toEqual([
      'plugin "slashed" failed in setup: command "/deploy": a name is letters, digits, _ : . or -, without the slash ("deploy"): users type /deploy; started without it',
      'plugin "runless" failed in setup: command "deploy": run(ctx) must be a function; started without it',
    ]);
    expect(host.commands.list().map((c) => c.name)).toEqual(["ship:it"]);
  });

  it("a tap of a hook that does not exist skips the plugin at setup naming the hook and the nearest one", async () => {
    const tapOf = (hook: string) =>
      definePlugin({
        name: `taps-${hook}`,
        setup(ctx) {
          (ctx.hooks as unknown as Record<string, { tap(fn: () => void): void }>)[hook]!.tap(() => undefined);
        },
      });
    const host = await Host.create({ plugins: [toolsPlugin([]), tapOf("preToolsUse"), tapOf("onMessage"), tapOf("stop")], cwd: tmp(), settings: {} });
    expect(host.plugins).toContain("taps-stop");
    expect(host.notices).toEqual([
      'plugin "taps-preToolsUse" failed in setup: ctx.hooks has no hook "preToolsUse": did you mean "preToolUse"?; started without it',
      'plugin "taps-onMessage" failed in setup: ctx.hooks has no hook "onMessage"; the hooks are systemPrompt, loadTools, sessionStart, sessionEnd, userPromptSubmit, preToolUse, postToolUse, stop, subagentStop, preCompact, event; started without it',
    ]);
  });

  it("undoes every registration of a plugin: taps and registry entries", async () => {
    const seen: string[] = [];
    const p = definePlugin({
      name: "watcher",
      setup(ctx) {
        ctx.hooks.systemPrompt.tap((sections) => [...sections, "WATCHER SECTION"]);
        ctx.hooks.event.tap((e) => void seen.push(e.type));
      },
    });
    const host = await Host.create({ plugins: [toolsPlugin([]), p], cwd: tmp(), settings: {} });
    await host.unload("watcher");
    const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
    const agent = await host.openAgent({ provider, model: "s/x" });
    await drain(agent.run("hi"));
    expect(provider.requests[0]!.system).not.toContain("WATCHER SECTION");
    expect(seen).toEqual([]);
  });

  it("gives each plugin its own hook facade: errors and unloads concern only that plugin", async () => {
    const seen: string[] = [];
    const reachable: string[] = [];
    const tapper = (name: string, fail: boolean) =>
      definePlugin({
        name,
        setup(ctx) {
          // only the wrapping facades: the host's own hooks are not reachable from a plugin
          for (const k in ctx.hooks) reachable.push(k);
          reachable.push(...Object.getOwnPropertyNames(ctx.hooks));
          expect(() => (ctx.hooks as unknown as Record<string, unknown>).hooks).toThrow('ctx.hooks has no hook "hooks"');
          ctx.hooks.userPromptSubmit.tap(() => {
            seen.push(name);
            if (fail) throw new Error(`${name} says no`);
          });
        },
      });
    const host = await Host.create({ plugins: [toolsPlugin([]), tapper("first", false), tapper("second", true)], cwd: tmp(), settings: {} });
    const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
    let agent = await host.openAgent({ provider, model: "s/x" });
    const err = (await drain(agent.run("hi"))).find((e) => e.type === "error") as { text: string };
    expect(err.text).toBe('plugin "second" failed in hook "userPromptSubmit": second says no');
    expect(seen).toEqual(["first", "second"]);
    expect(new Set(reachable)).toEqual(new Set(Object.keys(host.hooks)));
    await host.unload("second");
    seen.length = 0;
    agent = await host.openAgent({ provider, model: "s/x" });
    await drain(agent.run("hi"));
    expect(seen).toEqual(["first"]);
  });

  it("a requires of a missing plugin is reported and the plugin skipped", async () => {
    const needy = definePlugin({ name: "needy", requires: ["absent"], setup() {} });
    const host = await Host.create({ plugins: [needy], cwd: tmp(), settings: {} });
    expect(host.plugins).toEqual([]);
    expect(host.notices[0]).toBe('plugin "needy" failed in setup: requires "absent", which is not in the plugin list; started without it');
  });

  it("tells the model at each prompt that plan mode is on, and at the next one that it ended", async () => {
    const host = await Host.create({ plugins: [toolsPlugin([])], cwd: tmp(), settings: {} });
    const provider = new ScriptedProvider([
      { blocks: [call("t1", "poke", { what: "x" })] },
      { blocks: [text("Plan: poke x.")] },
      { blocks: [text("more plan")] },
      { blocks: [text("poked")] },
      { blocks: [text("ok")] },
      { blocks: [text("still planning")] },
      { blocks: [text("resumed")] },
    ]);
    const agent = await host.openAgent({ provider, model: "s/x", mode: "plan" });
    const promptText = (i: number) => {
      const msgs = provider.requests[i]!.messages;
      const last = msgs.findLast((m) => m.role === "user" && m.blocks.some((b) => b.type === "text"))!;
      return last.blocks.map((b) => (b.type === "text" ? b.text : "")).join("\n");
    };
    await drain(agent.run("plan the poke"));
    // no exit_plan_mode tool here: the plan is the answer, and nothing names a missing tool
    expect(promptText(0)).toMatch(/^<system-note>Plan mode is on: .*present your plan as your answer.*<\/system-note>\nplan the poke$/);
    const refusal = provider.requests[1]!.messages[2]!.blocks[0] as { content: string };
    expect(refusal.content).toBe("permission denied: plan mode: poke is blocked until the plan is approved; use read-only tools, then present the plan");
    for (const t of [promptText(0), refusal.content]) expect(t).not.toContain("exit_plan_mode");
    await drain(agent.run("refine it"));
    expect(promptText(2)).toMatch(/^<system-note>Plan mode is on: /);
    agent.checker.mode = "yolo";
    await drain(agent.run("do it"));
    expect(promptText(3)).toMatch(/^<system-note>Plan mode has ended: .*<\/system-note>\ndo it$/);
    await drain(agent.run("thanks"));
    expect(promptText(4)).toBe("thanks");
    // a session resumed in another mode after a plan-mode prompt hears that plan mode ended
    agent.checker.mode = "plan";
    await drain(agent.run("look again"));
    expect(promptText(5)).toMatch(/^<system-note>Plan mode is on: /);
    const resumed = await host.openAgent({ provider, model: "s/x", mode: "yolo", session: agent.session });
    await drain(resumed.run("go"));
    expect(promptText(6)).toMatch(/^<system-note>Plan mode has ended: .*<\/system-note>\ngo$/);
  });

  it("is an Agent", async () => {
    const { agent } = await setup([]);
    expect(agent).toBeInstanceOf(Agent);
  });
});
