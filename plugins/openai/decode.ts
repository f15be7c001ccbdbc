/**
 * OpenAI Responses SSE stream → neutral {@link StreamEvent}s (WIRE-FORMATS §3.2–§3.4;
 * openai-python `types/responses/response_stream_event.py`, `response_error_event.py`).
 */
import {
  classifyHttpError,
  mintToolCallId,
  parseJsonEvent,
  parseToolInput,
  runStreamDecoder,
  TextAccumulator,
  truncatedError,
  type Block,
  type ModelStopReason,
  ProviderError,
  type SseEvent,
  type StreamDecoder,
  type StreamOutput,
  type StreamEvent,
  type Usage,
} from "../../kernel/index.js";

/** Who is decoding: blocks are stamped with `provider`, the message with `model`. */
export interface ResponsesDecodeContext {
  provider: string;
  /** The requested model id (replay compares against it, not the dated id the API echoes). */
  model: string;
}

type Raw = Record<string, any>;
type Slot =
  | { kind: "reasoning"; summary: TextAccumulator[]; text: TextAccumulator; item: Raw }
  | { kind: "message"; text: TextAccumulator; refusal: string; item: Raw }
  | { kind: "call"; callId: string; name: string; args: TextAccumulator; started: boolean; item: Raw }
  | { kind: "other"; item: Raw };

/** The HTTP status an error `code`/`type` of the Responses API stands for (§2.6, §3.4). */
const CODE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  context_length_exceeded: 400,
  invalid_prompt: 400,
  authentication_error: 401,
  invalid_api_key: 401,
  permission_error: 403,
  not_found_error: 404,
  model_not_found: 404,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  server_error: 500,
  server_is_overloaded: 503,
};

/**
 * An error reported inside the stream (an `error` event, nested `{error:{…}}` as recorded or flat
 * `{code, message, param}` as the SDK types say, or `response.failed`'s `response.error`) as a
 * classified {@link ProviderError}: `insufficient_quota` → `quota` (never retried),
 * `context_length_exceeded` → `context_overflow`, `rate_limit_exceeded` → `rate_limit`, else
 * `server`.
 */
function responsesStreamError(provider: string, payload: Raw | undefined): ProviderError {
  const src: Raw = payload?.error && typeof payload.error === "object" ? payload.error : (payload ?? {});
  const code = typeof src.code === "string" ? src.code : undefined;
  const type = typeof src.type === "string" && src.type !== "error" ? src.type : undefined;
  const message = typeof src.message === "string" && src.message ? src.message : `the response failed${code ? ` (${code})` : ""}`;
  const status = (code && CODE_STATUS[code]) || (type && CODE_STATUS[type]) || 500;
  const bodyText = JSON.stringify({ error: { message, type: type ?? code, code, param: src.param ?? null } });
  return classifyHttpError({ provider, status, bodyText });
}

/**
 * Responses usage → neutral {@link Usage}: `input_tokens` includes cached tokens, so
 * `input_tokens_details.cached_tokens` is moved into `cache_read`; `output_tokens` includes
 * reasoning. No cache writes are reported.
 */
function mapResponsesUsage(u: Raw | null | undefined): Usage {
  if (!u) return { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  const input = typeof u.input_tokens === "number" ? u.input_tokens : 0;
  const cachedRaw = u.input_tokens_details?.cached_tokens;
  const cached = typeof cachedRaw === "number" ? Math.min(cachedRaw, input) : 0;
  return { input: input - cached, output: typeof u.output_tokens === "number" ? u.output_tokens : 0, cache_read: cached, cache_write: 0 };
}

/** Final status → neutral stop (WIRE-FORMATS §0.6, §3.3). */
function mapResponsesStop(status: string, incompleteReason: string | undefined, hasCalls: boolean, refusalOnly: boolean): ModelStopReason {
  if (status === "incomplete") return incompleteReason === "content_filter" ? "refusal" : "max_tokens";
  if (hasCalls) return "tool_use";
  return refusalOnly ? "refusal" : "end_turn";
}


function slotFor(item: Raw): Slot {
  switch (item.type) {
    case "reasoning":
      return { kind: "reasoning", summary: [], text: new TextAccumulator(), item };
    case "message":
      return { kind: "message", text: new TextAccumulator(), refusal: "", item };
    case "function_call":
      return {
        kind: "call",
        callId: typeof item.call_id === "string" && item.call_id ? item.call_id : mintToolCallId(),
        name: String(item.name ?? ""),
        args: new TextAccumulator(typeof item.arguments === "string" ? item.arguments : ""),
        started: false,
        item,
      };
    default:
      return { kind: "other", item };
  }
}

/** Text of a finished message item, for items that came without deltas. */
function messageText(item: Raw): { text: string; refusal: string } {
  let text = "";
  let refusal = "";
  for (const c of Array.isArray(item.content) ? item.content : []) {
    if (c?.type === "output_text" && typeof c.text === "string") text += c.text;
    else if (c?.type === "refusal" && typeof c.refusal === "string") refusal += c.refusal;
  }
  return { text, refusal };
}

/** The delta of a `*.delta` event, "" when absent. */
const deltaOf = (data: Raw): string => (typeof data.delta === "string" ? data.delta : "");

/**
 * Decodes one response. Text (`response.output_text.delta`, refusals too) and reasoning summaries
 * (`response.reasoning_summary_text.delta`, raw `reasoning_text` where a model exposes it) are
 * yielded as they come (the deltas of one network read merged into one event), `tool_use_start`
 * when a `function_call` item is added, and one `done` at `response.completed` or
 * `response.incomplete`.
 *
 * - Output items are kept by `output_index`; the item from `response.output_item.done` (or the
 *   final `response.output`) wins, so the reasoning item keeps its complete `encrypted_content`.
 * - A reasoning item becomes a thinking block (its summary, display) followed by an opaque block
 *   holding the item verbatim for replay.
 * - Function calls are keyed by `call_id`, arguments parsed once at the end (`raw_input` kept
 *   when they are not a JSON object).
 * - Hosted-tool items and unknown event types are ignored.
 *
 * `events`: batches from `readSseBatches` (fastest) or single events.
 * @throws ProviderError from an `error` event or `response.failed` (see
 *   {@link responsesStreamError}); `bad_request` when a Chat Completions server answers;
 *   `truncated` when the stream ends without a terminal event.
 */
export function decodeResponsesStream(events: AsyncIterable<SseEvent | readonly SseEvent[]>, ctx: ResponsesDecodeContext): AsyncGenerator<StreamEvent> {
  return runStreamDecoder(events, new ResponsesDecoder(ctx));
}

/** The state of one response between events (see {@link decodeResponsesStream}). */
class ResponsesDecoder implements StreamDecoder<SseEvent> {
  readonly #ctx: ResponsesDecodeContext;
  readonly #slots = new Map<number, Slot>();

  constructor(ctx: ResponsesDecodeContext) {
    this.#ctx = ctx;
  }

  feed(ev: SseEvent, out: StreamOutput): boolean {
    const ctx = this.#ctx;
    const slots = this.#slots;
    const data = ev.data === "[DONE]" ? undefined : (parseJsonEvent(ctx.provider, ev.data) as Raw);
    // A Chat Completions server (llama.cpp, vLLM, a proxy) behind OPENAI_BASE_URL answers the
    // Responses request in its own format: say which provider to use instead of a JSON error.
    if (data === undefined || data?.object === "chat.completion.chunk") {
      throw new ProviderError({
        provider: ctx.provider,
        kind: "bad_request",
        message: `the server answered in the Chat Completions format, but the ${ctx.provider} provider speaks the OpenAI Responses API (POST …/responses): for a Chat Completions server use --model openai-compatible/<model>`,
      });
    }
    const type = typeof data?.type === "string" ? data.type : ev.event;
    switch (type) {
      case "response.output_text.delta": {
        const d = deltaOf(data);
        if (!d) break;
        let s = slots.get(Number(data.output_index));
        if (s?.kind !== "message") {
          s = { kind: "message", text: new TextAccumulator(), refusal: "", item: { type: "message" } };
          slots.set(Number(data.output_index), s);
        }
        out.delta("text_delta", d, s.text);
        break;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta": {
        const d = deltaOf(data);
        const s = slots.get(Number(data.output_index));
        if (!d || s?.kind !== "reasoning") break;
        if (type === "response.reasoning_text.delta") out.delta("thinking_delta", d, s.text);
        else {
          const i = Number(data.summary_index ?? 0);
          let part = s.summary[i];
          if (part === undefined) {
            if (s.summary.some((x) => x !== undefined && x.toString())) out.delta("thinking_delta", "\n\n");
            part = s.summary[i] = new TextAccumulator();
          }
          out.delta("thinking_delta", d, part);
        }
        break;
      }
      case "response.refusal.delta": {
        const d = deltaOf(data);
        const s = slots.get(Number(data.output_index));
        if (!d || s?.kind !== "message") break;
        s.refusal += d;
        out.delta("text_delta", d);
        break;
      }
      case "response.function_call_arguments.delta": {
        const s = slots.get(Number(data.output_index));
        if (s?.kind === "call" && typeof data.delta === "string") s.args.append(data.delta);
        break;
      }
      case "response.function_call_arguments.done": {
        const s = slots.get(Number(data.output_index));
        if (s?.kind === "call" && typeof data.arguments === "string") s.args.set(data.arguments);
        break;
      }
      case "response.output_item.added":
      case "response.output_item.done": {
        const item = data.item as Raw | undefined;
        if (!item || typeof item !== "object") break;
        const index = Number(data.output_index);
        let s = slots.get(index);
        if (!s || s.kind !== slotFor(item).kind) {
          s = slotFor(item);
          slots.set(index, s);
        }
        s.item = item;
        if (s.kind === "call") {
          if (typeof item.name === "string" && item.name) s.name = item.name;
          if (type === "response.output_item.done" && typeof item.arguments === "string") s.args.set(item.arguments);
          if (!s.started && s.name) {
            s.started = true;
            out.push({ type: "tool_use_start", id: s.callId, name: s.name });
          }
        } else if (s.kind === "message" && type === "response.output_item.done" && !s.text.toString() && !s.refusal) {
          const t = messageText(item);
          s.text.set(t.text);
          s.refusal = t.refusal;
          out.delta("text_delta", t.text + t.refusal);
        }
        break;
      }
      case "response.completed":
      case "response.incomplete": {
        const resp = (data.response ?? {}) as Raw;
        const output: Raw[] = Array.isArray(resp.output) ? resp.output : [];
        output.forEach((item, index) => {
          const s = slots.get(index);
          if (!s) slots.set(index, fill(slotFor(item), item));
          else if (s.kind !== "other" && item?.type === s.item.type && !("encrypted_content" in s.item) && "encrypted_content" in item) s.item = item;
        });
        for (const s of slots.values()) {
          if (s.kind === "call" && !s.started) {
            s.started = true;
            out.push({ type: "tool_use_start", id: s.callId, name: s.name });
          }
        }
        const blocks = assemble(slots, ctx.provider);
        const hasCalls = blocks.some((b) => b.type === "tool_use");
        const messages = [...slots.values()].filter((s) => s.kind === "message");
        const refusalOnly = messages.some((s) => s.refusal) && !messages.some((s) => s.text.toString());
        out.push({
          type: "done",
          message: { role: "assistant", blocks, model: ctx.model },
          usage: mapResponsesUsage(resp.usage),
          stop_reason: mapResponsesStop(String(resp.status ?? (type === "response.incomplete" ? "incomplete" : "completed")), resp.incomplete_details?.reason, hasCalls, refusalOnly),
        });
        return true;
      }
      case "response.failed":
        throw responsesStreamError(ctx.provider, data.response?.error ?? undefined);
      case "error":
        throw responsesStreamError(ctx.provider, data);
      default:
        // response.created / in_progress / queued, part and annotation events, hosted tools,
        // and event types added after this was written
        break;
    }
    return false;
  }

  end(): void {
    throw truncatedError(this.#ctx.provider, "response.completed");
  }
}

/** Completes a slot built from a final output item that had no streamed events. */
function fill(s: Slot, item: Raw): Slot {
  if (s.kind === "message") {
    const t = messageText(item);
    s.text.set(t.text);
    s.refusal = t.refusal;
  } else if (s.kind === "reasoning") {
    for (const p of Array.isArray(item.summary) ? item.summary : []) if (typeof p?.text === "string") s.summary.push(new TextAccumulator(p.text));
  }
  return s;
}

function assemble(slots: Map<number, Slot>, provider: string): Block[] {
  const blocks: Block[] = [];
  for (const index of [...slots.keys()].sort((a, b) => a - b)) {
    const s = slots.get(index)!;
    switch (s.kind) {
      case "reasoning": {
        // a sparse summary (an index that never came) has holes: map() skips them
        let summary = s.summary
          .map((x) => x.toString())
          .filter((x) => x)
          .join("\n\n");
        if (!summary && Array.isArray(s.item.summary)) summary = s.item.summary.map((p: Raw) => (typeof p?.text === "string" ? p.text : "")).filter((x: string) => x).join("\n\n");
        const text = [s.text.toString(), summary].filter((x) => x).join("\n\n");
        if (text) blocks.push({ type: "thinking", text, provider });
        blocks.push({ type: "opaque", provider, raw: s.item });
        break;
      }
      case "message": {
        const text = s.text.toString();
        if (text || s.refusal) blocks.push({ type: "text", text: text + s.refusal });
        break;
      }
      case "call": {
        const parsed = parseToolInput(s.args.toString());
        blocks.push({ type: "tool_use", id: s.callId, name: s.name, input: parsed.input, provider, ...(parsed.raw_input !== undefined ? { raw_input: parsed.raw_input } : {}) });
        break;
      }
      default:
        break;
    }
  }
  return blocks;
}
