import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { z } from "zod";
import { definePlugin, defineTool } from "larik";

export default definePlugin({
  name: "word-count",
  description: "A word_count tool: counts the words of a file in the project", // larik --version shows it
  setup(ctx) {
    ctx.tools.register(
      defineTool({
        name: "word_count",
        description: "Count the words in a text file.",
        input: z.object({ path: z.string().describe("file path, relative to the project") }),
        kind: "read", // never changes anything: no permission prompt, may run in parallel
        subject: ({ path }) => path, // what permission rules like word_count(src/**) match
        async run({ path }, tool) {
          const text = await readFile(resolve(tool.cwd, path), "utf8");
          const words = text.split(/\s+/).filter(Boolean).length;
          return { content: `${path}: ${words} words` };
        },
      }),
    );
    // hooks are typed tapable hook points; every tap returns a disposer
    ctx.hooks.postToolUse.tap((result, call) => {
      // call.notice shows a line in the running turn (ctx.notice is for start-up notices)
      if (call.tool.name === "word_count") call.notice(`counted: ${result.content}`);
      return result;
    });
  },
});
