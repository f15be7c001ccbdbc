/**
 * Recovery from a rejected thinking replay (LARIK-REFERENCE §10: "if thinking is rejected
 * because its prefix changed, strip thinking and retry once").
 *
 * The Messages API validates the signature of every `thinking` / `redacted_thinking` block sent
 * back (WIRE-FORMATS §1.3) and answers HTTP 400 `invalid_request_error` when one was edited or
 * its signature no longer matches, e.g. `messages.1.content.0: Invalid \`signature\` in
 * \`thinking\` block` or `\`thinking\` or \`redacted_thinking\` blocks in the latest assistant
 * message cannot be modified`. Earlier thinking may be dropped (the API ignores it for context),
 * so resending without it is a valid request.
 */
import { ProviderError } from "../../kernel/index.js";

// Both a thinking noun and a word saying it was tampered with: "Expected `thinking` … but found
// `tool_use`" (thinking missing) is a different failure that stripping cannot fix.
const THINKING_NOUN = /\b(redacted_thinking|thinking|signature)\b/i;
const TAMPERED = /\binvalid\b|\bmodified\b|cannot be modified|must remain as they were/i;

/** True when `err` is the API rejecting replayed thinking blocks or their signatures. */
export function isThinkingRejected(err: unknown): boolean {
  return (
    err instanceof ProviderError &&
    err.status === 400 &&
    err.kind === "bad_request" &&
    THINKING_NOUN.test(err.message) &&
    TAMPERED.test(err.message)
  );
}

/**
 * Removes every `thinking` and `redacted_thinking` block from the assistant messages of a built
 * Messages API body, in place; an assistant message left empty is dropped (the API rejects empty
 * content). Returns how many blocks were removed (0: nothing to strip, so no retry can help).
 */
export function stripThinking(body: Record<string, unknown>): number {
  const messages = body.messages as { role: string; content: { type?: unknown }[] }[] | undefined;
  if (!Array.isArray(messages)) return 0;
  let removed = 0;
  const kept: typeof messages = [];
  for (const m of messages) {
    if (m.role === "assistant" && Array.isArray(m.content)) {
      const content = m.content.filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
      removed += m.content.length - content.length;
      if (!content.length) continue;
      kept.push({ ...m, content });
    } else kept.push(m);
  }
  body.messages = kept;
  return removed;
}
