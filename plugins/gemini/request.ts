/**
 * Neutral {@link ModelRequest} → Gemini `streamGenerateContent` request body (WIRE-FORMATS §4.2;
 * ai.google.dev/api/generate-content, ai.google.dev/gemini-api/docs/thought-signatures).
 */
import type { Block, Message, ModelRequest, ToolUseBlock } from "../../kernel/index.js";
import { thinkingFields, thinkingStyle } from "./catalog.js";
import { toGeminiSchema } from "./schema.js";

/** What the body builder needs besides the request. */
export interface GeminiBuildContext {
  /** This provider's name as written in specs: signatures replay only to it. */
  provider: string;
}

type Part = Record<string, unknown>;
type Content = { role: "user" | "model"; parts: Part[] };

/** Prefix of call ids minted locally for Gemini calls that came without one (2.5 models). */
export const MINTED_ID_PREFIX = "larik_gm_";

/**
 * Builds the JSON body of `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`.
 *
 * - The system prompt is `systemInstruction`; roles are `user` and `model`.
 * - Tools are one `functionDeclarations` list with schemas cut to Gemini's subset.
 * - A model turn is sent back part by part as received: text and function calls keep their
 *   `thoughtSignature` on the same part (the first of parallel calls included; an empty text
 *   part that only carries a signature is kept) when the block's provider is this provider and
 *   the message's model is the requested model. Thought summaries (`display_only` thinking) are
 *   never sent.
 * - Tool results become `functionResponse` parts, in call order, with the call's name,
 *   `response: {output}` (or `{error}`), and the call's own `id` when Gemini gave one (minted ids
 *   stay local). Images a tool returned follow as `inlineData` parts.
 * - `thinkingConfig`: `includeThoughts: true` on thinking models, plus the effort's level or budget.
 */
export function buildGeminiBody(req: ModelRequest, ctx: GeminiBuildContext): Record<string, unknown> {
  const calls = new Map<string, ToolUseBlock>();
  for (const m of req.messages) for (const b of m.blocks) if (b.type === "tool_use") calls.set(b.id, b);
  const contents: Content[] = [];
  for (const m of req.messages) {
    const parts = m.role === "user" ? userParts(m.blocks, calls, ctx.provider) : modelParts(m, req.model, ctx.provider);
    if (parts.length) contents.push({ role: m.role === "user" ? "user" : "model", parts });
  }
  const body: Record<string, unknown> = { contents };
  if (req.system) body.systemInstruction = { parts: [{ text: req.system }] };
  if (req.tools.length) {
    body.tools = [
      {
        functionDeclarations: req.tools.map((t) => {
          const parameters = toGeminiSchema(t.input_schema);
          return { name: t.name, description: t.description, ...(parameters ? { parameters } : {}) };
        }),
      },
    ];
  }
  const generationConfig: Record<string, unknown> = {};
  if (req.max_tokens !== undefined) generationConfig.maxOutputTokens = req.max_tokens;
  if (thinkingStyle(req.model) !== "none") {
    generationConfig.thinkingConfig = { includeThoughts: true, ...(req.effort ? thinkingFields(req.model, req.effort) : {}) };
  }
  if (Object.keys(generationConfig).length) body.generationConfig = generationConfig;
  return body;
}

/** Whether the call id came from Gemini (and so may be echoed) rather than minted here. */
function providerId(call: ToolUseBlock | undefined, provider: string): string | undefined {
  if (!call || call.provider !== provider || call.id.startsWith(MINTED_ID_PREFIX)) return undefined;
  return call.id;
}

function userParts(blocks: Block[], calls: Map<string, ToolUseBlock>, provider: string): Part[] {
  const parts: Part[] = [];
  const images: Part[] = [];
  for (const b of blocks) {
    if (b.type !== "tool_result") continue;
    const call = calls.get(b.id);
    const id = providerId(call, provider);
    parts.push({
      functionResponse: {
        name: call?.name ?? "unknown_tool",
        ...(id ? { id } : {}),
        response: b.is_error ? { error: b.content } : { output: b.content },
      },
    });
    for (const img of b.images ?? []) images.push({ inlineData: { mimeType: img.media_type, data: img.data } });
  }
  parts.push(...images);
  for (const b of blocks) {
    if (b.type === "text" && b.text) parts.push({ text: b.text });
    else if (b.type === "image") parts.push({ inlineData: { mimeType: b.media_type, data: b.data } });
  }
  return parts;
}

function modelParts(m: Message, model: string, provider: string): Part[] {
  const own = m.model === model;
  const sig = (b: { signature?: string; provider?: string }) => (own && b.provider === provider && b.signature ? { thoughtSignature: b.signature } : {});
  const parts: Part[] = [];
  for (const b of m.blocks) {
    switch (b.type) {
      case "text": {
        const s = sig(b);
        if (b.text || s.thoughtSignature) parts.push({ text: b.text, ...s });
        break;
      }
      case "tool_use": {
        const input = b.input && typeof b.input === "object" && !Array.isArray(b.input) ? b.input : {};
        const id = providerId(b, provider);
        parts.push({ functionCall: { name: b.name, args: input, ...(id ? { id } : {}) }, ...sig(b) });
        break;
      }
      case "opaque":
        if (own && b.provider === provider && b.raw && typeof b.raw === "object") parts.push(b.raw as Part);
        break;
      default:
        // thought summaries are display only; other providers' thinking is not portable
        break;
    }
  }
  return parts;
}
