/**
 * Compaction (LARIK-REFERENCE §9): when the context nears the window, the same model with the
 * same system prompt and tools (so the request reads the prompt cache) summarizes the
 * conversation, and the whole message list is replaced by one user message that carries the
 * summary, the open todo items, the files changed, and where the full transcript is.
 *
 * The agent loop (kernel/agent.ts) calls {@link autoCompact} before each model request,
 * {@link compactOrReport} when a request overflowed the window, and {@link compactContext} for
 * `/compact`; the helpers before them are pure.
 */
import type { Agent } from "./agent.js";
import { providerWho, streamOf } from "./fallback.js";
import type { AgentEvent, UsageInfo } from "./events.js";
import { errorText, noticeText } from "./kit/one-line.js";
import { pushMerged, repairToolResults } from "./session.js";
import { toolSpec, type AnyTool } from "./tools.js";
import type { Message, ToolSpec, Usage } from "./types.js";

/** Share of the context window above which the next request compacts first. */
const COMPACT_THRESHOLD = 0.8;

/** The instruction sent (as the last user message) to ask for a summary. */
const SUMMARY_INSTRUCTION = `Your context window is nearly full. Write a summary of the conversation so far that lets you continue the work without it. Inside <summary></summary> tags, give:
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
function estimateRequest(system: string, tools: ToolSpec[], messages: readonly Message[]): number {
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
function openTodos(messages: readonly Message[]): string[] {
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
function summaryMessage(opts: {
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

/** What a compaction did; token figures are estimates where the provider gave none. */
export interface CompactResult {
  summary: string;
  trigger: "auto" | "manual" | "overflow";
  before_tokens: number;
  after_tokens: number;
  saved_tokens: number;
}

/**
 * A compaction's view of what runs it, a turn or `/compact`: the agent (whose `messages`,
 * `lastContextTokens` and compaction counters it updates), the turn's frozen tools, its signal and
 * event sink, and the loop's usage bookkeeping, which is private to the agent.
 */
export interface CompactionRun {
  agent: Agent;
  tools: AnyTool[];
  signal: AbortSignal;
  emit(e: AgentEvent): void;
  /** Adds a request's usage to the session totals; returns the `usage` event's payload. */
  usageInfo(usage: Usage, answeredBy: string, requestMs: number): UsageInfo;
}

/**
 * Compacts when the last request used more than 80% of the window, or an estimate of the next
 * request says so (needs at least 4 messages). Returns "failed" when the fixed prefix alone
 * fills the window, so the turn fails clearly instead of looping.
 */
export async function autoCompact(run: CompactionRun, midTurn: boolean): Promise<"no" | "done" | "failed"> {
  const { agent, tools, emit } = run;
  if (agent.host.settings.auto_compact === false || agent.messages.length < 4) return "no";
  const { system } = await agent.context();
  const specs = tools.map(toolSpec);
  const window = agent.contextWindow();
  const limit = window * COMPACT_THRESHOLD;
  const estimate = estimateRequest(system, specs, agent.messages);
  if (agent.lastContextTokens <= limit && estimate <= limit) return "no";
  const prefix = estimateRequest(system, specs, []);
  if (prefix >= limit) {
    emit({
      type: "error",
      text: `the context window of ${agent.spec} (${window} tokens) is too small: the system prompt and tool definitions alone need about ${prefix} tokens; use a model with a larger window or set models."${agent.spec}".context_window`,
    });
    return "failed";
  }
  const r = await compactOrReport("auto", run, midTurn);
  return r ? "done" : "failed";
}

/**
 * {@link compactContext}, with a failure sent as an `error` event (none when the run was
 * cancelled) instead of thrown. Returns undefined when it failed.
 */
export async function compactOrReport(trigger: CompactResult["trigger"], run: CompactionRun, midTurn: boolean): Promise<CompactResult | undefined> {
  try {
    return await compactContext(trigger, run, midTurn);
  } catch (err) {
    if (!run.signal.aborted) run.emit({ type: "error", text: `compaction failed: ${errorText(err)}` });
    return undefined;
  }
}

/**
 * Summarizes the context with the same system prompt and tools, then replaces it: `preCompact`,
 * the summary request, its `usage` (entry and event), a `compaction` entry, the context replaced
 * by the summary message, a `compacted` event.
 * @param midTurn whether a turn goes on after it (the summary message then asks to continue)
 * @throws Error when the summary request fails, ends without a reply or gives an empty summary
 */
export async function compactContext(trigger: CompactResult["trigger"], run: CompactionRun, midTurn: boolean): Promise<CompactResult> {
  const { agent, tools, signal, emit } = run;
  await agent.host.hooks.preCompact.promise({ agent, trigger, notice: (text) => emit({ type: "notice", text: noticeText(text) }) });
  const { system } = await agent.context();
  const specs = tools.map(toolSpec);
  const before = agent.lastContextTokens || estimateRequest(system, specs, agent.messages);
  const ask: Message[] = [...agent.messages];
  pushMerged(ask, { role: "user", blocks: [{ type: "text", text: SUMMARY_INSTRUCTION }] });
  let reply: Message | undefined;
  let usage: Usage | undefined;
  const started = Date.now();
  const request = { model: agent.model, system, tools: specs, messages: repairToolResults(ask), effort: agent.effort, session_id: agent.session.id, signal };
  for await (const ev of streamOf(agent.provider, request, providerWho(agent.host.providers, agent.providerName))) {
    if (ev.type === "done") {
      reply = ev.message;
      usage = ev.usage;
    }
  }
  if (!reply || !usage) throw new Error("the summary request ended without a reply");
  const text = reply.blocks.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
  const summary = extractSummary(text);
  if (!summary) throw new Error("the model returned an empty summary");
  const content = summaryMessage({
    summary,
    transcript: agent.session.location,
    todos: openTodos(agent.messages),
    files: changedFiles(agent.history()),
    midTurn,
  });
  const after = estimateRequest(system, specs, []) + estimateTokens(content);
  const result: CompactResult = { summary, trigger, before_tokens: before, after_tokens: after, saved_tokens: Math.max(0, before - after) };
  agent.session.append({ type: "usage", usage, model: `${agent.providerName}/${reply.model ?? agent.model}` });
  emit({ type: "usage", usage: run.usageInfo(usage, reply.model ?? agent.model, Date.now() - started) });
  agent.session.append({ type: "compaction", summary: content, data: { ...result, summary: undefined } });
  agent.messages = [{ role: "user", blocks: [{ type: "text", text: content }] }];
  agent.lastContextTokens = after;
  agent.compactions++;
  agent.compactionSavedTokens += result.saved_tokens;
  emit({ type: "compacted", summary, compaction: { trigger, before_tokens: before, after_tokens: after, saved_tokens: result.saved_tokens, estimated: true } });
  return result;
}
