/**
 * OpenAI Chat Completions SSE stream → neutral {@link StreamEvent}s (WIRE-FORMATS §2.3–§2.6;
 * openai-python `_streaming.py`, `types/chat/chat_completion_chunk.py`).
 */
import {
  parseJsonEvent,
  parseToolInput,
  ProviderError,
  runStreamDecoder,
  mintToolCallId,
  streamError,
  TextAccumulator,
  ToolCallSalvage,
  truncatedError,
  type Block,
  type ModelStopReason,
  type SseEvent,
  type StreamDecoder,
  type StreamOutput,
  type StreamEvent,
  type Usage,
} from "../../kernel/index.js";

/** Who is decoding: blocks are stamped with `provider`, the message with `model`. */
export interface ChatDecodeContext {
  provider: string;
  model: string;
  /** Names of the offered tools: `<tool_call>` text naming one of them is recovered as a call. */
  tools?: string[];
}

interface CallSlot {
  id?: string;
  name: string;
  args: TextAccumulator;
  started: boolean;
}

/** `finish_reason` → neutral stop (WIRE-FORMATS §0.6, §2.4; LARIK-REFERENCE §10). */
function mapFinishReason(reason: string | null | undefined, hasToolCalls: boolean): ModelStopReason {
  switch (reason) {
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      // Some servers finish a tool-calling turn with "stop" (Ollama /v1, older vLLM).
      return hasToolCalls ? "tool_use" : "end_turn";
  }
}

/**
 * Chat usage → neutral {@link Usage}. `prompt_tokens` includes cached tokens, so
 * `prompt_tokens_details.cached_tokens` (DeepSeek: `prompt_cache_hit_tokens`) is moved into
 * `cache_read` and subtracted from `input`. `output` includes reasoning: OpenAI's
 * `completion_tokens` does; xAI's does not (its `total_tokens` is prompt + completion +
 * `completion_tokens_details.reasoning_tokens`, WIRE-FORMATS §0.5), and then the reasoning
 * tokens are added.
 */
function mapChatUsage(u: Record<string, any> | undefined): Usage {
  if (!u) return { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  const prompt = typeof u.prompt_tokens === "number" ? u.prompt_tokens : 0;
  const cachedRaw = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens;
  const cached = typeof cachedRaw === "number" ? Math.min(cachedRaw, prompt) : 0;
  let output = typeof u.completion_tokens === "number" ? u.completion_tokens : 0;
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  // the two conventions only agree when there was no reasoning, so the total tells them apart
  if (typeof reasoning === "number" && reasoning > 0 && u.total_tokens === prompt + output + reasoning) output += reasoning;
  return {
    input: prompt - cached,
    output,
    cache_read: cached,
    cache_write: 0,
  };
}


/**
 * Decodes one response. Text and reasoning deltas are yielded as they come (`reasoning_content`
 * or `reasoning`, whichever the server uses, or Mistral's typed content chunks; the deltas of one
 * network read merged into one event), `tool_use_start` once a call's name is known, and one
 * `done` at `data: [DONE]`.
 *
 * - Tool calls accumulate by `index` (not id or position); arguments are parsed once at the
 *   end, `raw_input` kept when they are not a JSON object. Fragments without `index` (Gemini's
 *   compatible endpoint sends none) go by id: a new id starts a call, a known one continues it,
 *   and a fragment with neither continues the call before it.
 * - Usage is read from any chunk that has it, the last one winning (OpenAI's trailing
 *   `choices: []` chunk; DeepSeek/Groq on the finish chunk; `x_groq.usage`).
 * - Thinking blocks carry no signature: Chat Completions has none to replay.
 * - Tool-call text salvage: `<tool_call>{…}</tool_call>` in the answer naming an offered tool
 *   becomes a real call (after the server's own calls), its markup hidden, with one notice.
 *
 * `events`: batches from `readSseBatches` (fastest) or single events.
 * @throws ProviderError from an in-stream `{"error": …}` chunk, an error on a choice or a
 *   `finish_reason: "error"` (OpenRouter), `truncated` when the stream ends before `[DONE]` or
 *   `[DONE]` comes without any finish_reason.
 */
export function decodeChatStream(events: AsyncIterable<SseEvent | readonly SseEvent[]>, ctx: ChatDecodeContext): AsyncGenerator<StreamEvent> {
  return runStreamDecoder(events, new ChatDecoder(ctx));
}

/** The state of one response between chunks (see {@link decodeChatStream}). */
class ChatDecoder implements StreamDecoder<SseEvent> {
  readonly #ctx: ChatDecodeContext;
  readonly #text = new TextAccumulator();
  readonly #thinking = new TextAccumulator();
  readonly #calls = new Map<number, CallSlot>();
  // the call the last fragment went to, which an index- and id-less fragment continues
  #lastCall: number | undefined;
  #finish: string | null | undefined;
  #usage: Record<string, any> | undefined;
  readonly #salvage: ToolCallSalvage;
  readonly #salvaged: { id: string; name: string; input: Record<string, unknown> }[] = [];

  constructor(ctx: ChatDecodeContext) {
    this.#ctx = ctx;
    this.#salvage = new ToolCallSalvage(ctx.tools ?? []);
  }

  feed(ev: SseEvent, out: StreamOutput): boolean {
    const raw = ev.data;
    // a JSON chunk starts with "{": only another payload pays for trim()
    if (raw.charCodeAt(0) !== 123 && raw.trim() === "[DONE]") {
      this.#done(out);
      return true;
    }
    const chunk = parseJsonEvent(this.#ctx.provider, raw) as Record<string, any>;
    if (!chunk || typeof chunk !== "object") return false;
    if (chunk.error) throw streamError(this.#ctx.provider, chunk);
    if (chunk.usage && typeof chunk.usage === "object") this.#usage = chunk.usage;
    else if (chunk.x_groq?.usage && typeof chunk.x_groq.usage === "object") this.#usage = chunk.x_groq.usage;
    const choices = chunk.choices;
    if (!Array.isArray(choices)) return false;
    for (let c = 0; c < choices.length; c++) {
      const choice = choices[c] as Record<string, any>;
      if ((choice.index ?? 0) !== 0) continue;
      const delta: Record<string, any> = choice.delta ?? {};
      const rc = delta.reasoning_content;
      const r = typeof rc === "string" && rc ? rc : delta.reasoning;
      if (typeof r === "string" && r) {
        out.delta("thinking_delta", r, this.#thinking);
      }
      if (typeof delta.content === "string") {
        if (delta.content) this.#content(delta.content, out);
      } else if (Array.isArray(delta.content)) this.#contentParts(delta.content, out);
      if (typeof delta.refusal === "string" && delta.refusal) {
        out.delta("text_delta", delta.refusal, this.#text);
      }
      if (Array.isArray(delta.tool_calls)) this.#toolCalls(delta.tool_calls, out);
      // OpenRouter ends an answer that failed upstream with finish_reason "error", the error on
      // the chunk (handled above) or on the choice; without either it is still no normal finish
      if (choice.error) throw streamError(this.#ctx.provider, { error: choice.error });
      if (choice.finish_reason === "error") {
        throw streamError(this.#ctx.provider, { error: { message: 'the server ended the answer with finish_reason "error" and gave no reason' } });
      }
      if (typeof choice.finish_reason === "string" && choice.finish_reason) this.#finish = choice.finish_reason;
    }
    return false;
  }

  end(): void {
    throw truncatedError(this.#ctx.provider, "data: [DONE]");
  }

  /** Answer text, through the salvage of `<tool_call>` markup. */
  #content(content: string, out: StreamOutput): void {
    this.#salvaged.push(...this.#salvage.feed(content, out, this.#text, this.#ctx.provider));
  }

  /**
   * Content as a list of typed chunks, as Mistral's reasoning models (Magistral) stream it:
   * `{type:"text", text}` is answer text, `{type:"thinking", thinking:[{type:"text", text}]}`
   * reasoning (docs.mistral.ai, "Reasoning"). Other chunk types (references) are skipped.
   */
  #contentParts(parts: unknown[], out: StreamOutput): void {
    for (const part of parts) {
      if (!part || typeof part !== "object") continue;
      const p = part as Record<string, any>;
      if (p.type === "text" && typeof p.text === "string") {
        if (p.text) this.#content(p.text, out);
      } else if (p.type === "thinking") {
        const pieces: unknown[] = Array.isArray(p.thinking) ? p.thinking : [p.thinking];
        for (const t of pieces) {
          const text = typeof t === "string" ? t : t && typeof t === "object" && typeof (t as any).text === "string" ? (t as any).text : "";
          if (text) out.delta("thinking_delta", text, this.#thinking);
        }
      }
    }
  }

  #toolCalls(toolCalls: unknown[], out: StreamOutput): void {
    for (let i = 0; i < toolCalls.length; i++) {
      const tc = toolCalls[i] as Record<string, any>;
      const index = typeof tc.index === "number" ? tc.index : this.#slotWithoutIndex(tc, i);
      this.#lastCall = index;
      let slot = this.#calls.get(index);
      if (!slot) {
        slot = { name: "", args: new TextAccumulator(), started: false };
        this.#calls.set(index, slot);
      }
      if (typeof tc.id === "string" && tc.id && !slot.id) slot.id = tc.id;
      const fn = (tc.function ?? {}) as Record<string, any>;
      if (typeof fn.name === "string" && fn.name && !slot.name) slot.name = fn.name;
      if (typeof fn.arguments === "string") slot.args.append(fn.arguments);
      else if (fn.arguments && typeof fn.arguments === "object") slot.args.set(JSON.stringify(fn.arguments));
      if (!slot.started && slot.name) {
        slot.started = true;
        slot.id ??= mintToolCallId();
        out.push({ type: "tool_use_start", id: slot.id, name: slot.name });
      }
    }
  }

  /**
   * Where a fragment without `index` goes: the call with its id; a new call for a new id, for a
   * fragment after the first of its chunk (calls listed side by side) and for a named fragment
   * when the last call already has a name; else the last call (a continuation of its arguments).
   */
  #slotWithoutIndex(tc: Record<string, any>, position: number): number {
    const id = typeof tc.id === "string" && tc.id ? tc.id : undefined;
    if (id !== undefined) {
      for (const [index, slot] of this.#calls) if (slot.id === id) return index;
    }
    const last = this.#lastCall !== undefined ? this.#calls.get(this.#lastCall) : undefined;
    const named = typeof tc.function?.name === "string" && tc.function.name !== "";
    if (last && id === undefined && position === 0 && !(named && last.name)) return this.#lastCall!;
    let next = 0;
    for (const index of this.#calls.keys()) next = Math.max(next, index + 1);
    return next;
  }

  /**
   * `[DONE]`: the held-back text, then the assembled message.
   * @throws ProviderError `truncated` when no choice ever had a finish_reason.
   */
  #done(out: StreamOutput): void {
    const ctx = this.#ctx;
    const held = this.#salvage.end();
    if (held) {
      out.delta("text_delta", held, this.#text);
    }
    // Every server sets finish_reason on the last choice chunk; a [DONE] without one closed an
    // answer that was cut upstream (LM Studio ends so when the prompt overflows its window). The
    // server ended it on purpose: sending the same request again (a long prompt evaluation on a
    // local machine) would most likely end the same way.
    if (this.#finish === undefined) {
      throw new ProviderError({
        provider: ctx.provider,
        kind: "truncated",
        message: "the response stream ended (data: [DONE]) without a finish_reason: the answer is incomplete (a local server may end so when the prompt does not fit its context window)",
        retryable: false,
      });
    }
    const blocks: Block[] = [];
    const thinking = this.#thinking.toString();
    const text = this.#text.toString();
    if (thinking) blocks.push({ type: "thinking", text: thinking, provider: ctx.provider });
    if (text.trim()) blocks.push({ type: "text", text });
    for (const index of [...this.#calls.keys()].sort((a, b) => a - b)) {
      const c = this.#calls.get(index)!;
      const parsed = parseToolInput(c.args.toString());
      blocks.push({
        type: "tool_use",
        id: c.id ?? mintToolCallId(),
        name: c.name,
        input: parsed.input,
        provider: ctx.provider,
        ...(parsed.raw_input !== undefined ? { raw_input: parsed.raw_input } : {}),
      });
    }
    for (const c of this.#salvaged) blocks.push({ type: "tool_use", id: c.id, name: c.name, input: c.input, provider: ctx.provider });
    out.push({
      type: "done",
      message: { role: "assistant", blocks, model: ctx.model },
      usage: mapChatUsage(this.#usage),
      stop_reason: mapFinishReason(this.#finish, this.#calls.size + this.#salvaged.length > 0),
    });
  }
}
