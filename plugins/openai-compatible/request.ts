/**
 * Neutral {@link ModelRequest} → OpenAI Chat Completions request body (WIRE-FORMATS §2.2;
 * platform.openai.com/docs/api-reference/chat/create).
 */
import type { Block, Effort, Image, Message, ModelRequest } from "../../kernel/index.js";
import type { ChatPreset } from "./presets.js";

/** What the body builder needs besides the request. */
export interface ChatBuildContext {
  /** This provider's name as written in specs. */
  provider: string;
  preset: ChatPreset;
  /** The base URL in use (decides `max_completion_tokens` vs `max_tokens` for `auto`). */
  baseUrl: string;
}

type ChatMessage = Record<string, unknown>;
type Part = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

/** `--effort` → `reasoning_effort`; the API's scale stops at `high`. */
export const REASONING_EFFORT: Record<Effort, "low" | "medium" | "high"> = {
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

const dataUrl = (img: Image): Part => ({ type: "image_url", image_url: { url: `data:${img.media_type};base64,${img.data}` } });

/**
 * Builds the JSON body of `POST {base}/chat/completions` with `stream: true`.
 *
 * - The system prompt is the first message (`role: "system"`, which every compatible server
 *   knows; `developer` is OpenAI-only).
 * - Tool results leave their user message as `role: "tool"` messages (one per call, in order,
 *   right after the assistant turn). Images a tool returned follow in a user message that starts
 *   with a `<tool-images …>` note, since tool messages carry text only (LARIK-REFERENCE §10).
 * - Assistant tool calls carry `arguments` as a JSON string (`raw_input` verbatim when the
 *   model's arguments were not valid JSON).
 * - Thinking is not sent back unless the preset opts in, and then only this provider's and
 *   model's own, as `reasoning_content`.
 */
export function buildChatBody(req: ModelRequest, ctx: ChatBuildContext): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  if (req.system) messages.push({ role: "system", content: req.system });
  for (const m of req.messages) {
    if (m.role === "user") messages.push(...userMessages(m.blocks));
    else {
      const a = assistantMessage(m, req.model, ctx);
      if (a) messages.push(a);
    }
  }
  const body: Record<string, unknown> = { model: req.model, messages, stream: true };
  if (ctx.preset.streamOptions) body.stream_options = { include_usage: true };
  if (req.tools.length) {
    body.tools = req.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  }
  if (req.max_tokens !== undefined) body[maxTokensField(ctx)] = req.max_tokens;
  if (req.effort) {
    if (ctx.preset.effort === "reasoning_effort") body.reasoning_effort = REASONING_EFFORT[req.effort];
    else if (ctx.preset.effort === "openrouter") body.reasoning = { effort: REASONING_EFFORT[req.effort] };
  }
  if (req.session_id && isOpenAI(ctx.baseUrl)) body.prompt_cache_key = req.session_id;
  return body;
}

function isOpenAI(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

function maxTokensField(ctx: ChatBuildContext): "max_tokens" | "max_completion_tokens" {
  const f = ctx.preset.maxTokensField;
  if (f !== "auto") return f;
  return isOpenAI(ctx.baseUrl) ? "max_completion_tokens" : "max_tokens";
}

function userMessages(blocks: Block[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: Part[] = [];
  for (const b of blocks) {
    if (b.type !== "tool_result") continue;
    out.push({ role: "tool", tool_call_id: b.id, content: b.content });
    if (b.images?.length) {
      parts.push({ type: "text", text: `<tool-images tool_call_id="${b.id}">The tool call ${b.id} returned these images.</tool-images>` });
      for (const img of b.images) parts.push(dataUrl(img));
    }
  }
  for (const b of blocks) {
    if (b.type === "text" && b.text) parts.push({ type: "text", text: b.text });
    else if (b.type === "image") parts.push(dataUrl(b));
  }
  if (parts.length) {
    // Plain text goes as a string: some compatible servers accept only string content.
    const textOnly = parts.every((p) => p.type === "text");
    out.push({ role: "user", content: textOnly ? parts.map((p) => (p as { text: string }).text).join("\n\n") : parts });
  }
  return out;
}

function assistantMessage(m: Message, model: string, ctx: ChatBuildContext): ChatMessage | undefined {
  const text = m.blocks
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("");
  const calls = m.blocks.flatMap((b) =>
    b.type === "tool_use"
      ? [{ id: b.id, type: "function", function: { name: b.name, arguments: b.raw_input ?? JSON.stringify(b.input ?? {}) } }]
      : [],
  );
  if (!text && !calls.length) return undefined;
  const msg: ChatMessage = { role: "assistant", content: text || null };
  if (calls.length) msg.tool_calls = calls;
  if (ctx.preset.replayReasoning && m.model === model) {
    const reasoning = m.blocks
      .filter((b) => b.type === "thinking" && b.provider === ctx.provider && !b.display_only && !b.redacted)
      .map((b) => (b as { text: string }).text)
      .join("");
    if (reasoning) msg.reasoning_content = reasoning;
  }
  return msg;
}
