/**
 * Neutral {@link ModelRequest} → OpenAI Responses API request body (WIRE-FORMATS §3.1;
 * platform.openai.com/docs/api-reference/responses/create, openai-python
 * `types/responses/response_input_item_param.py`).
 */
import { createHash } from "node:crypto";
import type { Block, Image, Message, ModelRequest } from "../../kernel/index.js";
import { isReasoningModel, reasoningEffort } from "./catalog.js";

/** What the body builder needs besides the request. */
export interface ResponsesBuildContext {
  /** This provider's name as written in specs: opaque reasoning replays only to it. */
  provider: string;
}

type Item = Record<string, unknown>;
type Part = { type: "input_text"; text: string } | { type: "input_image"; image_url: string };

const imagePart = (img: Image): Part => ({ type: "input_image", image_url: `data:${img.media_type};base64,${img.data}` });

/**
 * A stable `prompt_cache_key` for one conversation: a UUID-shaped SHA-256 digest of the session
 * id (LARIK-REFERENCE §10 "UUID from session id"), so requests of one session share cache routing
 * without exposing the id itself.
 */
export function promptCacheKey(sessionId: string): string {
  const h = createHash("sha256").update(`larik-session:${sessionId}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * Builds the JSON body of `POST {base}/responses` with `stream: true`, stateless.
 *
 * - `store: false`; the system prompt is `instructions`.
 * - Reasoning models get `include: ["reasoning.encrypted_content"]` and
 *   `reasoning: {summary: "auto", effort?}`; others get `reasoning` only when `--effort` is set.
 * - Reasoning items (opaque blocks) are put back verbatim, in place, only when the block's
 *   provider is this provider and the message's model is the requested model (invariant 11).
 * - Assistant text → `message` items with `output_text`; tool calls → `function_call` items keyed
 *   by `call_id` (the tool_use id), arguments as a JSON string (`raw_input` verbatim).
 * - Tool results → `function_call_output` items (before the rest of the user message); a result
 *   with images sends an `input_text` + `input_image` array as its output.
 * - Tools are flat `{type:"function", name, description, parameters, strict:false}`.
 */
export function buildResponsesBody(req: ModelRequest, ctx: ResponsesBuildContext): Record<string, unknown> {
  const input: Item[] = [];
  for (const m of req.messages) {
    if (m.role === "user") userItems(m.blocks, input);
    else assistantItems(m, req.model, ctx.provider, input);
  }
  const body: Record<string, unknown> = { model: req.model, stream: true, store: false };
  if (req.system) body.instructions = req.system;
  body.input = input;
  if (req.tools.length) {
    body.tools = req.tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.input_schema, strict: false }));
  }
  const reasoning = isReasoningModel(req.model);
  if (reasoning || req.effort) {
    body.reasoning = { ...(req.effort ? { effort: reasoningEffort(req.model, req.effort) } : {}), summary: "auto" };
    body.include = ["reasoning.encrypted_content"];
  }
  if (req.max_tokens !== undefined) body.max_output_tokens = req.max_tokens;
  if (req.session_id) body.prompt_cache_key = promptCacheKey(req.session_id);
  return body;
}

function userItems(blocks: Block[], out: Item[]): void {
  for (const b of blocks) {
    if (b.type !== "tool_result") continue;
    if (b.images?.length) {
      const parts: Part[] = [];
      if (b.content) parts.push({ type: "input_text", text: b.content });
      for (const img of b.images) parts.push(imagePart(img));
      out.push({ type: "function_call_output", call_id: b.id, output: parts });
    } else {
      out.push({ type: "function_call_output", call_id: b.id, output: b.content });
    }
  }
  const parts: Part[] = [];
  for (const b of blocks) {
    if (b.type === "text" && b.text) parts.push({ type: "input_text", text: b.text });
    else if (b.type === "image") parts.push(imagePart(b));
  }
  if (parts.length) out.push({ type: "message", role: "user", content: parts });
}

function assistantItems(m: Message, model: string, provider: string, out: Item[]): void {
  const own = m.model === model;
  let text: { type: "output_text"; text: string }[] = [];
  const flush = () => {
    if (text.length) out.push({ type: "message", role: "assistant", content: text });
    text = [];
  };
  for (const b of m.blocks) {
    switch (b.type) {
      case "text":
        if (b.text) text.push({ type: "output_text", text: b.text });
        break;
      case "opaque":
        if (own && b.provider === provider && b.raw && typeof b.raw === "object") {
          flush();
          out.push(b.raw as Item);
        }
        break;
      case "tool_use":
        flush();
        out.push({ type: "function_call", call_id: b.id, name: b.name, arguments: b.raw_input ?? JSON.stringify(b.input ?? {}) });
        break;
      default:
        // thinking blocks are the display copy of a reasoning item's summary; the item itself is
        // the opaque block above
        break;
    }
  }
  flush();
}
