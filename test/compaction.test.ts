import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, definePlugin, extractSummary, Host, ProviderError, type AgentEvent, type ModelRequest } from "../kernel/index.js";
import { call, ScriptedProvider, text, type Script } from "./fakes/scripted-provider.js";

const tools = definePlugin({
  name: "t",
  setup(ctx) {
    ctx.tools.register(
      defineTool({
        name: "peek",
        description: "Returns a lot of text.",
        input: z.object({ n: z.number() }),
        kind: "read",
        run: async ({ n }) => ({ content: "x".repeat(n) }),
      }),
    );
    ctx.tools.register(
      defineTool({
        name: "todo_write",
        description: "todos",
        input: z.object({ todos: z.array(z.object({ content: z.string(), status: z.string() })) }),
        kind: "read",
        run: async () => ({ content: "ok" }),
      }),
    );
  },
});

async function agentWith(scripts: Script[], window: number) {
  const host = await Host.create({ plugins: [tools], cwd: mkdtempSync(join(tmpdir(), "larik-c-")), settings: { models: { "scripted/x": { context_window: window } } } });
  const provider = new ScriptedProvider(scripts);
  const agent = await host.openAgent({ provider, model: "scripted/x", mode: "yolo" });
  return { agent, provider };
}

async function drain(it: AsyncIterable<AgentEvent>) {
  const out: AgentEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

const summaryReply = (s: string): Script => ({ blocks: [text(`<summary>${s}</summary>`)] });
const isSummaryRequest = (r: ModelRequest) => JSON.stringify(r.messages.at(-1)).includes("Write a summary of the conversation");

describe("compaction", () => {
  it("compacts automatically when the last request used more than 80% of the window, with the same system prompt and tools", async () => {
    const { agent, provider } = await agentWith(
      [
        { blocks: [text("one")], usage: { input: 100 } },
        { blocks: [text("two")], usage: { input: 900 } }, // 90% of 1000
        summaryReply("we said one and two"),
        { blocks: [text("three")] },
      ],
      1000,
    );
    await drain(agent.run("first"));
    await drain(agent.run("second"));
    const events = await drain(agent.run("third"));
    const compacted = events.find((e) => e.type === "compacted") as Extract<AgentEvent, { type: "compacted" }>;
    expect(compacted.summary).toBe("we said one and two");
    expect(compacted.compaction.trigger).toBe("auto");
    expect(compacted.compaction.before_tokens).toBe(900);
    expect(compacted.compaction.saved_tokens).toBe(compacted.compaction.before_tokens - compacted.compaction.after_tokens);
    const [summarize, after] = provider.requests.slice(2);
    expect(isSummaryRequest(summarize!)).toBe(true);
    expect(summarize!.system).toBe(provider.requests[0]!.system);
    expect(summarize!.tools).toEqual(provider.requests[0]!.tools);
    // the context is now one user message naming the transcript, then the new prompt
    expect(after!.messages).toHaveLength(1);
    const body = JSON.stringify(after!.messages[0]);
    expect(body).toContain("we said one and two");
    expect(body).toContain(agent.session.location.replace(/\\/g, "\\\\"));
    expect(body).toContain("grep it");
    expect(body).toContain("third");
  });

  it("compacts once on context overflow and retries the request", async () => {
    const overflow = new ProviderError({ provider: "scripted", kind: "context_overflow", message: "prompt is too long: 300000 tokens > 200000 maximum" });
    const { agent, provider } = await agentWith(
      [{ blocks: [text("a")] }, { blocks: [text("b")] }, { error: overflow }, summaryReply("sum"), { blocks: [text("recovered")] }],
      200_000,
    );
    await drain(agent.run("1"));
    await drain(agent.run("2"));
    const events = await drain(agent.run("3"));
    expect(events.find((e) => e.type === "compacted")).toMatchObject({ compaction: { trigger: "overflow" } });
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(provider.requests.at(-1)!.messages).toHaveLength(1);
    expect(JSON.stringify(provider.requests.at(-1)!.messages)).toContain("Continue where you left off");
  });

  it("a second overflow in the same turn is an error, not a loop", async () => {
    const overflow = () => new ProviderError({ provider: "scripted", kind: "context_overflow", message: "prompt is too long" });
    const { agent, provider } = await agentWith([{ blocks: [text("a")] }, { error: overflow() }, summaryReply("s"), { error: overflow() }], 200_000);
    await drain(agent.run("first"));
    const events = await drain(agent.run("x"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "error" });
    expect(provider.requests).toHaveLength(4);
    // what happened, and what the user can do: not the provider's bare "prompt is too long"
    expect(events.filter((e) => e.type === "error").map((e) => (e as { text: string }).text)).toEqual([
      "the conversation still does not fit the model's context window after compacting it (scripted: prompt is too long): /clear starts a fresh context, or use a model with a larger window",
    ]);
  });

  it("a prompt that overflows alone is an error that says so, without a compaction that cannot help", async () => {
    const overflow = new ProviderError({ provider: "scripted", kind: "context_overflow", message: "prompt is too long: 600123 tokens > 128000 maximum" });
    const { agent, provider } = await agentWith([{ error: overflow }, summaryReply("never asked")], 200_000);
    const events = await drain(agent.run("lorem ipsum ".repeat(1000)));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "error" });
    expect(events.filter((e) => e.type === "error").map((e) => (e as { text: string }).text)).toEqual([
      "the prompt does not fit the model's context window, with nothing earlier to compact (scripted: prompt is too long: 600123 tokens > 128000 maximum): shorten it, or use a model with a larger window",
    ]);
    expect(provider.requests).toHaveLength(1);
  });

  it("/compact summarizes on demand and carries open todo items and changed files", async () => {
    const { agent, provider } = await agentWith(
      [
        { blocks: [call("t1", "todo_write", { todos: [{ content: "write tests", status: "in_progress" }, { content: "done thing", status: "completed" }] })] },
        { blocks: [text("ok")] },
        summaryReply("manual summary"),
        { blocks: [text("after")] },
      ],
      200_000,
    );
    await drain(agent.run("plan it"));
    const seen: AgentEvent[] = [];
    const r = await agent.compact("manual", (e) => seen.push(e));
    expect(r.trigger).toBe("manual");
    expect(seen.some((e) => e.type === "compacted")).toBe(true);
    const content = JSON.stringify(agent.messages);
    expect(content).toContain("[in_progress] write tests");
    expect(content).not.toContain("done thing");
    await drain(agent.run("next"));
    expect(provider.requests.at(-1)!.messages).toHaveLength(1);
  });

  it("compacts twice in one session (nested summaries) and resume reproduces the context", async () => {
    const { agent, provider } = await agentWith(
      [
        { blocks: [text("a")] },
        { blocks: [text("b")] },
        summaryReply("first summary"),
        { blocks: [text("c")] },
        { blocks: [text("d")] },
        summaryReply("second summary includes first summary"),
      ],
      200_000,
    );
    await drain(agent.run("1"));
    await drain(agent.run("2"));
    await agent.compact();
    await drain(agent.run("3"));
    await drain(agent.run("4"));
    await agent.compact();
    expect(isSummaryRequest(provider.requests[5]!)).toBe(true);
    expect(JSON.stringify(provider.requests[5]!.messages)).toContain("first summary");
    expect(agent.compactions).toBe(2);
    expect(JSON.stringify(agent.messages)).toContain("second summary includes first summary");
  });

  it("a prompt sent while /compact runs is refused, saying a compaction runs", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { agent } = await agentWith([{ blocks: [text("a")] }, async () => {
        await gate;
        return { blocks: [text("<summary>s</summary>")] };
      }], 200_000);
    await drain(agent.run("1"));
    const compacting = agent.compact();
    await new Promise((r) => setTimeout(r, 10));
    expect(() => agent.run("2")).toThrow("a compaction is already running: wait for it to finish or cancel it");
    release();
    await compacting;
    expect(agent.running).toBe(false);
  });

  it("never separates a tool_use from its tool_result when compacting mid-turn", async () => {
    const { agent, provider } = await agentWith(
      [
        { blocks: [text("a")] },
        { blocks: [text("b")] },
        { blocks: [call("t1", "peek", { n: 8000 })], usage: { input: 100 } },
        summaryReply("mid-turn summary"),
        { blocks: [text("finished")] },
      ],
      2000,
    );
    await drain(agent.run("1"));
    await drain(agent.run("2"));
    const events = await drain(agent.run("3"));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const summarize = provider.requests[3]!;
    expect(isSummaryRequest(summarize)).toBe(true);
    // the summary request still pairs t1 with its result
    const flat = summarize.messages.flatMap((m) => m.blocks);
    const useIdx = flat.findIndex((b) => b.type === "tool_use");
    const resIdx = flat.findIndex((b) => b.type === "tool_result" && b.id === "t1");
    expect(useIdx).toBeGreaterThanOrEqual(0);
    expect(resIdx).toBeGreaterThan(useIdx);
    for (const r of provider.requests) {
      const uses = r.messages.flatMap((m) => m.blocks).filter((b) => b.type === "tool_use").length;
      const results = r.messages.flatMap((m) => m.blocks).filter((b) => b.type === "tool_result").length;
      expect(results).toBe(uses);
    }
  });

  it("a window too small for the fixed prefix fails clearly instead of looping", async () => {
    const { agent, provider } = await agentWith([{ blocks: [text("a")] }, { blocks: [text("b")] }, { blocks: [text("c")] }], 50);
    await drain(agent.run("1"));
    await drain(agent.run("2"));
    const events = await drain(agent.run("3"));
    const err = events.find((e) => e.type === "error") as { text: string };
    expect(err.text).toMatch(/context window of scripted\/x \(50 tokens\) is too small/);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "error" });
    expect(provider.requests).toHaveLength(2);
  });

  it("extracts summaries from malformed, unclosed and duplicated tags", () => {
    expect(extractSummary("<summary>a</summary>")).toBe("a");
    expect(extractSummary("x <summary>old</summary> <summary>new</summary>")).toBe("new");
    expect(extractSummary("<summary>unclosed text")).toBe("unclosed text");
    expect(extractSummary("no tags at all")).toBe("no tags at all");
  });
});
