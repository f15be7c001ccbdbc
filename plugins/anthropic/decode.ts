/**
 * Anthropic Messages SSE stream → neutral {@link StreamEvent}s (WIRE-FORMATS §1.5–§1.7;
 * platform.claude.com/docs/build-with-claude/streaming).
 */
import {
  parseJsonEvent,
  parseToolInput,
  streamError,
  truncatedError,
  type Block,
  type ModelStopReason,
  type SseEvent,
  type StreamEvent,
  type Usage,
} from "../../kernel/index.js";

/** Who is decoding: blocks are stamped with `provider`, the message with `model`. */
export interface DecodeContext {
  provider: string;
  /** The requested model id (replay compares against it, not the dated id the API echoes). */
  model: string;
}

type Slot =
  | { kind: "text"; text: string }
  | { kind: "thinking"; text: string; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "tool"; id: string; name: string; json: string }
  | { kind: "server"; raw: Record<string, unknown>; json: string; streamed: boolean };

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
 * Decodes one response. Text and thinking deltas are yielded as they come, `tool_use_start` at
 * each client tool block's start, and one `done` at `message_stop` with the assembled message.
 *
 * - Tool input: `input_json_delta` fragments are joined and parsed once at the block's end;
 *   empty means `{}`; invalid (e.g. cut by max_tokens) keeps `raw_input`.
 * - `server_tool_use` and server result blocks are kept as opaque blocks (replayed to this
 *   model, e.g. after `pause_turn`), never as client calls.
 * - Usage: `message_delta` counts are cumulative and override `message_start` field by field;
 *   `input` excludes cache tokens as Anthropic's `input_tokens` already does.
 * - `ping` and unknown events are ignored.
 *
 * @throws ProviderError from an in-stream `error` event (overloaded_error → `overloaded`, …),
 *   `truncated` when the stream ends before `message_stop`.
 */
export async function* decodeAnthropicStream(events: AsyncIterable<SseEvent>, ctx: DecodeContext): AsyncGenerator<StreamEvent> {
  const slots = new Map<number, Slot>();
  const usage: Record<string, number> = {};
  let stopReason: string | null | undefined;
  const mergeUsage = (u: unknown) => {
    if (!u || typeof u !== "object") return;
    for (const [k, v] of Object.entries(u as Record<string, unknown>)) {
      const n = num(v);
      if (n !== undefined) usage[k] = n;
    }
  };

  for await (const ev of events) {
    const data = parseJsonEvent(ctx.provider, ev.data) as Record<string, any>;
    const type = typeof data?.type === "string" ? data.type : ev.event;
    switch (type) {
      case "message_start":
        mergeUsage(data.message?.usage);
        break;
      case "content_block_start": {
        const cb = (data.content_block ?? {}) as Record<string, any>;
        const index = Number(data.index);
        if (cb.type === "text") {
          slots.set(index, { kind: "text", text: typeof cb.text === "string" ? cb.text : "" });
          if (cb.text) yield { type: "text_delta", text: cb.text };
        } else if (cb.type === "thinking") {
          slots.set(index, { kind: "thinking", text: cb.thinking ?? "", signature: cb.signature ?? "" });
          if (cb.thinking) yield { type: "thinking_delta", text: cb.thinking };
        } else if (cb.type === "redacted_thinking") {
          slots.set(index, { kind: "redacted", data: String(cb.data ?? "") });
        } else if (cb.type === "tool_use") {
          slots.set(index, { kind: "tool", id: String(cb.id), name: String(cb.name), json: "" });
          yield { type: "tool_use_start", id: String(cb.id), name: String(cb.name) };
        } else {
          slots.set(index, { kind: "server", raw: { ...cb }, json: "", streamed: false });
        }
        break;
      }
      case "content_block_delta": {
        const slot = slots.get(Number(data.index));
        const d = (data.delta ?? {}) as Record<string, any>;
        if (!slot) break;
        if (d.type === "text_delta" && slot.kind === "text") {
          slot.text += d.text ?? "";
          if (d.text) yield { type: "text_delta", text: d.text };
        } else if (d.type === "thinking_delta" && slot.kind === "thinking") {
          slot.text += d.thinking ?? "";
          if (d.thinking) yield { type: "thinking_delta", text: d.thinking };
        } else if (d.type === "signature_delta" && slot.kind === "thinking") {
          slot.signature += d.signature ?? "";
        } else if (d.type === "input_json_delta") {
          if (slot.kind === "tool") slot.json += d.partial_json ?? "";
          else if (slot.kind === "server") {
            slot.json += d.partial_json ?? "";
            slot.streamed = true;
          }
        }
        break;
      }
      case "content_block_stop": {
        const slot = slots.get(Number(data.index));
        if (slot?.kind === "server" && slot.streamed) {
          const parsed = parseToolInput(slot.json);
          slot.raw.input = parsed.raw_input === undefined ? parsed.input : slot.raw.input;
        }
        break;
      }
      case "message_delta":
        if (data.delta && "stop_reason" in data.delta) stopReason = data.delta.stop_reason;
        mergeUsage(data.usage);
        break;
      case "message_stop": {
        const blocks = assemble(slots, ctx.provider);
        const hasToolUse = blocks.some((b) => b.type === "tool_use");
        const u: Usage = {
          input: usage.input_tokens ?? 0,
          output: usage.output_tokens ?? 0,
          cache_read: usage.cache_read_input_tokens ?? 0,
          cache_write: usage.cache_creation_input_tokens ?? 0,
        };
        yield {
          type: "done",
          message: { role: "assistant", blocks, model: ctx.model },
          usage: u,
          stop_reason: mapStopReason(stopReason, hasToolUse),
        };
        return;
      }
      case "error":
        throw streamError(ctx.provider, data);
      default:
        // ping and event types added after this was written
        break;
    }
  }
  throw truncatedError(ctx.provider, "message_stop");
}

function assemble(slots: Map<number, Slot>, provider: string): Block[] {
  const blocks: Block[] = [];
  for (const index of [...slots.keys()].sort((a, b) => a - b)) {
    const s = slots.get(index)!;
    switch (s.kind) {
      case "text":
        if (s.text) blocks.push({ type: "text", text: s.text });
        break;
      case "thinking":
        blocks.push({ type: "thinking", text: s.text, ...(s.signature ? { signature: s.signature } : {}), provider });
        break;
      case "redacted":
        blocks.push({ type: "thinking", text: "", redacted: true, signature: s.data, provider });
        break;
      case "tool": {
        const parsed = parseToolInput(s.json);
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
