/**
 * Reads a turn's events to the end, as a front end must, checking each against the event schema
 * every front end relies on (`AgentEventSchema`, docs/architecture.md).
 */
import { expect } from "vitest";
import { AgentEventSchema, type AgentEvent } from "../../kernel/index.js";

/** Every event of `events`, in order; `onEvent` sees each as it comes (to answer, or cancel). */
export async function drain(events: AsyncIterable<AgentEvent>, onEvent?: (e: AgentEvent) => void): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of events) {
    expect(AgentEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
    out.push(e);
    onEvent?.(e);
  }
  return out;
}
