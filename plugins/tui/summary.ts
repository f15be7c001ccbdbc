/**
 * One-line summaries of tool results for tool rows (a call's input line is the kernel's
 * `toolInputSummary`, shared with headless), plus the shapes of the `display` payloads core
 * tools attach (`{type:"diff"}` for write/edit, `{type:"todos"}` for todo_write).
 */
import { stripControl } from "./markdown.js";

/** The first non-empty line of a tool result, at most `max` characters. */
export function firstLine(output: string, max = 160): string {
  const line = stripControl(output.split("\n").find((l) => l.trim()) ?? "").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** `display` of a write/edit result: a unified diff with line counts. */
export interface DiffDisplay {
  type: "diff";
  path: string;
  diff: string;
  added: number;
  removed: number;
  created?: boolean;
}

/** One task of `todo_write`. */
export interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
  active_form?: string;
}

/** `display` of a todo_write result. */
export interface TodosDisplay {
  type: "todos";
  todos: Todo[];
}

/** The diff display of a result, if it has one. */
export function diffDisplay(display: unknown): DiffDisplay | undefined {
  const d = display as Partial<DiffDisplay> | undefined;
  return d && d.type === "diff" && typeof d.diff === "string" ? (d as DiffDisplay) : undefined;
}

/** The todo list of a result, if it has one. */
export function todosDisplay(display: unknown): Todo[] | undefined {
  const d = display as Partial<TodosDisplay> | undefined;
  return d && d.type === "todos" && Array.isArray(d.todos) ? d.todos : undefined;
}

/** `1.2k`, `62k`, `1.5M`: token counts for the footer and rows. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** `Thought for 12s`, `Thought for 1m 5s`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  return `${Math.floor(s / 60)}m ${s % 60}s`;
}
