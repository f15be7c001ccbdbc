/**
 * Headless renderers (LARIK-REFERENCE §22). Text: answer deltas to stdout, tool lines and
 * notices to stderr. JSON: one event object per line on stdout, deltas omitted (the
 * `assistant_message` carries the full text).
 */
import { toolErrorLine, toolInputSummary, type AgentEvent, type EventOf } from "../../kernel/index.js";

export interface Printer {
  event(ev: AgentEvent): void;
  /** A permission request headless mode denied, with the reason the model was given. */
  denied(ev: EventOf<"permission_request">, reason: string): void;
  notice(text: string): void;
  /** A slash command's output: the run's answer (stdout in text mode). */
  output(text: string): void;
  end(): void;
}

interface Out {
  write(s: string): unknown;
}

export class TextPrinter implements Printer {
  #atLineStart = true;
  #wroteText = false;
  /**
   * The `✗` line of each call headless mode denied, by tool id: printed at the call's tool_end,
   * which the kernel sends in the calls' order (after the start of an earlier call that runs),
   * while the permission_request comes before any call of the reply runs. Its start line would
   * read as if it ran.
   */
  #denied = new Map<string, string>();
  /**
   * @param summarize the compact input of a call of the tool named (≤120 chars); the run passes
   *   one that asks the registered tool ({@link toolInputSummary}), the generic summary otherwise
   */
  constructor(
    private out: Out,
    private err: Out,
    private summarize: (toolName: string, input: unknown) => string = (_name, input) => toolInputSummary(undefined, input),
  ) {}
  /** A call as its lines name it: the tool, then its summary unless that is empty (`read a.ts`). */
  #call(toolName: string, input: unknown): string {
    const what = this.summarize(toolName, input);
    return what ? `${toolName} ${what}` : toolName;
  }
  #text(s: string) {
    if (!s) return;
    this.out.write(s);
    this.#wroteText = true;
    this.#atLineStart = s.endsWith("\n");
  }
  #line(s: string) {
    // keep stderr lines from gluing onto a half-written stdout line in a shared terminal
    if (!this.#atLineStart) this.#text("\n");
    this.err.write(`${s}\n`);
  }
  event(ev: AgentEvent): void {
    const prefix = ev.agent ? `  ↳ [${ev.agent}] ` : "";
    switch (ev.type) {
      case "text_delta":
        if (!ev.agent) this.#text(ev.text);
        break;
      case "tool_start":
        // a call the kernel refused before it ran (unknown tool, malformed arguments, a rule) gets
        // only its `✗` line at the tool_end that follows: a start line would read as if it ran
        if (!this.#denied.has(ev.tool_id) && !ev.refused) this.#line(`${prefix}→ ${this.#call(ev.tool_name, ev.input)}`);
        break;
      case "tool_end": {
        const denied = this.#denied.get(ev.tool_id);
        if (denied !== undefined) {
          this.#denied.delete(ev.tool_id);
          this.#line(denied);
        } else if (ev.is_error) {
          // bash puts what stopped it last ("[timed out …]", "[interrupted …]"), after its output
          this.#line(`${prefix}✗ ${this.#call(ev.tool_name, ev.input)}: ${toolErrorLine(ev.output)}`);
        }
        break;
      }
      case "notice":
        this.#line(`${prefix}! ${ev.text}`);
        break;
      case "error":
        this.#line(`${prefix}error: ${ev.text}`);
        break;
      case "task_done":
        this.#line(`◆ background ${ev.tool_id} (${ev.agent ?? ""}) ${ev.stop_reason}`);
        break;
      case "assistant_message":
        // between rounds: end the streamed text cleanly before tool lines follow
        if (!this.#atLineStart) this.#text("\n");
        break;
      default:
        break;
    }
  }
  denied(ev: EventOf<"permission_request">, reason: string) {
    // the user reads what the model is told: which --mode, or which rule, would allow it
    const prefix = ev.agent ? `  ↳ [${ev.agent}] ` : "";
    this.#denied.set(ev.tool_id, `${prefix}✗ ${this.#call(ev.tool_name, ev.input)}: ${reason}`);
  }
  notice(text: string) {
    this.#line(`! ${text}`);
  }
  output(text: string) {
    this.#text(`${text}\n`);
  }
  end() {
    if (this.#wroteText && !this.#atLineStart) this.#text("\n");
  }
}

export class JsonPrinter implements Printer {
  constructor(private out: Out) {}
  event(ev: AgentEvent): void {
    if (ev.type === "text_delta" || ev.type === "thinking_delta") return;
    this.out.write(`${JSON.stringify(ev)}\n`);
  }
  denied(ev: EventOf<"permission_request">) {
    // the reason reaches the reader in the call's tool_end (`permission denied: …`)
    this.event(ev);
  }
  notice(text: string) {
    this.event({ type: "notice", text });
  }
  output(text: string) {
    this.event({ type: "notice", text });
  }
  end() {}
}
