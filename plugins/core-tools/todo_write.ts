/**
 * `todo_write` (LARIK-REFERENCE §3): replaces the whole task list. Stateless: the last successful
 * call in the transcript is the list, so the result does not echo it; front ends read `display`.
 */
import { z } from "zod";
import { defineTool } from "../../kernel/index.js";

/** Items in one list at most (§3). */
export const MAX_TODOS = 50;

const todo = z.object({
  content: z.string().min(1).describe("What to do, imperative (\"Run the tests\")"),
  status: z.enum(["pending", "in_progress", "completed"]).describe("pending, in_progress or completed"),
  active_form: z.string().optional().describe("Present-continuous form shown while in progress (\"Running the tests\")"),
});

const input = z.object({
  todos: z
    .array(todo)
    .max(MAX_TODOS)
    .refine((l) => l.filter((t) => t.status === "in_progress").length <= 1, {
      message: "at most one item may be in_progress; mark the others pending or completed",
    })
    .describe(`The complete updated list (at most ${MAX_TODOS} items, at most one in_progress)`),
});

/** The `todo_write` tool. */
export const todoWriteTool = defineTool({
  name: "todo_write",
  description:
    "Replace the task list for multi-step work. Send the whole list each time; keep exactly one item in_progress while working and mark items completed as soon as they are done.",
  input,
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
