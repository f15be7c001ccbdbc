/**
 * Neutral {@link ModelRequest} → Anthropic Messages API request body
 * (WIRE-FORMATS §1.2–§1.4; platform.claude.com/docs/en/api/messages).
 */
import { createHash } from "node:crypto";
import { storedImageProblem, type Block, type Effort, type Message, type ModelRequest } from "../../kernel/index.js";
import { thinkingStyle } from "./catalog.js";

/** What the body builder needs besides the request. */
export interface BuildContext {
  /** This provider's name as written in specs: thinking/opaque blocks replay only to it. */
  provider: string;
  /** Output cap when the request has none (tokens). */
  defaultMaxTokens: number;
  /**
   * Base64 data of images the API refused earlier (HTTP 400 `Could not process image`, see
   * image-reject.ts): sent as a note instead, so the request does not fail again.
   */
  rejectedImages?: ReadonlySet<string>;
}

type ApiBlock = Record<string, unknown>;
type ApiMessage = { role: "user" | "assistant"; content: ApiBlock[] };

/** Thinking budget per effort for models without adaptive thinking (tokens, before capping). */
const THINKING_BUDGETS: Record<Effort, number> = {
  low: 2_048,
  medium: 8_192,
  high: 16_384,
  xhigh: 32_768,
  max: 65_536,
};

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * Builds the JSON body of `POST /v1/messages` with `stream: true`.
 *
 * - `system` becomes one text block carrying a cache breakpoint.
 * - Tool results stay inside user messages, first in the content (the API requires it), with
 *   `is_error` and images as content blocks.
 * - An image that is not a whole PNG, JPEG, GIF or WebP of its declared type (kernel/kit/images.ts;
 *   one read before that check existed, kept in a session), one over {@link MAX_IMAGE_BASE64}
 *   (`read` takes files up to 5 MB, which base64 makes 6.7 MB) or one the API refused earlier
 *   (`rejectedImages`) is sent as a text note `[image omitted: …]`: the API answers such an image
 *   with HTTP 400 `Could not process image` on every request that carries it.
 * - Text blocks that are empty or only white space are left out: the API answers them with
 *   HTTP 400 "text content blocks must contain non-whitespace text", on every later request of
 *   the session, since the block stays in the transcript (a model may answer "\n\n" before a
 *   tool call).
 * - Tool-call ids are kept, except ids the API's pattern `^[a-zA-Z0-9_-]+$` rejects (ids made
 *   by other providers, e.g. Kimi's `functions.bash:0`, after a model switch): see
 *   {@link anthropicToolId}; and except an id an earlier call of the conversation already has
 *   (the API wants every `tool_use` id of a request unique, while servers that number calls per
 *   message, such as Kimi's, repeat them): that call and its result get `<id>_2`, `_3`, ….
 * - Thinking (signature kept verbatim), redacted thinking and opaque server-tool blocks are
 *   replayed only when the block's `provider` is this provider and the message's `model` is the
 *   requested model (invariant 11); otherwise they are dropped.
 * - Cache breakpoints: the system prompt, the last block of the user message before the newest
 *   assistant message (last request's end, so it hits), and the last block of the last message.
 * - Effort: adaptive models get `thinking:{type:"adaptive"}` always and `output_config.effort`
 *   when an effort is set; budget models get `budget_tokens` from {@link THINKING_BUDGETS}
 *   capped at ¾ of `max_tokens`, only when an effort is set.
 */
export function buildBody(req: ModelRequest, ctx: BuildContext): Record<string, unknown> {
  const maxTokens = req.max_tokens ?? ctx.defaultMaxTokens;
  const messages: ApiMessage[] = [];
  const used = new Set<string>();
  // the ids of the last assistant message's calls, which the next user message's results answer
  let ids = new Map<string, string>();
  for (const m of req.messages) {
    let content: ApiBlock[];
    if (m.role === "user") {
      content = userContent(m.blocks, (id) => ids.get(id) ?? anthropicToolId(id), ctx.rejectedImages);
      ids = new Map();
    } else {
      ids = uniqueToolIds(m, used);
      content = assistantContent(m, req.model, ctx.provider, (id) => ids.get(id) ?? anthropicToolId(id));
    }
    if (content.length) messages.push({ role: m.role, content });
  }
  placeCacheBreakpoints(messages);

  const body: Record<string, unknown> = { model: req.model, max_tokens: maxTokens, stream: true };
  if (req.system) body.system = [{ type: "text", text: req.system, cache_control: EPHEMERAL }];
  body.messages = messages;
  if (req.tools.length) {
    body.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema }));
  }
  const style = thinkingStyle(req.model);
  if (style === "adaptive") {
    body.thinking = { type: "adaptive" };
    if (req.effort) body.output_config = { effort: req.effort };
  } else if (style === "budget" && req.effort) {
    const budget = Math.min(THINKING_BUDGETS[req.effort], Math.floor(maxTokens * 0.75));
    if (budget >= 1024) body.thinking = { type: "enabled", budget_tokens: budget };
  }
  return body;
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * The id a tool call and its result carry in a Messages API request: `id` itself when it matches
 * the API's pattern `^[a-zA-Z0-9_-]+$` (every Anthropic, OpenAI and Larik-minted id does), else
 * its disallowed characters replaced by `_` plus 8 hex digits of its sha256, so two ids that
 * differ only in those characters stay apart. A function of the id alone: a call and its result
 * still pair up, and every request repeats the conversation byte for byte (the prompt cache keeps
 * working). Without it the API answers HTTP 400 `tool_use.id: String should match pattern` on
 * every request once such an id is in the conversation.
 */
function anthropicToolId(id: string): string {
  if (TOOL_ID.test(id)) return id;
  return `${id.replace(/[^a-zA-Z0-9_-]/g, "_")}_${createHash("sha256").update(id).digest("hex").slice(0, 8)}`;
}

/**
 * The request ids of `m`'s tool calls, by their own id: {@link anthropicToolId}, with `_<n>`
 * added (the first `n` from 2 up that is free) when an earlier call in `used` has that id, so the
 * API's "tool_use ids must be unique" (HTTP 400, on every request of the session) is never met.
 * Earlier messages are mapped the same way in every request: the prompt prefix stays cached.
 */
function uniqueToolIds(m: Message, used: Set<string>): Map<string, string> {
  const ids = new Map<string, string>();
  for (const b of m.blocks) {
    if (b.type !== "tool_use" || ids.has(b.id)) continue;
    let id = anthropicToolId(b.id);
    if (used.has(id)) {
      let n = 2;
      while (used.has(`${id}_${n}`)) n++;
      id = `${id}_${n}`;
    }
    used.add(id);
    ids.set(b.id, id);
  }
  return ids;
}

/** True when `text` has something besides white space (what the API accepts in a text block). */
const hasText = (text: string | undefined): text is string => !!text && text.trim() !== "";

/**
 * Longest base64 `data` of one image the API takes: 5 MB of base64 text, so 3.75 MB of file (HTTP
 * 400 `image exceeds 5 MB maximum: 6990508 bytes > 5242880 bytes` otherwise).
 */
const MAX_IMAGE_BASE64 = 5 * 1024 * 1024;

/** Why `img` cannot go out as an image (see {@link buildBody}), or undefined. */
function unsendable(img: { media_type: string; data: string }, rejected: ReadonlySet<string> | undefined): string | undefined {
  if (rejected?.has(img.data)) return "the API could not process it";
  if (img.data.length > MAX_IMAGE_BASE64) {
    return `${(img.data.length / 1024 / 1024).toFixed(1)} MB once base64-encoded, over the API's limit of 5 MB for one image`;
  }
  return storedImageProblem(img);
}

function imageBlock(img: { media_type: string; data: string }, rejected: ReadonlySet<string> | undefined): ApiBlock {
  const why = unsendable(img, rejected);
  if (why) return { type: "text", text: `[image omitted: ${why}]` };
  return { type: "image", source: { type: "base64", media_type: img.media_type, data: img.data } };
}

function userContent(blocks: Block[], idOf: (id: string) => string, rejected: ReadonlySet<string> | undefined): ApiBlock[] {
  const results: ApiBlock[] = [];
  const rest: ApiBlock[] = [];
  for (const b of blocks) {
    if (b.type === "tool_result") {
      const out: ApiBlock = { type: "tool_result", tool_use_id: idOf(b.id) };
      if (b.images?.length) {
        const parts: ApiBlock[] = [];
        if (hasText(b.content)) parts.push({ type: "text", text: b.content });
        for (const img of b.images) parts.push(imageBlock(img, rejected));
        out.content = parts;
      } else if (hasText(b.content)) {
        out.content = b.content;
      }
      if (b.is_error) out.is_error = true;
      results.push(out);
    } else if (b.type === "text") {
      if (hasText(b.text)) rest.push({ type: "text", text: b.text });
    } else if (b.type === "image") {
      rest.push(imageBlock(b, rejected));
    }
  }
  return [...results, ...rest];
}

function assistantContent(m: Message, model: string, provider: string, idOf: (id: string) => string): ApiBlock[] {
  const out: ApiBlock[] = [];
  const sameModel = m.model === model;
  for (const b of m.blocks) {
    switch (b.type) {
      case "text":
        if (hasText(b.text)) out.push({ type: "text", text: b.text });
        break;
      case "thinking":
        if (b.display_only || !sameModel || b.provider !== provider || !b.signature) break;
        out.push(b.redacted ? { type: "redacted_thinking", data: b.signature } : { type: "thinking", thinking: b.text, signature: b.signature });
        break;
      case "tool_use": {
        const input = b.input && typeof b.input === "object" && !Array.isArray(b.input) ? b.input : {};
        out.push({ type: "tool_use", id: idOf(b.id), name: b.name, input });
        break;
      }
      case "opaque":
        if (sameModel && b.provider === provider && b.raw && typeof b.raw === "object") out.push(b.raw as ApiBlock);
        break;
      default:
        break;
    }
  }
  return out;
}

/** Block types that may carry `cache_control` (thinking blocks may not). */
function cacheable(b: ApiBlock): boolean {
  return b.type !== "thinking" && b.type !== "redacted_thinking";
}

function mark(msg: ApiMessage | undefined): void {
  if (!msg) return;
  for (let i = msg.content.length - 1; i >= 0; i--) {
    const b = msg.content[i]!;
    if (cacheable(b)) {
      msg.content[i] = { ...b, cache_control: EPHEMERAL };
      return;
    }
  }
}

function placeCacheBreakpoints(messages: ApiMessage[]): void {
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "assistant") {
      lastAssistant = i;
      break;
    }
  }
  for (let i = lastAssistant - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") {
      mark(messages[i]);
      break;
    }
  }
  mark(messages[messages.length - 1]);
}
