/**
 * Edge cases of the agent loop and its event contract (LARIK-REFERENCE §2, §5, §22; DESIGN.md
 * invariants), driven by the scripted provider: what a front end sees when a turn ends in an
 * unusual way, and that the transcript keeps every tool_use answered.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentEventSchema, defineTool, definePlugin, Host, type AgentEvent, type Plugin } from "../kernel/index.js";
import { call, ScriptedProvider, text, type Script } from "./fakes/scripted-provider.js";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "larik-edges-"));
}

/** `peek` (read-only), `poke` (write: asks in default mode). */
const tools: Plugin = definePlugin({
  name: "edge-tools",
  setup(ctx) {
    ctx.tools.register(
      defineTool({
        name: "peek",
        description: "Returns the given word.",
        input: z.object({ word: z.string() }),
        kind: "read",
        async run({ word }) {
          return { content: `peeked ${word}` };
        },
      }),
    );
    ctx.tools.register(
      defineTool({
        name: "poke",
        description: "Changes something.",
        input: z.object({ what: z.string() }),
        kind: "write",
        writePaths: ({ what }) => [what],
        async run({ what }) {
          return { content: `poked ${what}` };
        },
      }),
    );
  },
});

async function drain(events: AsyncIterable<AgentEvent>, onEvent?: (e: AgentEvent) => void): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of events) {
    expect(AgentEventSchema.safeParse(e).success).toBe(true);
    out.push(e);
    onEvent?.(e);
  }
  return out;
}

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
