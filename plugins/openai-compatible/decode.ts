/**
 * OpenAI Chat Completions SSE stream → neutral {@link StreamEvent}s (WIRE-FORMATS §2.3–§2.6;
 * openai-python `_streaming.py`, `types/chat/chat_completion_chunk.py`).
 */
import {
  parseJsonEvent,
  parseToolInput,
  salvageNotice,
  streamError,
  ToolCallSalvage,
  truncatedError,
  type Block,
  type ModelStopReason,
  type SseEvent,
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
  args: string;
  started: boolean;
}

/** `finish_reason` → neutral stop (WIRE-FORMATS §0.6, §2.4; LARIK-REFERENCE §10). */
export function mapFinishReason(reason: string | null | undefined, hasToolCalls: boolean): ModelStopReason {
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
 * `cache_read` and subtracted from `input`.
 */
export function mapChatUsage(u: Record<string, any> | undefined): Usage {
  if (!u) return { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  const prompt = typeof u.prompt_tokens === "number" ? u.prompt_tokens : 0;
  const cachedRaw = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens;
  const cached = typeof cachedRaw === "number" ? Math.min(cachedRaw, prompt) : 0;
  return {
    input: prompt - cached,
    output: typeof u.completion_tokens === "number" ? u.completion_tokens : 0,
    cache_read: cached,
    cache_write: 0,
  };
}

let minted = 0;
const mintId = () => `call_larik_${Date.now().toString(36)}_${(minted++).toString(36)}`;

/**
 * Decodes one response. Text and reasoning deltas are yielded as they come (`reasoning_content`
 * or `reasoning`, whichever the server uses), `tool_use_start` once a call's name is known, and
 * one `done` at `data: [DONE]`.
 *
 * - Tool calls accumulate by `index` (not id or position); arguments are parsed once at the
 *   end, `raw_input` kept when they are not a JSON object.
 * - Usage is read from any chunk that has it, the last one winning (OpenAI's trailing
 *   `choices: []` chunk; DeepSeek/Groq on the finish chunk; `x_groq.usage`).
 * - Thinking blocks carry no signature: Chat Completions has none to replay.
 * - Tool-call text salvage: `<tool_call>{…}</tool_call>` in the answer naming an offered tool
 *   becomes a real call (after the server's own calls), its markup hidden, with one notice.
 *
 * @throws ProviderError from an in-stream `{"error": …}` chunk, `truncated` when the stream
 *   ends before `[DONE]`.
 */
export async function* decodeChatStream(events: AsyncIterable<SseEvent>, ctx: ChatDecodeContext): AsyncGenerator<StreamEvent> {
  let text = "";
  let thinking = "";
  const calls = new Map<number, CallSlot>();
  let finish: string | null | undefined;
  let usage: Record<string, any> | undefined;
  const salvage = new ToolCallSalvage(ctx.tools ?? []);
  const salvaged: { id: string; name: string; input: Record<string, unknown> }[] = [];

  for await (const ev of events) {
    if (ev.data.trim() === "[DONE]") {
      const held = salvage.end();
      if (held) {
        text += held;
        yield { type: "text_delta", text: held };
      }
      const blocks: Block[] = [];
      if (thinking) blocks.push({ type: "thinking", text: thinking, provider: ctx.provider });
      if (text.trim()) blocks.push({ type: "text", text });
      for (const index of [...calls.keys()].sort((a, b) => a - b)) {
        const c = calls.get(index)!;
        const parsed = parseToolInput(c.args);
        blocks.push({
          type: "tool_use",
          id: c.id ?? mintId(),
          name: c.name,
          input: parsed.input,
          provider: ctx.provider,
          ...(parsed.raw_input !== undefined ? { raw_input: parsed.raw_input } : {}),
        });
      }
      for (const c of salvaged) blocks.push({ type: "tool_use", id: c.id, name: c.name, input: c.input, provider: ctx.provider });
      yield {
        type: "done",
        message: { role: "assistant", blocks, model: ctx.model },
        usage: mapChatUsage(usage),
        stop_reason: mapFinishReason(finish, calls.size + salvaged.length > 0),
      };
      return;
    }
    const chunk = parseJsonEvent(ctx.provider, ev.data) as Record<string, any>;
    if (!chunk || typeof chunk !== "object") continue;
    if (chunk.error) throw streamError(ctx.provider, chunk);
    if (chunk.usage && typeof chunk.usage === "object") usage = chunk.usage;
    else if (chunk.x_groq?.usage && typeof chunk.x_groq.usage === "object") usage = chunk.x_groq.usage;
    const choices: Record<string, any>[] = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) {
      if ((choice.index ?? 0) !== 0) continue;
      const delta: Record<string, any> = choice.delta ?? {};
      const rc = delta.reasoning_content;
      const r = typeof rc === "string" && rc ? rc : delta.reasoning;
      if (typeof r === "string" && r) {
        thinking += r;
        yield { type: "thinking_delta", text: r };
      }
      if (typeof delta.content === "string" && delta.content) {
        const r = salvage.push(delta.content);
        if (r.text) {
          text += r.text;
          yield { type: "text_delta", text: r.text };
        }
        for (const call of r.calls) {
          if (!salvaged.length) yield { type: "notice", text: salvageNotice(ctx.provider) };
          const id = mintId();
          salvaged.push({ id, ...call });
          yield { type: "tool_use_start", id, name: call.name };
        }
      }
      if (typeof delta.refusal === "string" && delta.refusal) {
        text += delta.refusal;
        yield { type: "text_delta", text: delta.refusal };
      }
      if (Array.isArray(delta.tool_calls)) {
        for (let i = 0; i < delta.tool_calls.length; i++) {
          const tc = delta.tool_calls[i] as Record<string, any>;
          const index = typeof tc.index === "number" ? tc.index : i;
          let slot = calls.get(index);
          if (!slot) {
            slot = { name: "", args: "", started: false };
            calls.set(index, slot);
          }
          if (typeof tc.id === "string" && tc.id && !slot.id) slot.id = tc.id;
          const fn = (tc.function ?? {}) as Record<string, any>;
          if (typeof fn.name === "string" && fn.name && !slot.name) slot.name = fn.name;
          if (typeof fn.arguments === "string") slot.args += fn.arguments;
          else if (fn.arguments && typeof fn.arguments === "object") slot.args = JSON.stringify(fn.arguments);
          if (!slot.started && slot.name) {
            slot.started = true;
            slot.id ??= mintId();
            yield { type: "tool_use_start", id: slot.id, name: slot.name };
          }
        }
      }
      if (typeof choice.finish_reason === "string" && choice.finish_reason) finish = choice.finish_reason;
    }
  }
  throw truncatedError(ctx.provider, "data: [DONE]");
}
