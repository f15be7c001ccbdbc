/**
 * The `skill` tool: progressive disclosure (LARIK-REFERENCE §13). The system prompt lists only
 * names and descriptions; this tool returns the full, expanded body when the model needs it.
 * One instance per fresh context, over that context's frozen index.
 */
import * as z from "zod/mini";
import { defineTool, errorText, type Agent, lazySchema } from "../../kernel/index.js";
import type { IndexItem } from "./catalog.js";

// lazySchema: built at the first call, not at every start-up
const SkillInput = lazySchema(() =>
  z.object({
    name: z.string().check(z.describe("The skill or command name, exactly as listed in the skills index")),
    arguments: z.optional(z.string()).check(z.describe("Arguments for the skill ($ARGUMENTS, $1..$9), if it takes any")),
  }),
);

/** Builds the tool for one agent's context. Unknown names are an error result naming the choices. */
export function skillTool(items: IndexItem[], agent: Agent) {
  const byName = new Map(items.map((i) => [i.name, i]));
  return defineTool({
    name: "skill",
    description:
      "Loads a skill or custom command from the skills index in the system prompt and returns its instructions. " +
      "Call it before doing a task that a listed skill covers, then follow the instructions it returns.",
    input: SkillInput,
    kind: "read",
    subject: (i) => i.name,
    async run(input) {
      const item = byName.get(input.name);
      if (!item) {
        return { content: `unknown skill "${input.name}": the skills index lists ${[...byName.keys()].join(", ")}`, is_error: true };
      }
      try {
        return { content: await item.load(input.arguments ?? "", agent) };
      } catch (err) {
        return { content: `skill "${input.name}" could not be loaded: ${errorText(err)}`, is_error: true };
      }
    },
  });
}
