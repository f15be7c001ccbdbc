/**
 * GPT models the `openai` provider knows: context window and output cap in tokens, prices in USD
 * per million tokens. OpenAI bills no cache writes; cached input is billed at `cache_read_price`.
 *
 * Sources: OpenAI's models and pricing pages (platform.openai.com/docs/models,
 * openai.com/api/pricing). Entries marked "family" carry the published numbers of their family
 * because the model's own sheet was not available when written; override them with
 * `models.<id>` in config.
 */
import type { CatalogEntry, Effort } from "../../kernel/index.js";

const gpt5 = { context_window: 400_000, max_output: 128_000, cache_write_price: 0 } as const;

export const OPENAI_MODELS: CatalogEntry[] = [
  // family: GPT-5.2 numbers (the default model of kernel/models.ts)
  { provider: "openai", id: "gpt-5.5", ...gpt5, input_price: 1.75, output_price: 14, cache_read_price: 0.175 },
  { provider: "openai", id: "gpt-5.2", ...gpt5, input_price: 1.75, output_price: 14, cache_read_price: 0.175 },
  { provider: "openai", id: "gpt-5.1", ...gpt5, input_price: 1.25, output_price: 10, cache_read_price: 0.125 },
  { provider: "openai", id: "gpt-5.1-codex", ...gpt5, input_price: 1.25, output_price: 10, cache_read_price: 0.125 },
  { provider: "openai", id: "gpt-5", ...gpt5, input_price: 1.25, output_price: 10, cache_read_price: 0.125 },
  { provider: "openai", id: "gpt-5-codex", ...gpt5, input_price: 1.25, output_price: 10, cache_read_price: 0.125 },
  { provider: "openai", id: "gpt-5-mini", ...gpt5, input_price: 0.25, output_price: 2, cache_read_price: 0.025 },
  { provider: "openai", id: "gpt-5-nano", ...gpt5, input_price: 0.05, output_price: 0.4, cache_read_price: 0.005 },
  { provider: "openai", id: "gpt-4.1", context_window: 1_047_576, max_output: 32_768, input_price: 2, output_price: 8, cache_read_price: 0.5, cache_write_price: 0 },
  { provider: "openai", id: "gpt-4.1-mini", context_window: 1_047_576, max_output: 32_768, input_price: 0.4, output_price: 1.6, cache_read_price: 0.1, cache_write_price: 0 },
  { provider: "openai", id: "gpt-4o", context_window: 128_000, max_output: 16_384, input_price: 2.5, output_price: 10, cache_read_price: 1.25, cache_write_price: 0 },
  { provider: "openai", id: "gpt-4o-mini", context_window: 128_000, max_output: 16_384, input_price: 0.15, output_price: 0.6, cache_read_price: 0.075, cache_write_price: 0 },
  { provider: "openai", id: "o3", context_window: 200_000, max_output: 100_000, input_price: 2, output_price: 8, cache_read_price: 0.5, cache_write_price: 0 },
  { provider: "openai", id: "o4-mini", context_window: 200_000, max_output: 100_000, input_price: 1.1, output_price: 4.4, cache_read_price: 0.275, cache_write_price: 0 },
];

/**
 * Whether a model reasons (takes `reasoning`, returns reasoning items): the o-series, GPT-5 and
 * Codex models, except the non-reasoning `gpt-5-chat`. Other ids get no `reasoning` field unless
 * `--effort` is given, since non-reasoning models reject it with a 400.
 */
export function isReasoningModel(model: string): boolean {
  const id = model.slice(model.lastIndexOf("/") + 1);
  if (/^gpt-5(\.\d+)?-chat/.test(id)) return false;
  return /^(o\d|gpt-5|gpt-oss)/.test(id) || id.includes("codex");
}

/**
 * `--effort` → `reasoning.effort`. The API's scale is `minimal|low|medium|high`, plus `xhigh` on
 * GPT-5.2 and later and on `*-codex-max`; elsewhere `xhigh` and `max` send `high`.
 */
export function reasoningEffort(model: string, effort: Effort): string {
  if (effort === "low" || effort === "medium" || effort === "high") return effort;
  const id = model.slice(model.lastIndexOf("/") + 1);
  const m = /^gpt-(\d+)\.(\d+)/.exec(id);
  const xhigh = id.includes("codex-max") || (m !== null && (Number(m[1]) > 5 || Number(m[2]) >= 2)) || /^gpt-([6-9]|\d\d)/.test(id);
  return xhigh ? "xhigh" : "high";
}
