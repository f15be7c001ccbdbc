/**
 * Gemini `streamGenerateContent?alt=sse` chunks → neutral {@link StreamEvent}s (WIRE-FORMATS
 * §4.3–§4.5; ai.google.dev/gemini-api/docs/thought-signatures).
 */
import {
  classifyHttpError,
  parseJsonEvent,
  truncatedError,
  type Block,
  type ModelStopReason,
  type ProviderError,
  type SseEvent,
  type StreamEvent,
  type Usage,
} from "../../kernel/index.js";
import { MINTED_ID_PREFIX } from "./request.js";

/** Who is decoding: blocks are stamped with `provider`, the message with `model`. */
export interface GeminiDecodeContext {
  provider: string;
  /** The requested model id (replay compares against it, not `modelVersion`). */
  model: string;
}

type Raw = Record<string, any>;

const REFUSAL = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"]);
const FAILED = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]);

/**
 * `finishReason` → neutral stop (WIRE-FORMATS §0.6, §4.4). There is no tool-call reason: `STOP`
 * with function calls is `tool_use`.
 */
export function mapFinishReason(reason: string, hasCalls: boolean): ModelStopReason {
  if (reason === "MAX_TOKENS") return "max_tokens";
  if (REFUSAL.has(reason)) return "refusal";
  if (FAILED.has(reason)) return "error";
  return hasCalls ? "tool_use" : "end_turn";
}

/**
 * `usageMetadata` (a running snapshot; the last one counts) → neutral {@link Usage}.
 * `promptTokenCount` includes `cachedContentTokenCount`, which goes to `cache_read`; tool-use
 * prompt tokens are billed as input; output is candidates plus thoughts (candidates exclude them).
 */
export function mapGeminiUsage(u: Raw | undefined): Usage {
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  if (!u) return { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  const cached = Math.min(n(u.cachedContentTokenCount), n(u.promptTokenCount));
  return {
    input: n(u.promptTokenCount) - cached + n(u.toolUsePromptTokenCount),
    output: n(u.candidatesTokenCount) + n(u.thoughtsTokenCount),
    cache_read: cached,
    cache_write: 0,
  };
}

/** An `{error:{code, message, status}}` chunk inside a 200 stream, classified by its code. */
export function geminiStreamError(provider: string, payload: Raw): ProviderError {
  const code = payload?.error?.code;
  const status = typeof code === "number" && code >= 400 ? code : 500;
  return classifyHttpError({ provider, status, bodyText: JSON.stringify(payload) });
}

let minted = 0;
const mintId = () => `${MINTED_ID_PREFIX}${Date.now().toString(36)}_${(minted++).toString(36)}`;

/**
 * Decodes one response. Answer text and thought summaries (`thought: true` parts) are yielded as
 * they come, `tool_use_start` per function call (calls arrive whole), and one `done` when the
 * stream ends after a `finishReason`.
 *
 * - Consecutive unsigned text parts are joined; a part with a `thoughtSignature` keeps it as its
 *   own block, so the model turn can be sent back part for part (an empty signed part too).
 * - Thought summaries become one `display_only` thinking block (never replayed).
 * - Call ids: Gemini 3's `functionCall.id`, else a minted `larik_gm_…` id.
 * - Usage is the last chunk's `usageMetadata`; a prompt blocked by `promptFeedback.blockReason`
 *   finishes as a refusal.
 *
 * @throws ProviderError from an in-stream `error` chunk; `truncated` when the stream ends without
 *   a `finishReason` (Gemini has no other terminator).
 */
export async function* decodeGeminiStream(events: AsyncIterable<SseEvent>, ctx: GeminiDecodeContext): AsyncGenerator<StreamEvent> {
  const blocks: Block[] = [];
  let thinking: Extract<Block, { type: "thinking" }> | undefined;
  // the text block still open for unsigned parts
  let open: Extract<Block, { type: "text" }> | undefined;
  let finish: string | undefined;
  let finishMessage: string | undefined;
  let blocked: string | undefined;
  let usage: Raw | undefined;
  let hasCalls = false;

  for await (const ev of events) {
    const chunk = parseJsonEvent(ctx.provider, ev.data) as Raw;
    if (!chunk || typeof chunk !== "object") continue;
    if (chunk.error) throw geminiStreamError(ctx.provider, chunk);
    if (chunk.usageMetadata && typeof chunk.usageMetadata === "object") usage = chunk.usageMetadata;
    if (typeof chunk.promptFeedback?.blockReason === "string") blocked = chunk.promptFeedback.blockReason;
    const cand: Raw | undefined = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
    if (!cand) continue;
    const parts: Raw[] = Array.isArray(cand.content?.parts) ? cand.content.parts : [];
    for (const part of parts) {
      const signature = typeof part.thoughtSignature === "string" && part.thoughtSignature ? part.thoughtSignature : undefined;
      if (part.thought === true) {
        const t = typeof part.text === "string" ? part.text : "";
        if (t) {
          if (!thinking) {
            thinking = { type: "thinking", text: "", provider: ctx.provider, display_only: true };
            blocks.push(thinking);
          }
          thinking.text += t;
          yield { type: "thinking_delta", text: t };
        }
        // a signature on a summary part is kept on an empty text part, which is replayed
        if (signature) {
          blocks.push({ type: "text", text: "", signature, provider: ctx.provider });
          open = undefined;
        }
      } else if (part.functionCall && typeof part.functionCall === "object") {
        const fc = part.functionCall as Raw;
        const id = typeof fc.id === "string" && fc.id ? fc.id : mintId();
        const name = String(fc.name ?? "");
        const input = fc.args && typeof fc.args === "object" && !Array.isArray(fc.args) ? fc.args : {};
        blocks.push({ type: "tool_use", id, name, input, provider: ctx.provider, ...(signature ? { signature } : {}) });
        open = undefined;
        hasCalls = true;
        yield { type: "tool_use_start", id, name };
      } else if (typeof part.text === "string") {
        if (part.text) yield { type: "text_delta", text: part.text };
        if (signature) {
          blocks.push({ type: "text", text: part.text, signature, provider: ctx.provider });
          open = undefined;
        } else if (part.text) {
          if (!open) {
            open = { type: "text", text: "" };
            blocks.push(open);
          }
          open.text += part.text;
        }
      } else {
        // executableCode, codeExecutionResult, inlineData…: kept for replay to this model
        blocks.push({ type: "opaque", provider: ctx.provider, raw: part });
        open = undefined;
      }
    }
    if (typeof cand.finishReason === "string" && cand.finishReason) finish = cand.finishReason;
    if (typeof cand.finishMessage === "string") finishMessage = cand.finishMessage;
  }
  if (!finish && !blocked) throw truncatedError(ctx.provider, "a finishReason");
  let stop: ModelStopReason;
  if (!finish) stop = "refusal";
  else stop = mapFinishReason(finish, hasCalls);
  if (blocked) yield { type: "notice", text: `${ctx.provider}: the prompt was blocked (${blocked})` };
  else if (stop === "error") yield { type: "notice", text: `${ctx.provider}: the model stopped with ${finish}${finishMessage ? `: ${finishMessage}` : ""}` };
  yield { type: "done", message: { role: "assistant", blocks, model: ctx.model }, usage: mapGeminiUsage(usage), stop_reason: stop };
}
