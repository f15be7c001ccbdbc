/**
 * Recovery from `max_tokens` not fitting beside the prompt. Since Claude 3.7 the Messages API
 * enforces prompt + `max_tokens` ≤ context window as a validation error instead of lowering
 * `max_tokens` itself: HTTP 400 ``input length and `max_tokens` exceed context limit: 188059 +
 * 20000 > 200000, decrease input length or `max_tokens` and try again`` (WIRE-FORMATS §0.4;
 * platform.claude.com "Context windows", extended thinking models). The catalog's `max_output`
 * (64 000 for Claude Sonnet 4) would otherwise make every prompt above 136 000 tokens fail, long
 * before compaction at 80 % of the window, and the compaction request with it.
 */
import { ProviderError } from "../../kernel/index.js";

/** Below this many output tokens the prompt is treated as overflowing (compaction's turn). */
const MIN_OUTPUT_TOKENS = 1024;

const LIMIT = /input length and `?max_tokens`? exceed context limit: (\d+) \+ (\d+) > (\d+)/i;

/**
 * The output tokens left beside the prompt when `err` is the API's input + `max_tokens` error:
 * `limit - input` from its numbers; undefined for any other error.
 */
export function outputRoom(err: unknown): number | undefined {
  if (!(err instanceof ProviderError) || err.status !== 400) return undefined;
  const m = LIMIT.exec(err.message);
  if (!m) return undefined;
  return Number(m[3]) - Number(m[1]);
}

/**
 * Lowers `max_tokens` of a built Messages API body to `room`, in place, and a thinking budget
 * with it (`budget_tokens` must stay below `max_tokens`: at most ¾ of it, or no budgeted thinking
 * when that is under the API's minimum of 1 024). Returns false, changing nothing, when `room` is
 * under {@link MIN_OUTPUT_TOKENS} or not below the current `max_tokens`.
 */
export function fitMaxTokens(body: Record<string, unknown>, room: number): boolean {
  const current = body.max_tokens;
  if (room < MIN_OUTPUT_TOKENS || typeof current !== "number" || room >= current) return false;
  body.max_tokens = room;
  const thinking = body.thinking as { type?: string; budget_tokens?: number } | undefined;
  // the same cap as request.ts puts on a budget: ¾ of max_tokens, leaving the rest to the answer
  const cap = Math.floor(room * 0.75);
  if (thinking?.type === "enabled" && typeof thinking.budget_tokens === "number" && thinking.budget_tokens > cap) {
    if (cap >= 1024) body.thinking = { ...thinking, budget_tokens: cap };
    else delete body.thinking;
  }
  return true;
}

const CAP = /max_tokens: (\d+) > (\d+), which is the maximum allowed number of output tokens/i;

/**
 * The model's output cap when `err` is the API refusing `max_tokens` above it (HTTP 400
 * `max_tokens: 8192 > 4096, which is the maximum allowed number of output tokens for
 * claude-3-haiku-20240307`): a model outside the catalog gets 8 192 (catalog.ts
 * `DEFAULT_MAX_TOKENS`), which Claude 3 models (4 096) and some proxies refuse on every request. Undefined for
 * any other error.
 */
export function outputCap(err: unknown): number | undefined {
  if (!(err instanceof ProviderError) || err.status !== 400) return undefined;
  const m = CAP.exec(err.message);
  return m ? Number(m[2]) : undefined;
}
