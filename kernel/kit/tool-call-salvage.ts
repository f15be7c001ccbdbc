/**
 * Tool calls whose JSON did not arrive as the API describes it: {@link parseToolInput} for
 * streamed arguments that are empty, encoded twice, cut short or garbled; {@link ToolCallSalvage}
 * for calls a local server left in the answer text as `<tool_call>` markup; and
 * {@link mintToolCallId} for calls that came without an id.
 *
 * Sources: LARIK-REFERENCE §2 "Tool-call text salvage"; the Hermes/Qwen `<tool_call>` chat
 * templates.
 */
import type { StreamOutput, TextAccumulator } from "./stream-decoder.js";

/**
 * Parses streamed tool-call arguments once the call is complete. Empty text means `{}` (the
 * Anthropic first delta is usually `""`). The object encoded twice, as a JSON string holding
 * it (`"{\"path\": \"a.ts\"}"`, which some models and OpenAI-compatible servers send), is
 * taken as that object. Other text that is not a JSON object is kept verbatim in `raw_input`
 * with `input: {}`, so the loop can ask the model to resend the call.
 */
export function parseToolInput(raw: string): { input: unknown; raw_input?: string } {
  if (raw.trim() === "") return { input: {} };
  try {
    let v: unknown = JSON.parse(raw);
    if (typeof v === "string" && v.trimStart().startsWith("{")) v = JSON.parse(v);
    if (v && typeof v === "object" && !Array.isArray(v)) return { input: v };
  } catch {
    // fall through: truncated or malformed arguments
  }
  return { input: {}, raw_input: raw };
}

const OPEN_TAG = "<tool_call>";
const CLOSE_TAG = "</tool_call>";

/** A tool call recovered from answer text. `input` is the parsed arguments object. */
export interface SalvagedCall {
  name: string;
  input: Record<string, unknown>;
}

let minted = 0;

/**
 * An id for a tool call whose API gave none (Gemini, Ollama, salvaged text calls):
 * `<prefix><ms since epoch, base 36>_<counter, base 36>`, unique within the process and unlikely
 * to meet a vendor's own ids. Adapters that must recognise their minted ids pass a prefix.
 */
export function mintToolCallId(prefix = "call_larik_"): string {
  return `${prefix}${Date.now().toString(36)}_${(minted++).toString(36)}`;
}

/** The notice shown once per response when a call was recovered from text (LARIK-REFERENCE §2). */
function salvageNotice(provider: string): string {
  return `${provider} sent a tool call as <tool_call> text instead of a real call; it was recovered. Fix the server's tool-call parsing (llama.cpp: --jinja; vLLM: --enable-auto-tool-choice --tool-call-parser <parser>).`;
}

/**
 * Recovers tool calls that a local server left in the answer text as
 * `<tool_call>{"name": …, "arguments": …}</tool_call>` (Hermes/Qwen templates without server-side
 * parsing; LARIK-REFERENCE §2 "Tool-call text salvage"). A call is recovered only when the markup
 * is closed, its JSON parses, and it names one of the offered tools; recovered markup is never
 * shown, even when the tags arrive split across deltas (a possible tag prefix is held back until
 * the next delta decides it). Anything else passes through as text.
 */
export class ToolCallSalvage {
  readonly #offered: ReadonlySet<string>;
  #held = "";
  #recovered = 0;

  /** `offered`: names of the tools in the request; with none, nothing is ever recovered. */
  constructor(offered: Iterable<string>) {
    this.#offered = new Set(offered);
  }

  /** Feeds one text delta; returns the text that is safe to show now and any recovered calls. */
  push(piece: string): { text: string; calls: SalvagedCall[] } {
    // Fast path: nothing held and no "<" means no tag can start or finish in this piece.
    if (this.#offered.size === 0 || (!this.#held && !piece.includes("<"))) return { text: piece, calls: [] };
    let buf = this.#held + piece;
    let text = "";
    const calls: SalvagedCall[] = [];
    for (;;) {
      const open = buf.indexOf(OPEN_TAG);
      if (open < 0) {
        const keep = partialTagSuffix(buf);
        text += buf.slice(0, buf.length - keep);
        this.#held = buf.slice(buf.length - keep);
        return { text, calls };
      }
      text += buf.slice(0, open);
      const close = buf.indexOf(CLOSE_TAG, open + OPEN_TAG.length);
      if (close < 0) {
        this.#held = buf.slice(open);
        return { text, calls };
      }
      const markup = buf.slice(open, close + CLOSE_TAG.length);
      const call = this.#parse(buf.slice(open + OPEN_TAG.length, close));
      if (call) calls.push(call);
      else text += markup;
      buf = buf.slice(close + CLOSE_TAG.length);
    }
  }

  /**
   * {@link push}, written to `out`: the safe text as a `text_delta` kept in `text`, each recovered
   * call as a `tool_use_start` under a minted id, after the notice ({@link salvageNotice}) that
   * goes before the first call recovered in this response. Returns the recovered calls with their
   * ids, for the assembled message.
   */
  feed(piece: string, out: StreamOutput, text: TextAccumulator, provider: string): (SalvagedCall & { id: string })[] {
    const r = this.push(piece);
    out.delta("text_delta", r.text, text);
    const calls = r.calls.map((c) => ({ id: mintToolCallId(), ...c }));
    for (const call of calls) {
      if (!this.#recovered++) out.push({ type: "notice", text: salvageNotice(provider) });
      out.push({ type: "tool_use_start", id: call.id, name: call.name });
    }
    return calls;
  }

  /** End of the answer: returns held text (an unclosed `<tool_call>` stays text). */
  end(): string {
    const rest = this.#held;
    this.#held = "";
    return rest;
  }

  #parse(inner: string): SalvagedCall | undefined {
    let v: unknown;
    try {
      v = JSON.parse(inner.trim());
    } catch {
      return undefined;
    }
    if (!v || typeof v !== "object") return undefined;
    const o = v as Record<string, unknown>;
    if (typeof o.name !== "string" || !this.#offered.has(o.name)) return undefined;
    let args = o.arguments ?? o.parameters ?? {};
    if (typeof args === "string") {
      try {
        args = JSON.parse(args);
      } catch {
        return undefined;
      }
    }
    if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
    return { name: o.name, input: args as Record<string, unknown> };
  }
}

/** Length of the longest suffix of `s` that is a proper prefix of `<tool_call>`. */
function partialTagSuffix(s: string): number {
  for (let n = Math.min(OPEN_TAG.length - 1, s.length); n > 0; n--) {
    if (OPEN_TAG.startsWith(s.slice(s.length - n))) return n;
  }
  return 0;
}
