/**
 * Ollama `/api/chat` NDJSON lines → neutral {@link StreamEvent}s (WIRE-FORMATS §5.3–§5.7;
 * ollama/ollama `api/types.go` ChatResponse, `server/routes.go` streamResponse).
 */
import {
  runStreamDecoder,
  mintToolCallId,
  streamError,
  TextAccumulator,
  ToolCallSalvage,
  truncatedError,
  type Block,
  type ModelStopReason,
  type StreamDecoder,
  type StreamOutput,
  type StreamEvent,
  type Usage,
} from "../../kernel/index.js";

/** Who is decoding, and what was asked for. */
export interface OllamaDecodeContext {
  provider: string;
  model: string;
  /** Names of the offered tools: `<tool_call>` text naming one of them is recovered as a call. */
  tools?: string[];
  /** The `num_ctx` sent (tokens): a request that fills it gets a notice. */
  numCtx?: number;
}

type Raw = Record<string, any>;

/** `done_reason` → neutral stop (§5.4): `stop` with tool calls is `tool_use`. */
function mapDoneReason(reason: unknown, hasCalls: boolean): ModelStopReason {
  if (reason === "length") return "max_tokens";
  return hasCalls ? "tool_use" : "end_turn";
}


/**
 * Decodes one response (a stream of lines, or the single object of a `stream: false` answer).
 * Thinking (`message.thinking`) and text deltas are yielded as they come (the deltas of one
 * network read merged into one event), `tool_use_start` per tool call (calls arrive whole,
 * possibly over several lines: appended, never overwritten), and one `done` at the
 * `"done": true` line.
 *
 * - Tool arguments are objects (a string is parsed); ids are the server's or minted.
 * - Usage: input `prompt_eval_count`, output `eval_count` (either may be absent); no cache.
 * - Tool-call text salvage: `<tool_call>{…}</tool_call>` in the answer naming an offered tool
 *   becomes a real call, its markup hidden, with one notice.
 * - A request whose prompt and answer filled `num_ctx` gets a notice.
 *
 * `lines`: the parsed lines in batches, as `readNdjsonBatches` yields them (a line may itself be
 * an array, so single values are not accepted).
 * @throws ProviderError from an `{"error": …}` line (errors after output started come this way
 *   on an HTTP 200); `truncated` when the stream ends before the `done` line.
 */
export function decodeOllamaStream(lines: AsyncIterable<readonly unknown[]>, ctx: OllamaDecodeContext): AsyncGenerator<StreamEvent> {
  return runStreamDecoder<unknown>(lines, new OllamaDecoder(ctx));
}

/** The state of one response between lines (see {@link decodeOllamaStream}). */
class OllamaDecoder implements StreamDecoder<unknown> {
  readonly #ctx: OllamaDecodeContext;
  readonly #text = new TextAccumulator();
  readonly #thinking = new TextAccumulator();
  readonly #calls: { id: string; name: string; input: Record<string, unknown>; raw_input?: string }[] = [];
  readonly #salvage: ToolCallSalvage;

  constructor(ctx: OllamaDecodeContext) {
    this.#ctx = ctx;
    this.#salvage = new ToolCallSalvage(ctx.tools ?? []);
  }

  feed(value: unknown, out: StreamOutput): boolean {
    if (!value || typeof value !== "object") return false;
    const ctx = this.#ctx;
    const line = value as Raw;
    if (line.error !== undefined) throw streamError(ctx.provider, line);
    const msg = line.message;
    if (msg && typeof msg === "object") {
      if (typeof msg.thinking === "string" && msg.thinking) {
        out.delta("thinking_delta", msg.thinking, this.#thinking);
      }
      if (typeof msg.content === "string" && msg.content) this.#content(msg.content, out);
      if (Array.isArray(msg.tool_calls)) this.#toolCalls(msg.tool_calls, out);
    }
    if (line.done !== true) return false;
    const held = this.#salvage.end();
    if (held) {
      out.delta("text_delta", held, this.#text);
    }
    const blocks: Block[] = [];
    const thinking = this.#thinking.toString();
    const text = this.#text.toString();
    if (thinking) blocks.push({ type: "thinking", text: thinking, provider: ctx.provider });
    if (text) blocks.push({ type: "text", text });
    for (const c of this.#calls) blocks.push({ type: "tool_use", provider: ctx.provider, ...c });
    const usage: Usage = {
      input: typeof line.prompt_eval_count === "number" ? line.prompt_eval_count : 0,
      output: typeof line.eval_count === "number" ? line.eval_count : 0,
      cache_read: 0,
      cache_write: 0,
    };
    if (ctx.numCtx && usage.input + usage.output >= ctx.numCtx) {
      out.push({
        type: "notice",
        text: `${ctx.provider}: this request filled the model's context window (num_ctx ${ctx.numCtx} tokens); raise providers.${ctx.provider}.context_length or compact`,
      });
    }
    out.push({ type: "done", message: { role: "assistant", blocks, model: ctx.model }, usage, stop_reason: mapDoneReason(line.done_reason, this.#calls.length > 0) });
    return true;
  }

  end(): void {
    throw truncatedError(this.#ctx.provider, 'the "done": true line');
  }

  /** Answer text, through the salvage of `<tool_call>` markup. */
  #content(content: string, out: StreamOutput): void {
    this.#calls.push(...this.#salvage.feed(content, out, this.#text, this.#ctx.provider));
  }

  #toolCalls(toolCalls: Raw[], out: StreamOutput): void {
    for (const tc of toolCalls) {
      const fn: Raw = tc?.function ?? {};
      const name = typeof fn.name === "string" ? fn.name : "";
      if (!name) continue;
      const id = typeof tc.id === "string" && tc.id ? tc.id : mintToolCallId();
      let input: Record<string, unknown> = {};
      let raw_input: string | undefined;
      if (fn.arguments && typeof fn.arguments === "object" && !Array.isArray(fn.arguments)) input = fn.arguments;
      else if (typeof fn.arguments === "string" && fn.arguments.trim()) {
        try {
          const v: unknown = JSON.parse(fn.arguments);
          if (v && typeof v === "object" && !Array.isArray(v)) input = v as Record<string, unknown>;
          else raw_input = fn.arguments;
        } catch {
          raw_input = fn.arguments;
        }
      }
      this.#calls.push({ id, name, input, ...(raw_input !== undefined ? { raw_input } : {}) });
      out.push({ type: "tool_use_start", id, name });
    }
  }
}
