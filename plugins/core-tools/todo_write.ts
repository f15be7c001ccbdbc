/**
 * `todo_write` (LARIK-REFERENCE §3): replaces the whole task list. Stateless: the last successful
 * call in the transcript is the list, so the result does not echo it; front ends read `display`.
 */
import * as z from "zod/mini";
import { defineTool, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";

/** Items in one list at most (§3). */
const MAX_TODOS = 50;

const todo = lazySchema(() =>
  z.object({
    content: z.string().check(z.minLength(1)).check(z.describe("What to do, imperative (\"Run the tests\")")),
    status: z.enum(["pending", "in_progress", "completed"]).check(z.describe("pending, in_progress or completed")),
    active_form: z.optional(z.string()).check(z.describe("Present-continuous form shown while in progress (\"Running the tests\")")),
  }),
);

const input = lazySchema(() =>
  z.object({
    todos: z.array(todo).check(z.maxLength(MAX_TODOS)).check(z.refine((l) => l.filter((t) => t.status === "in_progress").length <= 1, {
        message: "at most one item may be in_progress; mark the others pending or completed",
      })).check(z.describe(`The complete updated list (at most ${MAX_TODOS} items, at most one in_progress)`)),
  }),
);

/** The `todo_write` tool. */
export const todoWriteTool = defineTool({
  name: "todo_write",
  description:
    "Replace the task list for multi-step work. Send the whole list each time; keep exactly one item in_progress while working and mark items completed as soon as they are done.",
  input,
  inputJsonSchema: INPUT_SCHEMAS.todo_write,
  kind: "read",
  async run({ todos }) {
    const n = (s: string) => todos.filter((t) => t.status === s).length;
    const open = n("pending") + n("in_progress");
    const content =
      todos.length === 0
        ? "Todo list cleared."
        : `Todo list updated: ${todos.length} items (${n("completed")} completed, ${n("in_progress")} in progress, ${n("pending")} pending).${open === 0 ? " All done." : ""}`;
    return { content, display: { type: "todos", todos } };
  },
});
