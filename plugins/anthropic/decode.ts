/**
 * Anthropic Messages SSE stream → neutral {@link StreamEvent}s (WIRE-FORMATS §1.5–§1.7;
 * platform.claude.com/docs/build-with-claude/streaming).
 */
import {
  parseJsonEvent,
  parseToolInput,
  runStreamDecoder,
  streamError,
  truncatedError,
  type Block,
  type ModelStopReason,
  type SseEvent,
  type StreamDecoder,
  type StreamOutput,
  type StreamEvent,
  TextAccumulator,
  type Usage,
} from "../../kernel/index.js";

/** Who is decoding: blocks are stamped with `provider`, the message with `model`. */
export interface DecodeContext {
  provider: string;
  /** The requested model id (replay compares against it, not the dated id the API echoes). */
  model: string;
}

type Slot =
  | { kind: "text"; text: TextAccumulator }
  | { kind: "thinking"; text: TextAccumulator; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "tool"; id: string; name: string; json: TextAccumulator }
  | { kind: "server"; raw: Record<string, unknown>; json: TextAccumulator; streamed: boolean };

/** Anthropic `stop_reason` → neutral stop (WIRE-FORMATS §0.6). */
export function mapStopReason(reason: string | null | undefined, hasToolUse: boolean): ModelStopReason {
  switch (reason) {
    case "tool_use":
      return "tool_use";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "max_tokens";
    case "refusal":
      return "refusal";
    case "pause_turn":
      return "pause_turn";
    case "end_turn":
    case "stop_sequence":
      return "end_turn";
    default:
      return hasToolUse ? "tool_use" : "end_turn";
  }
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/**
 * Decodes one response. Text and thinking deltas are yielded as they come (the deltas of one
 * network read merged into one event), `tool_use_start` at each client tool block's start, and
 * one `done` at `message_stop` with the assembled message.
 *
 * - Tool input: `input_json_delta` fragments are joined and parsed once at the block's end;
 *   empty means `{}`; invalid (e.g. cut by max_tokens) keeps `raw_input`.
 * - `server_tool_use` and server result blocks are kept as opaque blocks (replayed to this
 *   model, e.g. after `pause_turn`), never as client calls.
 * - Usage: `message_delta` counts are cumulative and override `message_start` field by field;
 *   `input` excludes cache tokens as Anthropic's `input_tokens` already does.
 * - `ping` and unknown events are ignored.
 *
 * `events`: batches from `readSseBatches` (fastest) or single events.
 * @throws ProviderError from an in-stream `error` event (overloaded_error → `overloaded`, …),
 *   `truncated` when the stream ends before `message_stop`.
 */
export function decodeAnthropicStream(events: AsyncIterable<SseEvent | readonly SseEvent[]>, ctx: DecodeContext): AsyncGenerator<StreamEvent> {
  return runStreamDecoder(events, new AnthropicDecoder(ctx));
}

/** The state of one response between events (see {@link decodeAnthropicStream}). */
class AnthropicDecoder implements StreamDecoder<SseEvent> {
  readonly #ctx: DecodeContext;
  readonly #slots = new Map<number, Slot>();
  readonly #usage: Record<string, number> = {};
  #stopReason: string | null | undefined;

  constructor(ctx: DecodeContext) {
    this.#ctx = ctx;
  }

  #mergeUsage(u: unknown): void {
    if (!u || typeof u !== "object") return;
    for (const [k, v] of Object.entries(u as Record<string, unknown>)) {
      const n = num(v);
      if (n !== undefined) this.#usage[k] = n;
    }
  }

  feed(ev: SseEvent, out: StreamOutput): boolean {
    const data = parseJsonEvent(this.#ctx.provider, ev.data) as Record<string, any>;
    const type = typeof data?.type === "string" ? data.type : ev.event;
    switch (type) {
      // nearly every event is a delta: it is tested first
      case "content_block_delta": {
        const slot = this.#slots.get(Number(data.index));
        if (!slot) break;
        const d = (data.delta ?? {}) as Record<string, any>;
        if (d.type === "text_delta" && slot.kind === "text") {
          if (typeof d.text === "string") out.delta("text_delta", d.text, slot.text);
        } else if (d.type === "thinking_delta" && slot.kind === "thinking") {
          if (typeof d.thinking === "string") out.delta("thinking_delta", d.thinking, slot.text);
        } else if (d.type === "signature_delta" && slot.kind === "thinking") {
          slot.signature += d.signature ?? "";
        } else if (d.type === "input_json_delta") {
          const part = typeof d.partial_json === "string" ? d.partial_json : "";
          if (slot.kind === "tool") slot.json.append(part);
          else if (slot.kind === "server") {
            slot.json.append(part);
            slot.streamed = true;
          }
        }
        break;
      }
      case "message_start":
        this.#mergeUsage(data.message?.usage);
        break;
      case "content_block_start": {
        const cb = (data.content_block ?? {}) as Record<string, any>;
        const index = Number(data.index);
        if (cb.type === "text") {
          const text = typeof cb.text === "string" ? cb.text : "";
          this.#slots.set(index, { kind: "text", text: new TextAccumulator(text) });
          out.delta("text_delta", text);
        } else if (cb.type === "thinking") {
          const thinking = typeof cb.thinking === "string" ? cb.thinking : "";
          this.#slots.set(index, { kind: "thinking", text: new TextAccumulator(thinking), signature: cb.signature ?? "" });
          out.delta("thinking_delta", thinking);
        } else if (cb.type === "redacted_thinking") {
          this.#slots.set(index, { kind: "redacted", data: String(cb.data ?? "") });
        } else if (cb.type === "tool_use") {
          this.#slots.set(index, { kind: "tool", id: String(cb.id), name: String(cb.name), json: new TextAccumulator() });
          out.push({ type: "tool_use_start", id: String(cb.id), name: String(cb.name) });
        } else {
          this.#slots.set(index, { kind: "server", raw: { ...cb }, json: new TextAccumulator(), streamed: false });
        }
        break;
      }
      case "content_block_stop": {
        const slot = this.#slots.get(Number(data.index));
        if (slot?.kind === "server" && slot.streamed) {
          const parsed = parseToolInput(slot.json.toString());
          slot.raw.input = parsed.raw_input === undefined ? parsed.input : slot.raw.input;
        }
        break;
      }
      case "message_delta":
        if (data.delta && "stop_reason" in data.delta) this.#stopReason = data.delta.stop_reason;
        this.#mergeUsage(data.usage);
        break;
      case "message_stop": {
        const blocks = assemble(this.#slots, this.#ctx.provider);
        const hasToolUse = blocks.some((b) => b.type === "tool_use");
        const usage = this.#usage;
        const u: Usage = {
          input: usage.input_tokens ?? 0,
          output: usage.output_tokens ?? 0,
          cache_read: usage.cache_read_input_tokens ?? 0,
          cache_write: usage.cache_creation_input_tokens ?? 0,
        };
        out.push({
          type: "done",
          message: { role: "assistant", blocks, model: this.#ctx.model },
          usage: u,
          stop_reason: mapStopReason(this.#stopReason, hasToolUse),
        });
        return true;
      }
      case "error":
        throw streamError(this.#ctx.provider, data);
      default:
        // ping and event types added after this was written
        break;
    }
    return false;
  }

  end(): void {
    throw truncatedError(this.#ctx.provider, "message_stop");
  }
}

function assemble(slots: Map<number, Slot>, provider: string): Block[] {
  const blocks: Block[] = [];
  for (const index of [...slots.keys()].sort((a, b) => a - b)) {
    const s = slots.get(index)!;
    switch (s.kind) {
      case "text": {
        const text = s.text.toString();
        if (text) blocks.push({ type: "text", text });
        break;
      }
      case "thinking":
        blocks.push({ type: "thinking", text: s.text.toString(), ...(s.signature ? { signature: s.signature } : {}), provider });
        break;
      case "redacted":
        blocks.push({ type: "thinking", text: "", redacted: true, signature: s.data, provider });
        break;
      case "tool": {
        const parsed = parseToolInput(s.json.toString());
        blocks.push({ type: "tool_use", id: s.id, name: s.name, input: parsed.input, provider, ...(parsed.raw_input !== undefined ? { raw_input: parsed.raw_input } : {}) });
        break;
      }
      case "server":
        blocks.push({ type: "opaque", provider, raw: s.raw });
        break;
    }
  }
  return blocks;
}
