/**
 * A scripted provider for loop tests: replays canned assistant turns and records every request
 * exactly as the loop built it, so tests can assert on what was sent.
 */
import type { Block, Message, ModelRequest, ModelStopReason, Provider, StreamEvent, Usage } from "../../kernel/index.js";

/** One scripted reply: blocks (text is streamed as deltas), or a function of the request. */
export type Script =
  | { blocks: Block[]; stop?: ModelStopReason; usage?: Partial<Usage>; delayMs?: number }
  | { error: Error }
  | ((req: ModelRequest) => Promise<{ blocks: Block[]; stop?: ModelStopReason; usage?: Partial<Usage> }>);

export class ScriptedProvider implements Provider {
  readonly name: string;
  readonly requests: ModelRequest[] = [];
  #scripts: Script[];
  constructor(scripts: Script[], name = "scripted") {
    this.#scripts = [...scripts];
    this.name = name;
  }
  /** Adds more replies at the end. */
  push(...s: Script[]): void {
    this.#scripts.push(...s);
  }
  async *stream(req: ModelRequest): AsyncIterable<StreamEvent> {
    // deep copy so later mutation by the loop cannot change what we recorded
    this.requests.push(JSON.parse(JSON.stringify({ ...req, signal: undefined })));
    const next = this.#scripts.shift();
    if (!next) throw new Error("ScriptedProvider: no scripted reply left");
    let reply: { blocks: Block[]; stop?: ModelStopReason; usage?: Partial<Usage>; delayMs?: number };
    if (typeof next === "function") reply = await next(req);
    else if ("error" in next) throw next.error;
    else reply = next;
    for (const b of reply.blocks) {
      if (req.signal?.aborted) throw new Error("aborted");
      if (b.type === "text") {
        for (const piece of b.text.match(/.{1,8}/gs) ?? []) {
          yield { type: "text_delta", text: piece };
          if (reply.delayMs) await sleep(reply.delayMs, req.signal);
        }
      } else if (b.type === "tool_use") yield { type: "tool_use_start", id: b.id, name: b.name };
    }
    const hasTools = reply.blocks.some((b) => b.type === "tool_use");
    const message: Message = { role: "assistant", blocks: reply.blocks, model: req.model };
    yield {
      type: "done",
      message,
      usage: { input: 10, output: 5, cache_read: 0, cache_write: 0, ...reply.usage },
      stop_reason: reply.stop ?? (hasTools ? "tool_use" : "end_turn"),
    };
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(new Error("aborted"));
    });
  });
}

/** Shorthands for scripted blocks. */
export const text = (t: string): Block => ({ type: "text", text: t });
export const call = (id: string, name: string, input: unknown): Block => ({ type: "tool_use", id, name, input });
