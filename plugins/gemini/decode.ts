/**
 * Gemini `streamGenerateContent?alt=sse` chunks → neutral {@link StreamEvent}s (WIRE-FORMATS
 * §4.3–§4.5; ai.google.dev/gemini-api/docs/thought-signatures).
 */
import {
  classifyHttpError,
  mintToolCallId,
  parseJsonEvent,
  runStreamDecoder,
  TextAccumulator,
  truncatedError,
  type Block,
  type ModelStopReason,
  type ProviderError,
  type SseEvent,
  type StreamDecoder,
  type StreamOutput,
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
function mapFinishReason(reason: string, hasCalls: boolean): ModelStopReason {
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
function mapGeminiUsage(u: Raw | undefined): Usage {
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
function geminiStreamError(provider: string, payload: Raw): ProviderError {
  const code = payload?.error?.code;
  const status = typeof code === "number" && code >= 400 ? code : 500;
  return classifyHttpError({ provider, status, bodyText: JSON.stringify(payload) });
}


/**
 * Decodes one response. Answer text and thought summaries (`thought: true` parts) are yielded as
 * they come (the deltas of one network read merged into one event), `tool_use_start` per
 * function call (calls arrive whole), and one `done` when the stream ends after a `finishReason`.
 *
 * - Consecutive unsigned text parts are joined; a part with a `thoughtSignature` keeps it as its
 *   own block, so the model turn can be sent back part for part (an empty signed part too).
 * - Thought summaries become one `display_only` thinking block (never replayed).
 * - Call ids: Gemini 3's `functionCall.id`, else a minted `larik_gm_…` id.
 * - Usage is the last chunk's `usageMetadata`; a prompt blocked by `promptFeedback.blockReason`
 *   finishes as a refusal.
 *
 * `events`: batches from `readSseBatches` (fastest) or single events.
 * @throws ProviderError from an in-stream `error` chunk; `truncated` when the stream ends without
 *   a `finishReason` (Gemini has no other terminator).
 */
export function decodeGeminiStream(events: AsyncIterable<SseEvent | readonly SseEvent[]>, ctx: GeminiDecodeContext): AsyncGenerator<StreamEvent> {
  return runStreamDecoder(events, new GeminiDecoder(ctx));
}

/** A block of the message being built; text is accumulated until the end. */
type Pending = Block | { type: "text"; text: TextAccumulator } | { type: "thinking"; text: TextAccumulator; provider: string; display_only: true };

/** The state of one response between chunks (see {@link decodeGeminiStream}). */
class GeminiDecoder implements StreamDecoder<SseEvent> {
  readonly #ctx: GeminiDecodeContext;
  readonly #blocks: Pending[] = [];
  #thinking: TextAccumulator | undefined;
  // the text block still open for unsigned parts
  #open: TextAccumulator | undefined;
  #finish: string | undefined;
  #finishMessage: string | undefined;
  #blocked: string | undefined;
  #usage: Raw | undefined;
  #hasCalls = false;

  constructor(ctx: GeminiDecodeContext) {
    this.#ctx = ctx;
  }

  feed(ev: SseEvent, out: StreamOutput): boolean {
    const provider = this.#ctx.provider;
    const chunk = parseJsonEvent(provider, ev.data) as Raw;
    if (!chunk || typeof chunk !== "object") return false;
    if (chunk.error) throw geminiStreamError(provider, chunk);
    if (chunk.usageMetadata && typeof chunk.usageMetadata === "object") this.#usage = chunk.usageMetadata;
    if (typeof chunk.promptFeedback?.blockReason === "string") this.#blocked = chunk.promptFeedback.blockReason;
    const cand: Raw | undefined = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
    if (!cand) return false;
    const parts = cand.content?.parts;
    if (Array.isArray(parts)) {
      for (let p = 0; p < parts.length; p++) this.#part(parts[p] as Raw, out);
    }
    if (typeof cand.finishReason === "string" && cand.finishReason) this.#finish = cand.finishReason;
    if (typeof cand.finishMessage === "string") this.#finishMessage = cand.finishMessage;
    return false;
  }

  #part(part: Raw, out: StreamOutput): void {
    const provider = this.#ctx.provider;
    const signature = typeof part.thoughtSignature === "string" && part.thoughtSignature ? part.thoughtSignature : undefined;
    if (part.thought === true) {
      const t = typeof part.text === "string" ? part.text : "";
      if (t) {
        if (!this.#thinking) {
          this.#thinking = new TextAccumulator();
          this.#blocks.push({ type: "thinking", text: this.#thinking, provider, display_only: true });
        }
        out.delta("thinking_delta", t, this.#thinking);
      }
      // a signature on a summary part is kept on an empty text part, which is replayed
      if (signature) {
        this.#blocks.push({ type: "text", text: "", signature, provider });
        this.#open = undefined;
      }
    } else if (part.functionCall && typeof part.functionCall === "object") {
      const fc = part.functionCall as Raw;
      const id = typeof fc.id === "string" && fc.id ? fc.id : mintToolCallId(MINTED_ID_PREFIX);
      const name = String(fc.name ?? "");
      const input = fc.args && typeof fc.args === "object" && !Array.isArray(fc.args) ? fc.args : {};
      this.#blocks.push({ type: "tool_use", id, name, input, provider, ...(signature ? { signature } : {}) });
      this.#open = undefined;
      this.#hasCalls = true;
      out.push({ type: "tool_use_start", id, name });
    } else if (typeof part.text === "string") {
      if (signature) {
        out.delta("text_delta", part.text);
        this.#blocks.push({ type: "text", text: part.text, signature, provider });
        this.#open = undefined;
      } else if (part.text) {
        if (!this.#open) {
          this.#open = new TextAccumulator();
          this.#blocks.push({ type: "text", text: this.#open });
        }
        out.delta("text_delta", part.text, this.#open);
      }
    } else {
      // executableCode, codeExecutionResult, inlineData…: kept for replay to this model
      this.#blocks.push({ type: "opaque", provider, raw: part });
      this.#open = undefined;
    }
  }

  end(out: StreamOutput): void {
    const { provider, model } = this.#ctx;
    const finish = this.#finish;
    if (!finish && !this.#blocked) throw truncatedError(provider, "a finishReason");
    const stop: ModelStopReason = finish ? mapFinishReason(finish, this.#hasCalls) : "refusal";
    if (this.#blocked) out.push({ type: "notice", text: `${provider}: the prompt was blocked (${this.#blocked})` });
    else if (stop === "error") out.push({ type: "notice", text: `${provider}: the model stopped with ${finish}${this.#finishMessage ? `: ${this.#finishMessage}` : ""}` });
    // accumulated text becomes plain strings: the message is what the kernel stores and replays
    const blocks = this.#blocks.map((b) => {
      const text = (b as { text?: unknown }).text;
      return text instanceof TextAccumulator ? { ...b, text: text.toString() } : b;
    }) as Block[];
    out.push({ type: "done", message: { role: "assistant", blocks, model }, usage: mapGeminiUsage(this.#usage), stop_reason: stop });
  }
}
