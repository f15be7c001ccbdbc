/**
 * The agent-loop tests' tools: `peek` (read-only; can wait on a gate and log its start and end)
 * and `poke` (a write, so it asks in default mode; `poke slow` waits for the abort).
 */
import { z } from "zod";
import { defineTool, definePlugin, type Plugin } from "../../kernel/index.js";

/** `peek`: a read tool returning `peeked <word>`; logs its start and end, and waits on `gates[word]` if set. */
export function peekTool(log: string[] = [], gates: Record<string, Promise<void>> = {}, opened: Record<string, () => void> = {}) {
  return defineTool({
    name: "peek",
    description: "Returns the given word.",
    input: z.object({ word: z.string() }),
    kind: "read",
    async run({ word }) {
      log.push(`start ${word}`);
      opened[word]?.();
      if (gates[word]) await gates[word];
      log.push(`end ${word}`);
      return { content: `peeked ${word}` };
    },
  });
}

export function toolsPlugin(log: string[], gates: Record<string, Promise<void>> = {}, opened: Record<string, () => void> = {}): Plugin {
  return definePlugin({
    name: "test-tools",
    setup(ctx) {
      ctx.tools.register(peekTool(log, gates, opened));
      ctx.tools.register(
        defineTool({
          name: "poke",
          description: "Changes something.",
          input: z.object({ what: z.string() }),
          kind: "write",
          writePaths: ({ what }) => [what],
          async run({ what }, tctx) {
            log.push(`poke ${what}`);
            if (what === "slow") {
              await new Promise<void>((resolve) => tctx.signal.addEventListener("abort", () => resolve(), { once: true }));
              return { content: "aborted", is_error: true };
            }
            return { content: `poked ${what}` };
          },
        }),
      );
    },
  });
}
