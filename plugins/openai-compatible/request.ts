/**
 * Neutral {@link ModelRequest} → OpenAI Chat Completions request body (WIRE-FORMATS §2.2;
 * platform.openai.com/docs/api-reference/chat/create).
 */
import { createHash } from "node:crypto";
import { storedImageProblem, type Block, type Effort, type Image, type Message, type ModelRequest } from "../../kernel/index.js";
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
const REASONING_EFFORT: Record<Effort, "low" | "medium" | "high"> = {
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

/**
 * An image as a data URL part, or, when it is not a whole image of its type (kernel/kit/images.ts: one
 * kept in a session from before `read` checked images), a text note: servers answer a broken
 * image with HTTP 400 on every request that carries it.
 */
function dataUrl(img: Image): Part {
  const why = storedImageProblem(img);
  if (why) return { type: "text", text: `[image omitted: ${why}]` };
  return { type: "image_url", image_url: { url: `data:${img.media_type};base64,${img.data}` } };
}

/**
 * Builds the JSON body of `POST {base}/chat/completions` with `stream: true`.
 *
 * - The system prompt is the first message (`role: "system"`, which every compatible server
 *   knows; `developer` is OpenAI-only).
 * - Tool results leave their user message as `role: "tool"` messages (one per call, in order,
 *   right after the assistant turn). Images a tool returned follow in a user message that starts
 *   with a `<tool-images …>` note, since tool messages carry text only (LARIK-REFERENCE §10).
 *   An image that fails the structural check goes as a text note instead (see `dataUrl`).
 * - Assistant tool calls carry `arguments` as a JSON string (`raw_input` verbatim when the
 *   model's arguments were not valid JSON).
 * - Thinking is not sent back unless the preset opts in, and then only this provider's and
 *   model's own, as `reasoning_content`.
 * - Tool-call ids are mapped to 9 alphanumerics for a server that accepts nothing else
 *   (Mistral: preset `toolCallIds: "alnum9"` or a base URL on api.mistral.ai); see
 *   {@link alnum9Ids}.
 */
export function buildChatBody(req: ModelRequest, ctx: ChatBuildContext): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  if (req.system) messages.push({ role: "system", content: req.system });
  const ids = ctx.preset.toolCallIds === "alnum9" || hostname(ctx.baseUrl) === "api.mistral.ai" ? alnum9Ids() : (id: string) => id;
  for (const m of req.messages) {
    if (m.role === "user") messages.push(...userMessages(m.blocks, ids));
    else {
      const a = assistantMessage(m, req.model, ctx, ids);
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

function hostname(baseUrl: string): string | undefined {
  try {
    return new URL(baseUrl).hostname;
  } catch {
    return undefined;
  }
}

function isOpenAI(baseUrl: string): boolean {
  return hostname(baseUrl) === "api.openai.com";
}

const ALNUM9 = /^[A-Za-z0-9]{9}$/;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** 9 base-62 digits of sha256(`text`): the same text always gives the same id. */
function hash9(text: string): string {
  let n = createHash("sha256").update(text).digest().readBigUInt64BE(0);
  let out = "";
  for (let i = 0; i < 9; i++) {
    out += BASE62[Number(n % 62n)];
    n /= 62n;
  }
  return out;
}

/**
 * A tool-call id mapper for one request body: an id that already is 9 alphanumerics (Mistral's
 * own) is kept, any other becomes 9 base-62 digits of its sha256. A function of the id alone, so
 * a conversation's earlier turns are sent byte for byte the same every request (the server's
 * prompt cache keeps working) and a call and its result still pair up. Should two ids of one
 * request meet on the same 9 characters (about 1 in 10^16 per pair), the later one is rehashed
 * with a counter; ids are met in message order, which only grows at the end, so that stays stable
 * too. Source: Mistral's HTTP 400 "Tool call id was … but must be a-z, A-Z, 0-9, with a length
 * of 9" (quoted in langchain-ai/langchain#24668).
 */
export function alnum9Ids(): (id: string) => string {
  const byId = new Map<string, string>();
  const taken = new Set<string>();
  return (id) => {
    let mapped = byId.get(id);
    if (mapped !== undefined) return mapped;
    mapped = ALNUM9.test(id) ? id : hash9(id);
    for (let n = 1; taken.has(mapped); n++) mapped = hash9(`${id}\0${n}`);
    byId.set(id, mapped);
    taken.add(mapped);
    return mapped;
  };
}

function maxTokensField(ctx: ChatBuildContext): "max_tokens" | "max_completion_tokens" {
  const f = ctx.preset.maxTokensField;
  if (f !== "auto") return f;
  return isOpenAI(ctx.baseUrl) ? "max_completion_tokens" : "max_tokens";
}

function userMessages(blocks: Block[], ids: (id: string) => string): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: Part[] = [];
  for (const b of blocks) {
    if (b.type !== "tool_result") continue;
    const id = ids(b.id);
    out.push({ role: "tool", tool_call_id: id, content: b.content });
    if (b.images?.length) {
      parts.push({ type: "text", text: `<tool-images tool_call_id="${id}">The tool call ${id} returned these images.</tool-images>` });
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

function assistantMessage(m: Message, model: string, ctx: ChatBuildContext, ids: (id: string) => string): ChatMessage | undefined {
  // one string for the reply's text blocks: each block on its own (a cut-short reply's marker,
  // `[interrupted by user]`, is a block of its own, not more of the last word)
  const text = m.blocks
    .filter((b) => b.type === "text")
    .map((b) => (b as { text: string }).text)
    .join("\n\n");
  const calls = m.blocks.flatMap((b) =>
    b.type === "tool_use"
      ? [{ id: ids(b.id), type: "function", function: { name: b.name, arguments: b.raw_input ?? JSON.stringify(b.input ?? {}) } }]
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
