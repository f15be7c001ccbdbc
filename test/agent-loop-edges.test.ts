/**
 * Edge cases of the agent loop and its event contract (LARIK-REFERENCE §2, §5, §22; DESIGN.md
 * invariants), driven by the scripted provider: what a front end sees when a turn ends in an
 * unusual way, and that the transcript keeps every tool_use answered.
 */
import { getEventListeners } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Agent, defineTool, definePlugin, Host, type AgentEvent, type ModelRequest, type Plugin, type Provider, type StreamEvent, type Usage } from "../kernel/index.js";
import { call, ScriptedProvider, text, type Script } from "./fakes/scripted-provider.js";
import { drain } from "./fakes/drain.js";
import { toolsPlugin } from "./fakes/loop-tools.js";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "larik-edges-"));
}

const tools = toolsPlugin([]);


async function setup(scripts: Script[], opts: { mode?: "default" | "yolo"; plugins?: Plugin[]; settings?: Record<string, unknown> } = {}) {
  const host = await Host.create({ plugins: [tools, ...(opts.plugins ?? [])], cwd: tmp(), settings: opts.settings ?? {} });
  const provider = new ScriptedProvider(scripts);
  const agent = await host.openAgent({ provider, model: "scripted/test", mode: opts.mode ?? "yolo" });
  return { host, provider, agent };
}

describe("one turn at a time", () => {
  it("is idle when done arrives: the next prompt may start from the done handler", async () => {
    const { agent } = await setup([{ blocks: [text("first")] }, { blocks: [text("second")] }]);
    let next: AsyncIterable<AgentEvent> | undefined;
    let runningAtDone: boolean | undefined;
    await drain(agent.run("one"), (e) => {
      if (e.type !== "done") return;
      runningAtDone = agent.running;
      next = agent.run("two");
    });
    expect(runningAtDone).toBe(false);
    const events = await drain(next!);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
  });
});

describe("cancelling in the authorize phase (§5: authorize all calls in order, then run)", () => {
  it("answers the call waiting for permission and the calls after it as interrupted, not as denied by the user", async () => {
    const { agent } = await setup(
      [{ blocks: [call("t1", "peek", { word: "a" }), call("t2", "poke", { what: "x" }), call("t3", "peek", { word: "b" })] }],
      { mode: "default" },
    );
    const events = await drain(agent.run("go"), (e) => {
      if (e.type === "permission_request") agent.cancel();
    });
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
    const results = agent.messages.at(-1)!.blocks;
    expect(results).toEqual([
      { type: "tool_result", id: "t1", content: "interrupted by user", is_error: true },
      { type: "tool_result", id: "t2", content: "interrupted by user", is_error: true },
      { type: "tool_result", id: "t3", content: "interrupted by user", is_error: true },
    ]);
    // the question was withdrawn with the turn: a late answer to it finds nothing to answer
    expect(() => agent.respond("perm-1", { allow: true })).toThrow(/unknown or was already answered/);
    // every call's answer is visible in the events too
    const ends = events.filter((e) => e.type === "tool_end") as { tool_id: string; output: string; is_error: boolean }[];
    expect(ends.map((e) => e.tool_id).sort()).toEqual(["t1", "t2", "t3"]);
    expect(ends.every((e) => e.output === "interrupted by user" && e.is_error)).toBe(true);
  });

  it("authorizes no call after the cancel: no preToolUse hook runs for it, and a denied one reads as interrupted", async () => {
    const seen: string[] = [];
    const watcher = definePlugin({
      name: "watcher",
      setup(ctx) {
        ctx.hooks.preToolUse.tap(async (info) => {
          seen.push(info.tool_use_id);
          return undefined;
        });
      },
    });
    const { agent } = await setup(
      [{ blocks: [call("t1", "poke", { what: "x" }), call("t2", "poke", { what: "y" }), call("t3", "peek", { word: "b" })] }],
      { mode: "default", plugins: [watcher], settings: { permissions: { deny: ["poke(y)"] } } },
    );
    await drain(agent.run("go"), (e) => {
      if (e.type === "permission_request") agent.cancel();
    });
    expect(agent.messages.at(-1)!.blocks).toEqual([
      { type: "tool_result", id: "t1", content: "interrupted by user", is_error: true },
      { type: "tool_result", id: "t2", content: "interrupted by user", is_error: true },
      { type: "tool_result", id: "t3", content: "interrupted by user", is_error: true },
    ]);
    // a hook (a shell command of the hooks plugin) must not run for a call of a turn the user stopped
    expect(seen).toEqual(["t1"]);
  });

  it("does not ask for permission when the turn was cancelled while a preToolUse hook ran", async () => {
    const cancelling = definePlugin({
      name: "cancelling-hook",
      setup(ctx) {
        ctx.hooks.preToolUse.tap(async (info) => {
          info.agent.cancel();
          return undefined;
        });
      },
    });
    const { agent } = await setup([{ blocks: [call("t1", "poke", { what: "x" })] }], { mode: "default", plugins: [cancelling] });
    // without an answer a permission_request would hold the turn forever: answer nothing
    const events = await drain(agent.run("go"));
    expect(events.map((e) => e.type)).not.toContain("permission_request");
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
    expect(agent.messages.at(-1)!.blocks).toEqual([{ type: "tool_result", id: "t1", content: "interrupted by user", is_error: true }]);
  }, 5_000);

  it("leaves no abort listener behind for answered permission requests", async () => {
    let listeners = -1;
    const counter = definePlugin({
      name: "listener-counter",
      setup(ctx) {
        ctx.tools.register(
          defineTool({
            name: "count_listeners",
            description: "Counts abort listeners on the turn's signal.",
            input: z.object({}),
            kind: "read",
            async run(_input, tctx) {
              listeners = getEventListeners(tctx.signal, "abort").length;
              return { content: String(listeners) };
            },
          }),
        );
      },
    });
    // what a turn without permission requests has on its signal when the tool runs
    const scripts: Script[] = [{ blocks: [call("c0", "count_listeners", {})] }, { blocks: [text("done")] }];
    for (let i = 0; i < 12; i++) scripts.push({ blocks: [call(`p${i}`, "poke", { what: `f${i}` })] });
    scripts.push({ blocks: [call("c", "count_listeners", {})] }, { blocks: [text("done")] });
    const { agent } = await setup(scripts, { mode: "default", plugins: [counter] });
    await drain(agent.run("baseline"));
    const baseline = listeners;
    await drain(agent.run("go"), (e) => {
      if (e.type === "permission_request") agent.respond(e.request_id, { allow: true });
    });
    expect(listeners).toBe(baseline);
  });
});

describe("a tool's precheck (run before the user is asked)", () => {
  /** A write tool whose precheck is `precheck`, as a plain-JavaScript plugin may write it. */
  const checked = (precheck: (input: { what: string }) => unknown) =>
    definePlugin({
      name: "prechecked",
      setup(ctx) {
        ctx.tools.register(
          defineTool({
            name: "guarded",
            description: "Changes something, after a precheck.",
            input: z.object({ what: z.string() }),
            kind: "write",
            writePaths: ({ what }) => [what],
            precheck: precheck as never,
            async run({ what }) {
              return { content: `guarded ${what}` };
            },
          }),
        );
      },
    });

  it("a precheck that throws at once, answers without a promise or answers a non-string leaves the question; a string answers the call", async () => {
    const { agent } = await setup(
      [
        // one call per reply: a call after another of its reply is not prechecked
        ...["throw", "sync", "object", "refuse"].map((what, i) => ({ blocks: [call(`g${i}`, "guarded", { what })] })),
        { blocks: [text("done")] },
      ],
      {
        mode: "default",
        plugins: [
          checked(({ what }) => {
            if (what === "throw") throw new Error("precheck bug");
            if (what === "object") return { oops: true };
            if (what === "refuse") return Promise.resolve("refuse does not exist");
            return undefined;
          }),
        ],
      },
    );
    const asked: string[] = [];
    const events = await drain(agent.run("go"), (e) => {
      if (e.type !== "permission_request") return;
      asked.push(e.tool_id);
      agent.respond(e.request_id, { allow: true });
    });
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(asked).toEqual(["g0", "g1", "g2"]);
    const results = agent.messages.filter((m) => m.role === "user").slice(1).map((m) => m.blocks[0]);
    expect(results).toEqual([
      { type: "tool_result", id: "g0", content: "guarded throw" },
      { type: "tool_result", id: "g1", content: "guarded sync" },
      { type: "tool_result", id: "g2", content: "guarded object" },
      { type: "tool_result", id: "g3", content: "refuse does not exist", is_error: true },
    ]);
  });

  it("a cancel while the precheck runs interrupts the call instead of asking", async () => {
    let agent!: Agent;
    const setupResult = await setup([{ blocks: [call("g1", "guarded", { what: "x" })] }], {
      mode: "default",
      plugins: [
        checked(async () => {
          agent.cancel();
          return undefined;
        }),
      ],
    });
    agent = setupResult.agent;
    // without an answer a permission_request would hold the turn forever: answer nothing
    const events = await drain(agent.run("go"));
    expect(events.map((e) => e.type)).not.toContain("permission_request");
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
    expect(agent.messages.at(-1)!.blocks).toEqual([{ type: "tool_result", id: "g1", content: "interrupted by user", is_error: true }]);
  }, 5_000);
});

describe("odd replies from the model", () => {
  it("an empty reply (no text, no calls) ends the turn with a notice that says so", async () => {
    const { agent, provider } = await setup([{ blocks: [] }, { blocks: [{ type: "thinking", text: "hmm" }, text("  ")] }, { blocks: [text("fine")] }]);
    for (const prompt of ["one", "two"]) {
      const events = await drain(agent.run(prompt));
      expect(events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toEqual(["the model returned an empty reply"]);
      expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    }
    const events = await drain(agent.run("three"));
    expect(events.filter((e) => e.type === "notice")).toEqual([]);
    // roles still alternate in what is sent after the empty replies
    const roles = provider.requests[2]!.messages.map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "user", "assistant", "user"]);
  });

  it("gives calls that share a tool_use id (or have none) their own ids, so each result reaches its call", async () => {
    const { agent, provider } = await setup([
      {
        blocks: [
          call("c1", "peek", { word: "a" }),
          call("c1", "peek", { word: "b" }),
          call("c1_2", "peek", { word: "c" }),
          call("", "peek", { word: "d" }),
        ],
      },
      { blocks: [text("done")] },
    ]);
    const events = await drain(agent.run("go"));
    const sent = provider.requests[1]!.messages;
    const ids = sent[1]!.blocks.map((b) => (b as { id: string }).id);
    expect(new Set(ids).size).toBe(4);
    expect(ids[0]).toBe("c1");
    expect(ids[2]).toBe("c1_2");
    expect(ids.every((id) => id.length > 0)).toBe(true);
    // each call's own result, in order
    expect(sent[2]!.blocks).toEqual(
      ["a", "b", "c", "d"].map((w, i) => ({ type: "tool_result", id: ids[i], content: `peeked ${w}` })),
    );
    // the events name the ids that were stored
    expect(events.filter((e) => e.type === "tool_end").map((e) => (e as { tool_id: string }).tool_id)).toEqual(ids);
    expect(agent.history()[1]!.blocks.map((b) => (b as { id: string }).id)).toEqual(ids);
  });
});

describe("how a turn ends", () => {
  it("at max_turns: an error event (as Claude Code: the task is unfinished), then done with stop reason max_turns", async () => {
    const { agent, provider } = await setup([{ blocks: [call("t1", "peek", { word: "a" })] }, { blocks: [call("t2", "peek", { word: "b" })] }], {
      settings: { max_turns: 2 },
    });
    const events = await drain(agent.run("loop"));
    expect(provider.requests).toHaveLength(2);
    const errors = events.filter((e) => e.type === "error").map((e) => (e as { text: string }).text);
    expect(errors).toEqual([expect.stringMatching(/^stopped after 2 model rounds \(max_turns\)/)]);
    expect(events.filter((e) => e.type === "notice")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "max_turns" });
    // the last round's calls are answered in the transcript all the same
    expect(agent.messages.at(-1)!.blocks).toEqual([{ type: "tool_result", id: "t2", content: "peeked b" }]);
  });

  it("a cancel during the calls of the last round allowed by max_turns ends it as interrupted, not at max_turns", async () => {
    const { agent } = await setup([{ blocks: [call("t1", "poke", { what: "slow" })] }], { settings: { max_turns: 1 } });
    const events = await drain(agent.run("go"), (e) => {
      if (e.type === "tool_start") agent.cancel();
    });
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
  });

  it("after a paused reply (pause_turn) the loop sends it back so the model goes on, without running Stop", async () => {
    let stops = 0;
    const stopCounter = definePlugin({ name: "stop-counter", setup: (ctx) => void ctx.hooks.stop.tap(async () => void stops++) });
    const paused = { type: "opaque" as const, provider: "scripted", raw: { type: "server_tool_use", id: "srv1" } };
    const { agent, provider } = await setup([{ blocks: [text("Searching"), paused], stop: "pause_turn" }, { blocks: [text(" and found it.")] }], {
      plugins: [stopCounter],
    });
    const events = await drain(agent.run("search"));
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({ role: "assistant", blocks: [{ type: "text", text: "Searching" }, paused] });
    expect(stops).toBe(1);
    expect(events.filter((e) => e.type === "notice")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
  });

  it("at the model's output limit and on a refusal: a notice says so before done", async () => {
    for (const [stop, said] of [
      ["max_tokens", "the reply hit the model's output limit (max_tokens)"],
      ["refusal", "the model refused to answer"],
    ] as const) {
      const { agent } = await setup([{ blocks: [text("partial")], stop }]);
      const events = await drain(agent.run("go"));
      expect(events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toEqual([said]);
      expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: stop });
    }
  });
});

describe("tools that fail", () => {
  it("a throw or a malformed result answers that call with an error, a broken postToolUse hook is ignored; the others keep theirs and the turn goes on", async () => {
    const odd = definePlugin({
      name: "odd-tools",
      setup(ctx) {
        const tool = (name: string, run: () => unknown) =>
          ctx.tools.register(defineTool({ name, description: name, input: z.object({}), kind: "read", run: run as never }));
        tool("throws", () => {
          throw new Error("kaboom");
        });
        tool("nothing", async () => undefined);
        tool("number", async () => ({ content: 42 }));
        tool("flag", async () => ({ content: "x", is_error: "yes" }));
        tool("huge", async () => ({ content: "y".repeat(2_000_000) }));
        tool("hooked", async () => ({ content: "fine" }));
        ctx.hooks.postToolUse.tap(async (result, info) => (info.tool.name === "hooked" ? (null as never) : result));
      },
    });
    const names = ["throws", "nothing", "number", "flag", "huge", "hooked"];
    const { agent, provider } = await setup([{ blocks: [...names.map((n, i) => call(`c${i}`, n, {})), call("ok", "peek", { word: "w" })] }, { blocks: [text("noted")] }], {
      plugins: [odd],
    });
    const events = await drain(agent.run("go"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    const results = provider.requests[1]!.messages[2]!.blocks as { id: string; content: string; is_error?: boolean }[];
    expect(results.map((r) => r.id)).toEqual([...names.map((_, i) => `c${i}`), "ok"]);
    expect(results[0]).toMatchObject({ content: "throws failed: kaboom", is_error: true });
    expect(results[1]).toMatchObject({ content: expect.stringMatching(/^nothing returned no valid result \(.*got undefined\)$/), is_error: true });
    expect(results[2]).toMatchObject({ content: expect.stringMatching(/^number returned no valid result \(.*got content of type number\)$/), is_error: true });
    expect(results[3]).toMatchObject({ content: expect.stringMatching(/^flag returned no valid result \(.*got is_error of type string\)$/), is_error: true });
    // a huge result is capped (head and tail kept), in the transcript and in the event
    expect(results[4]!.content.length).toBeLessThan(40_000);
    expect(results[4]!.content.startsWith("yyyy")).toBe(true);
    expect((events.find((e) => e.type === "tool_end" && e.tool_id === "c4") as { output: string }).output).toBe(results[4]!.content);
    // a hook that breaks a result is reported; the tool's own result stands
    expect(results[5]).toEqual({ type: "tool_result", id: "c5", content: "fine" });
    expect(events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toEqual([
      // the tap's answer is checked where it is given, so the notice names the plugin
      'plugin "odd-tools" failed in hook "postToolUse": returned null; return the result ({ content: string, is_error? }), changed or not',
    ]);
    expect(results[6]).toEqual({ type: "tool_result", id: "ok", content: "peeked w" });
  });
});

/**
 * An agent with a 1000-token window that plays `replies`, then is cancelled while the summary of
 * the compaction they lead to is being written.
 */
async function cancelledWhileSummarizing(replies: Script[]) {
  let agent!: Agent;
  const cancelInSummary: Script = async () => {
    agent.cancel();
    return { blocks: [text("<summary>never used</summary>")] };
  };
  const r = await setup([...replies, cancelInSummary], { settings: { models: { "scripted/test": { context_window: 1000 } } } });
  agent = r.agent;
  return r;
}

describe("cancelling during an automatic compaction", () => {
  it("ends the turn as interrupted, not as an error nobody reported", async () => {
    const { agent, provider } = await cancelledWhileSummarizing([
      { blocks: [text("hello")], usage: { input: 100 } },
      // the second turn's first round fills 90% of the window: the next round compacts first
      { blocks: [call("t1", "peek", { word: "a" })], usage: { input: 900 } },
    ]);
    await drain(agent.run("one"));
    const events = await drain(agent.run("two"));
    expect(provider.requests.at(-1)!.messages.at(-1)!.blocks.at(-1)).toMatchObject({ type: "text", text: expect.stringContaining("summar") });
    expect(events.filter((e) => e.type === "error")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
  });
});

describe("a compaction before the prompt that does not finish", () => {
  it("keeps the prompt, with a mark where its answer would be", async () => {
    const { agent, provider } = await cancelledWhileSummarizing([
      { blocks: [text("one done")], usage: { input: 100 } },
      // the second turn fills 90% of the window: the third compacts before its prompt
      { blocks: [text("two done")], usage: { input: 900 } },
    ]);
    await drain(agent.run("one"));
    await drain(agent.run("two"));
    const events = await drain(agent.run("three: the prompt to keep"));
    expect(provider.requests.at(-1)!.messages.at(-1)!.blocks.at(-1)).toMatchObject({ type: "text", text: expect.stringContaining("summar") });
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
    const [user, mark] = agent.messages.slice(-2);
    expect(user).toMatchObject({ role: "user", blocks: [{ type: "text", text: "three: the prompt to keep" }] });
    expect(mark).toMatchObject({ role: "assistant", blocks: [{ type: "text", text: "[interrupted by user]" }] });
  });
});

describe("cancelling in the run phase", () => {
  it("gives up on a tool that ignores the abort: the turn ends, its call answered as interrupted", async () => {
    const stuck = definePlugin({
      name: "stuck-tool",
      setup(ctx) {
        ctx.tools.register(
          defineTool({
            name: "stuck",
            description: "Never returns and ignores the signal.",
            input: z.object({}),
            kind: "write",
            run: () => new Promise(() => {}),
          }),
        );
      },
    });
    const { agent } = await setup([{ blocks: [call("s1", "stuck", {}), call("p1", "peek", { word: "later" })] }], { plugins: [stuck] });
    const events = await drain(agent.run("go"), (e) => {
      if (e.type === "tool_start" && e.tool_id === "s1") agent.cancel();
    });
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
    const [s1, p1] = agent.messages.at(-1)!.blocks as { id: string; content: string; is_error?: boolean }[];
    expect(s1).toMatchObject({ id: "s1", is_error: true });
    expect(s1!.content).toMatch(/^interrupted by user \(stuck did not stop within 2 s and may still be running\)$/);
    expect(p1).toEqual({ type: "tool_result", id: "p1", content: "interrupted by user", is_error: true });
    expect(agent.running).toBe(false);
  }, 8_000);

  it("keeps the result of a tool that stops when asked", async () => {
    const polite = definePlugin({
      name: "polite-tool",
      setup(ctx) {
        ctx.tools.register(
          defineTool({
            name: "polite",
            description: "Waits for the abort, then reports.",
            input: z.object({}),
            kind: "write",
            run: (_i, tctx) =>
              new Promise((resolve) =>
                tctx.signal.addEventListener("abort", () => setTimeout(() => resolve({ content: "stopped after 3 of 5 steps", is_error: true }), 50), { once: true }),
              ),
          }),
        );
      },
    });
    const { agent } = await setup([{ blocks: [call("q1", "polite", {})] }], { plugins: [polite] });
    await drain(agent.run("go"), (e) => {
      if (e.type === "tool_start") agent.cancel();
    });
    expect(agent.messages.at(-1)!.blocks).toEqual([{ type: "tool_result", id: "q1", content: "stopped after 3 of 5 steps", is_error: true }]);
  });
});

describe("a preToolUse hook's updatedInput", () => {
  it("is validated like the model's arguments: a bad one answers INVALID_ARGUMENTS and the tool does not run", async () => {
    const log: string[] = [];
    const rewriter = definePlugin({
      name: "rewriter",
      setup(ctx) {
        ctx.hooks.preToolUse.tap(async () => ({ updatedInput: { word: 42 } }));
      },
    });
    const host = await Host.create({ plugins: [toolsPlugin(log), rewriter], cwd: tmp(), settings: {} });
    const provider = new ScriptedProvider([{ blocks: [call("t1", "peek", { word: "a" })] }, { blocks: [text("ok")] }]);
    const agent = await host.openAgent({ provider, model: "scripted/test", mode: "yolo" });
    const events = await drain(agent.run("go"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(log).toEqual([]);
    const result = provider.requests[1]!.messages.at(-1)!.blocks[0] as { content: string; is_error?: boolean };
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/^INVALID_ARGUMENTS: peek: word: /);
  });
});

describe("the event contract", () => {
  it("an event that breaks the schema (a plugin's notice that is not text) never reaches the front end; the call it came from is blocked", async () => {
    const sloppy = definePlugin({
      name: "sloppy",
      setup(ctx) {
        ctx.hooks.preToolUse.tap(async (info) => {
          info.notice(42 as unknown as string);
          return undefined;
        });
      },
    });
    const { agent } = await setup([{ blocks: [call("t1", "peek", { word: "a" })] }, { blocks: [text("ok")] }], { plugins: [sloppy] });
    // drain checks every event against AgentEventSchema
    const events = await drain(agent.run("go"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const result = agent.messages.at(-2)!.blocks[0] as { content: string; is_error?: boolean };
    expect(result.is_error).toBe(true);
    // the mistake is the plugin's, said where it made it: not an "invalid notice event" of the kernel's
    expect(result.content).toBe('blocked: plugin "sloppy" failed in hook "preToolUse": notice(text) takes a string, got number 42');
  });

  it("a tool whose notice is not text fails that call, naming the tool and what it passed; the turn goes on", async () => {
    const noisy = definePlugin({
      name: "noisy",
      setup(ctx) {
        ctx.tools.register(
          defineTool({
            name: "noisy",
            description: "notices an object",
            input: z.object({}),
            kind: "read",
            async run(_input, tool) {
              tool.notice({ status: "half done" } as unknown as string);
              return { content: "never returned" };
            },
          }),
        );
      },
    });
    const { agent } = await setup([{ blocks: [call("t1", "noisy", {})] }, { blocks: [text("ok")] }], { plugins: [noisy] });
    const events = await drain(agent.run("go"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({
      is_error: true,
      output: "noisy failed: notice(text) takes a string, got an object: pass one line of text",
    });
  });

  it("a plugin's ctx.notice that is not text is shown naming the plugin, and a turn that flushes it goes on", async () => {
    let late: ((text: string) => void) | undefined;
    const careless = definePlugin({
      name: "careless",
      setup(ctx) {
        ctx.notice(undefined as unknown as string);
        late = ctx.notice;
      },
    });
    const { host, agent } = await setup([{ blocks: [text("ok")] }], { plugins: [careless] });
    expect(host.notices).toContain('plugin "careless": notice(text) takes a string, got undefined');
    // a notice made after the agent opened reaches the turn as an event
    late!(new Error("disk full\n    at x") as unknown as string);
    const events = await drain(agent.run("go"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(events.filter((e) => e.type === "notice").map((e) => (e as { text: string }).text)).toContain(
      'plugin "careless": notice(text) takes a string, got an Error ("disk full"): pass its message',
    );
  });
});

describe("a tap whose answer is not what its hook takes", () => {
  /** Runs one call of `peek` then a final reply, with `tap` set up by plugin "hp"; returns the events and whether peek ran. */
  async function runWith(tap: (ctx: import("../kernel/index.js").PluginContext) => void) {
    const log: string[] = [];
    const host = await Host.create({ plugins: [toolsPlugin(log), definePlugin({ name: "hp", setup: tap })], cwd: tmp(), settings: {} });
    const provider = new ScriptedProvider([{ blocks: [call("t1", "peek", { word: "a" })] }, { blocks: [text("ok")] }]);
    const agent = await host.openAgent({ provider, model: "scripted/test", mode: "yolo" });
    const events = await drain(agent.run("go"));
    return { events, ran: log.length > 0, provider };
  }
  const texts = (events: AgentEvent[], type: string) => events.filter((e) => e.type === type).map((e) => (e as { text?: string; output?: string }).text ?? (e as { output?: string }).output);

  it("preToolUse: a decision spelt as a shell hook's block fails closed, naming the plugin (it used to let the call run)", async () => {
    const { events, ran } = await runWith((ctx) => ctx.hooks.preToolUse.tap(() => ({ decision: "block", reason: "no" }) as never));
    expect(ran).toBe(false);
    expect(texts(events, "tool_end")).toEqual([
      'blocked: plugin "hp" failed in hook "preToolUse": returned decision: "block", not one of "allow", "deny", "ask": "block" is a shell hook\'s word, here it is "deny"',
    ]);
  });

  it("systemPrompt: a string for the list ends the turn naming the plugin, before any request", async () => {
    const { events, provider } = await runWith((ctx) => ctx.hooks.systemPrompt.tap((sections) => sections.join("\n") as never));
    expect(provider.requests).toEqual([]);
    expect(texts(events, "error")).toEqual([
      expect.stringMatching(/^plugin "hp" failed in hook "systemPrompt": returned the string ".*"; return the list of sections \(strings\), changed or not$/),
    ]);
  });

  it("loadTools, stop and userPromptSubmit: a wrong answer is named the same way", async () => {
    const tools = await runWith((ctx) => ctx.hooks.loadTools.tap((list) => ({ list }) as never));
    expect(texts(tools.events, "error")).toEqual(['plugin "hp" failed in hook "loadTools": returned an object; return the list of tools, changed or not']);
    const stop = await runWith((ctx) => ctx.hooks.stop.tap(() => "go on" as never));
    expect(texts(stop.events, "error")).toEqual(['plugin "hp" failed in hook "stop": returned the string "go on"; return undefined (no opinion) or { action: "block" | "halt", reason }']);
    const prompt = await runWith((ctx) => ctx.hooks.userPromptSubmit.tap(() => ({ action: "deny", reason: "x" }) as never));
    expect(texts(prompt.events, "error")).toEqual(['plugin "hp" failed in hook "userPromptSubmit": returned action: "deny", not one of "block", "halt"']);
    expect(prompt.ran).toBe(false);
  });

  it("a block or halt without a string reason, and a preToolUse reason that is no string, are named the same way", async () => {
    const stop = await runWith((ctx) => ctx.hooks.stop.tap(() => ({ action: "block" }) as never));
    expect(texts(stop.events, "error")).toEqual(['plugin "hp" failed in hook "stop": returned action: "block" without a string reason']);
    const deny = await runWith((ctx) => ctx.hooks.preToolUse.tap(() => ({ decision: "deny", reason: 42 }) as never));
    expect(deny.ran).toBe(false);
    expect(texts(deny.events, "tool_end")).toEqual(['blocked: plugin "hp" failed in hook "preToolUse": returned decision: "deny" without a string reason']);
  });
});

describe("a provider plugin that breaks the stream contract", () => {
  /** A plugin registering provider "bad" whose stream yields `events` (then nothing). */
  function badProvider(events: unknown[]): Plugin {
    return definePlugin({
      name: "bad-provider-plugin",
      setup(ctx) {
        ctx.providers.register({
          name: "bad",
          keyEnv: [],
          models: [{ provider: "bad", id: "m" }],
          create: () => ({
            name: "bad",
            async *stream() {
              for (const e of events) yield e as StreamEvent;
            },
          }),
        });
      },
    });
  }

  async function runBad(events: unknown[]) {
    const host = await Host.create({ plugins: [tools, badProvider(events)], cwd: tmp(), settings: {} });
    const agent = await host.openAgent({ model: "bad/m", mode: "yolo" });
    const out = await drain(agent.run("go"));
    return { agent, events: out };
  }
  const usage = { input: 1, output: 1, cache_read: 0, cache_write: 0 };

  it("a final message with a bad block is an error naming the provider and its plugin, and is not stored", async () => {
    const { agent, events } = await runBad([
      { type: "done", message: { role: "assistant", blocks: [{ type: "text" }] }, usage, stop_reason: "end_turn" },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "error" });
    expect(events.find((e) => e.type === "error")).toMatchObject({
      text: 'provider "bad" (plugin "bad-provider-plugin") sent a final message that breaks the Provider contract: message.blocks.0.text: Invalid input: expected string, received undefined',
    });
    expect(agent.messages.filter((m) => m.role === "assistant")).toEqual([]);
  });

  it("a final message without usage or with an unknown stop reason is named the same way", async () => {
    const { events } = await runBad([{ type: "done", message: { role: "assistant", blocks: [{ type: "text", text: "hi" }] }, stop_reason: "finished" }]);
    const error = events.find((e) => e.type === "error") as { text: string };
    expect(error.text).toMatch(/^provider "bad" \(plugin "bad-provider-plugin"\) sent a final message that breaks the Provider contract: usage: .*; stop_reason: expected one of end_turn, .*, got "finished"$/);
  });

  it("a malformed factory is refused at registration, naming the provider; with none left the model error says so", async () => {
    const registers = (name: string, factory: unknown) => definePlugin({ name, setup: (ctx) => void ctx.providers.register(factory as never) });
    const host = await Host.create({
      plugins: [registers("string-key", { name: "p1", keyEnv: "P1_KEY", create: () => ({}) }), registers("no-create", { name: "p2", keyEnv: [] })],
      cwd: tmp(),
      settings: {},
    });
    expect(host.notices).toEqual([
      'plugin "string-key" failed in setup: provider "p1": keyEnv must be a list of variable names, got "P1_KEY"; started without it',
      'plugin "no-create" failed in setup: provider "p2": create(config) must be a function that returns the Provider; started without it',
    ]);
    await expect(host.openAgent({ model: "p1/m" })).rejects.toThrow(
      'unknown provider "p1" in model "p1/m": no provider is loaded (the start-up notices say which plugin failed; larik --version lists the plugins)',
    );
  });

  it("a create that throws or returns no stream() is named with its plugin when the model is opened", async () => {
    const registers = (create: () => unknown) =>
      definePlugin({ name: "maker", setup: (ctx) => void ctx.providers.register({ name: "mk", keyEnv: [], create: create as never }) });
    const throwing = await Host.create({ plugins: [registers(() => { throw new Error("adapter missing\n    at create"); })], cwd: tmp(), settings: {} });
    await expect(throwing.openAgent({ model: "mk/m" })).rejects.toThrow(/^provider "mk" \(plugin "maker"\) failed to start: adapter missing$/);
    const hollow = await Host.create({ plugins: [registers(() => ({ name: "mk" }))], cwd: tmp(), settings: {} });
    await expect(hollow.openAgent({ model: "mk/m" })).rejects.toThrow('provider "mk" (plugin "maker"): create() must return a Provider, { name, stream(request) }, got an object without stream()');
  });

  it("a stream() that returns no iterable is an error naming the provider and its plugin; an array of events is read", async () => {
    const returning = (value: () => unknown) =>
      definePlugin({
        name: "ret",
        setup: (ctx) =>
          void ctx.providers.register({ name: "rt", keyEnv: [], models: [{ provider: "rt", id: "m" }], create: () => ({ name: "rt", stream: value as never }) }),
      });
    const run = async (value: () => unknown) => {
      const host = await Host.create({ plugins: [tools, returning(value)], cwd: tmp(), settings: {} });
      const agent = await host.openAgent({ model: "rt/m", mode: "yolo" });
      return drain(agent.run("go"));
    };
    const contract = 'provider "rt" (plugin "ret"): stream(request) must return an async iterable of StreamEvent, as an async generator does (async *stream(request) { yield … }); it returned';
    for (const [value, what] of [
      [() => undefined, "undefined"],
      [() => Promise.reject(new Error("never read")), "a Promise"],
      [() => "text", "a string"],
      [() => ({ type: "done" }), "an object with keys type"],
    ] as const) {
      const events = await run(value);
      expect(events.filter((e) => e.type === "error")).toEqual([{ type: "error", text: `${contract} ${what}` }]);
      expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "error" });
    }
    const usage = { input: 1, output: 1, cache_read: 0, cache_write: 0 };
    const events = await run(() => [{ type: "done", message: { role: "assistant", blocks: [{ type: "text", text: "from an array" }] }, usage, stop_reason: "end_turn" }]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(events.find((e) => e.type === "assistant_message")).toMatchObject({ message: { blocks: [{ type: "text", text: "from an array" }] } });
  });

  it("a notice without text is an error naming the provider, and the text streamed before it is kept", async () => {
    const { agent, events } = await runBad([{ type: "text_delta", text: "partial answer" }, { type: "notice", message: "slow" }]);
    expect(events.find((e) => e.type === "error")).toMatchObject({ text: 'provider "bad" (plugin "bad-provider-plugin") sent a notice whose text is not a string (undefined)' });
    expect(JSON.stringify(agent.messages.at(-1))).toContain("partial answer");
  });
});

describe("usage events", () => {
  /** Answers each request with the next reply, stamped with the model named there (a fallback stamps `provider/model`). */
  function stampingProvider(replies: { model: string; usage: Usage; blocks: ReturnType<typeof text>[] }[]): Provider {
    return {
      name: "scripted",
      async *stream(_req: ModelRequest): AsyncIterable<StreamEvent> {
        const r = replies.shift()!;
        const uses = r.blocks.some((b) => b.type === "tool_use");
        yield { type: "done", message: { role: "assistant", blocks: r.blocks, model: r.model }, usage: r.usage, stop_reason: uses ? "tool_use" : "end_turn" };
      },
    };
  }

  it("sums tokens per request into session totals, per model and overall, across turns", async () => {
    const host = await Host.create({
      plugins: [tools],
      cwd: tmp(),
      settings: { models: { "scripted/priced": { input_price: 2, output_price: 10 } } },
    });
    const u = (input: number, output: number, cache_read: number, cache_write: number): Usage => ({ input, output, cache_read, cache_write });
    const provider = stampingProvider([
      { model: "priced", usage: u(100, 10, 5, 1), blocks: [call("t1", "peek", { word: "a" })] },
      { model: "other/free", usage: u(50, 20, 0, 0), blocks: [text("first")] },
      { model: "priced", usage: u(7, 3, 90, 0), blocks: [text("second")] },
    ]);
    const agent = await host.openAgent({ provider, model: "scripted/priced", mode: "yolo" });
    const usage = [...(await drain(agent.run("one"))), ...(await drain(agent.run("two")))]
      .filter((e) => e.type === "usage")
      .map((e) => (e as Extract<AgentEvent, { type: "usage" }>).usage);
    expect(usage.map((x) => x.model)).toEqual(["scripted/priced", "other/free", "scripted/priced"]);
    expect(usage.map((x) => x.total)).toEqual([u(100, 10, 5, 1), u(150, 30, 5, 1), u(157, 33, 95, 1)]);
    expect(usage.map((x) => x.context_tokens)).toEqual([106, 50, 97]);
    const priced = (i: number, o: number, cr: number, cw: number) => (i * 2 + o * 10 + cr * 0.2 + cw * 2.5) / 1e6;
    expect(usage[2]!.by_model!["scripted/priced"]).toEqual({ usage: u(107, 13, 95, 1), cost_usd: priced(107, 13, 95, 1), requests: 2 });
    expect(usage[2]!.by_model!["other/free"]).toEqual({ usage: u(50, 20, 0, 0), cost_usd: null, requests: 1 });
    // the unpriced model adds nothing to the cost; it does not make it unknown
    expect(usage[2]!.cost_usd).toBeCloseTo(priced(107, 13, 95, 1), 12);
    expect(usage[1]!.request_cost_usd).toBeNull();
  });

  it("reports the cost as unknown (null), not $0, while no model used has a price", async () => {
    const host = await Host.create({ plugins: [tools], cwd: tmp(), settings: {} });
    const u: Usage = { input: 10, output: 5, cache_read: 0, cache_write: 0 };
    const provider = stampingProvider([
      { model: "local-a", usage: u, blocks: [call("t1", "peek", { word: "a" })] },
      { model: "other/local-b", usage: u, blocks: [text("done")] },
    ]);
    const agent = await host.openAgent({ provider, model: "scripted/local-a", mode: "yolo" });
    const usage = (await drain(agent.run("go"))).filter((e) => e.type === "usage").map((e) => (e as Extract<AgentEvent, { type: "usage" }>).usage);
    expect(usage.map((x) => x.cost_usd)).toEqual([null, null]);
  });
});
