/**
 * Compaction (LARIK-REFERENCE §9): when the context nears the window, the same model with the
 * same system prompt and tools (so the request reads the prompt cache) summarizes the
 * conversation, and the whole message list is replaced by one user message that carries the
 * summary, the open todo items, the files changed, and where the full transcript is.
 */
import type { Message, ToolSpec } from "./types.js";

/** Share of the context window above which the next request compacts first. */
export const COMPACT_THRESHOLD = 0.8;

/** The instruction sent (as the last user message) to ask for a summary. */
export const SUMMARY_INSTRUCTION = `Your context window is nearly full. Write a summary of the conversation so far that lets you continue the work without it. Inside <summary></summary> tags, give:
1. The user's requests, keeping their words nearly verbatim.
2. What has been done: files read and changed, commands run and their outcomes, decisions and why.
3. What remains to do and the next step.
4. Exact details needed to continue: file paths, function names, error messages, values.
Condense your own reasoning. Do not call tools. Reply with the summary only.`;

/** A rough token estimate for text (about 4 characters per token for code and English). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Estimated prompt size of a request (tokens): system, tool definitions and messages. */
export function estimateRequest(system: string, tools: ToolSpec[], messages: readonly Message[]): number {
  let n = estimateTokens(system) + estimateTokens(JSON.stringify(tools));
  for (const m of messages) {
    for (const b of m.blocks) {
      if (b.type === "text" || b.type === "thinking") n += estimateTokens(b.text);
      else if (b.type === "tool_use") n += estimateTokens(JSON.stringify(b.input ?? {})) + 10;
      else if (b.type === "tool_result") n += estimateTokens(b.content) + 10 + (b.images?.length ?? 0) * 1500;
      else if (b.type === "image") n += 1500;
      else n += estimateTokens(JSON.stringify(b));
    }
  }
  return n;
}

/**
 * The text between `<summary>` tags. Tolerates a missing closing tag, duplicate tags (the last
 * complete pair wins) and no tags at all (the whole reply).
 */
export function extractSummary(reply: string): string {
  const pairs = [...reply.matchAll(/<summary>([\s\S]*?)<\/summary>/g)];
  if (pairs.length) return pairs[pairs.length - 1]![1]!.trim();
  const open = reply.lastIndexOf("<summary>");
  if (open >= 0) return reply.slice(open + "<summary>".length).replace(/<\/?summary>/g, "").trim();
  return reply.replace(/<\/?summary>/g, "").trim();
}

/** Open items of the newest `todo_write` call in `messages` (the list is stateless: last call wins). */
export function openTodos(messages: readonly Message[]): string[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    for (let j = m.blocks.length - 1; j >= 0; j--) {
      const b = m.blocks[j]!;
      if (b.type === "tool_use" && b.name === "todo_write") {
        const todos = (b.input as { todos?: { content?: string; status?: string }[] })?.todos ?? [];
        return todos.filter((t) => t.status !== "completed").map((t) => `[${t.status ?? "pending"}] ${t.content ?? ""}`);
      }
    }
  }
  return [];
}

/** Paths written by write-family tool calls in `messages`, in first-seen order. */
export function changedFiles(messages: readonly Message[]): string[] {
  const seen = new Set<string>();
  for (const m of messages) {
    for (const b of m.blocks) {
      if (b.type !== "tool_use") continue;
      const input = b.input as { path?: unknown; files?: { path?: unknown }[] };
      if (["write", "edit", "multi_edit", "apply_code_action"].includes(b.name) && typeof input?.path === "string") seen.add(input.path);
      if (b.name === "write_files") for (const f of input?.files ?? []) if (typeof f.path === "string") seen.add(f.path);
    }
  }
  return [...seen];
}

/** The single user message that replaces the context after compaction. */
export function summaryMessage(opts: {
  summary: string;
  transcript: string;
  todos: string[];
  files: string[];
  midTurn: boolean;
}): string {
  const parts = [
    "This session continues from an earlier conversation that was summarized to free the context window. The summary:",
    `<summary>\n${opts.summary}\n</summary>`,
  ];
  if (opts.todos.length) parts.push(`Open todo items:\n${opts.todos.map((t) => `- ${t}`).join("\n")}`);
  if (opts.files.length) parts.push(`Files changed so far: ${opts.files.join(", ")}`);
  parts.push(
    `The full transcript is in ${opts.transcript} (JSON lines); grep it when you need exact details such as earlier tool output, file contents or the user's exact words.`,
  );
  if (opts.midTurn) parts.push("Continue where you left off, without asking the user to repeat anything.");
  return parts.join("\n\n");
}
