/**
 * Neutral {@link ModelRequest} → Ollama `POST /api/chat` request body (WIRE-FORMATS §5.2;
 * ollama/ollama `api/types.go` ChatRequest, Message, ToolCall).
 */
import type { Block, Effort, Message, ModelRequest, ToolUseBlock } from "../../kernel/index.js";

/** What the body builder needs besides the request. */
export interface OllamaBuildContext {
  /** This provider's name as written in specs: thinking replays only to it. */
  provider: string;
  /** The context window to ask for (`options.num_ctx`, tokens). */
  numCtx: number;
  /** The `think` value to send, or undefined to leave the server's default. */
  think?: boolean | "low" | "medium" | "high";
}

type ChatMessage = Record<string, unknown>;

/** Default `num_ctx` when `providers.<name>.context_length` is not set (tokens). */
export const DEFAULT_NUM_CTX = 32_768;

/**
 * `--effort` → `think`: gpt-oss takes a level (`low|medium|high`; xhigh and max send high),
 * other thinking models `true`. Undefined without an effort or when the model cannot think
 * (`think` on such a model is a 400).
 */
export function thinkValue(model: string, effort: Effort | undefined, capabilities: string[] | undefined): OllamaBuildContext["think"] {
  if (!effort || !capabilities?.includes("thinking")) return undefined;
  if (/gpt-oss/.test(model)) return effort === "low" || effort === "medium" ? effort : "high";
  return true;
}

/**
 * Builds the JSON body with `stream: true` and `truncate: false` (an over-long prompt is a 400
 * to compact on, not a silent cut), `options.num_ctx` and `options.num_predict`.
 *
 * - The system prompt is the first message (`role: "system"`).
 * - Tool results leave their user message as `role: "tool"` messages with `tool_name` and
 *   `tool_call_id`; images a tool returned go in the following user message, introduced by a
 *   `<tool-images …>` note (LARIK-REFERENCE §10), since tool messages reach the model as text.
 * - Assistant tool calls carry `arguments` as an object; thinking goes back in `thinking` only to
 *   the same provider and model.
 * - Images are base64 strings in `images` (no `data:` prefix).
 */
export function buildOllamaBody(req: ModelRequest, ctx: OllamaBuildContext): Record<string, unknown> {
  const names = new Map<string, string>();
  for (const m of req.messages) for (const b of m.blocks) if (b.type === "tool_use") names.set(b.id, b.name);
  const messages: ChatMessage[] = [];
  if (req.system) messages.push({ role: "system", content: req.system });
  for (const m of req.messages) {
    if (m.role === "user") messages.push(...userMessages(m.blocks, names));
    else {
      const a = assistantMessage(m, req.model, ctx.provider);
      if (a) messages.push(a);
    }
  }
  const body: Record<string, unknown> = { model: req.model, messages, stream: true };
  if (req.tools.length) {
    body.tools = req.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema } }));
  }
  if (ctx.think !== undefined) body.think = ctx.think;
  body.truncate = false;
  body.options = { num_ctx: ctx.numCtx, ...(req.max_tokens !== undefined ? { num_predict: req.max_tokens } : {}) };
  return body;
}

function userMessages(blocks: Block[], names: Map<string, string>): ChatMessage[] {
  const out: ChatMessage[] = [];
  const text: string[] = [];
  const images: string[] = [];
  for (const b of blocks) {
    if (b.type !== "tool_result") continue;
    out.push({ role: "tool", content: b.content, tool_name: names.get(b.id) ?? "unknown_tool", tool_call_id: b.id });
    if (b.images?.length) {
      text.push(`<tool-images tool_call_id="${b.id}">The tool call ${b.id} returned these images.</tool-images>`);
      for (const img of b.images) images.push(img.data);
    }
  }
  for (const b of blocks) {
    if (b.type === "text" && b.text) text.push(b.text);
    else if (b.type === "image") images.push(b.data);
  }
  if (text.length || images.length) out.push({ role: "user", content: text.join("\n\n"), ...(images.length ? { images } : {}) });
  return out;
}

function assistantMessage(m: Message, model: string, provider: string): ChatMessage | undefined {
  // one string for the reply's text blocks: each block on its own (a cut-short reply's marker,
  // `[interrupted by user]`, is a block of its own, not more of the last word)
  const text = m.blocks
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n\n");
  const calls = m.blocks
    .filter((b): b is ToolUseBlock => b.type === "tool_use")
    .map((b) => ({
      id: b.id,
      function: { name: b.name, arguments: b.input && typeof b.input === "object" && !Array.isArray(b.input) ? b.input : {} },
    }));
  const thinking =
    m.model === model
      ? m.blocks
          .filter((b) => b.type === "thinking" && b.provider === provider && !b.display_only && !b.redacted)
          .map((b) => (b as { text: string }).text)
          .join("")
      : "";
  if (!text && !calls.length && !thinking) return undefined;
  const msg: ChatMessage = { role: "assistant", content: text };
  if (thinking) msg.thinking = thinking;
  if (calls.length) msg.tool_calls = calls;
  return msg;
}
