/**
 * Gemini models the `gemini` provider knows: context window and output cap in tokens, prices in
 * USD per million tokens (the ≤ 200k-token tier where prices are tiered). Implicit caching bills
 * no writes; cached input is billed at `cache_read_price`.
 *
 * Sources: ai.google.dev/gemini-api/docs/models and /pricing. Entries marked "family" carry the
 * published numbers of their family because the model's own sheet was not available when
 * written; override them with `models.<id>` in config.
 */
import type { CatalogEntry, Effort } from "../../kernel/index.js";

const window = { context_window: 1_048_576, max_output: 65_536, cache_write_price: 0 } as const;

export const GEMINI_MODELS: CatalogEntry[] = [
  // family: Gemini 3 Flash numbers (the default model of kernel/models.ts)
  { provider: "gemini", id: "gemini-3.8-flash", ...window, input_price: 0.5, output_price: 3, cache_read_price: 0.05 },
  // family: Gemini 3 Pro numbers (the modelVersion of fixture gemini/gemini3-function-call-id-signature)
  { provider: "gemini", id: "gemini-3.1-pro-preview", ...window, input_price: 2, output_price: 12, cache_read_price: 0.2 },
  { provider: "gemini", id: "gemini-3-pro-preview", ...window, input_price: 2, output_price: 12, cache_read_price: 0.2 },
  { provider: "gemini", id: "gemini-3-flash-preview", ...window, input_price: 0.5, output_price: 3, cache_read_price: 0.05 },
  { provider: "gemini", id: "gemini-2.5-pro", ...window, input_price: 1.25, output_price: 10, cache_read_price: 0.125 },
  { provider: "gemini", id: "gemini-2.5-flash", ...window, input_price: 0.3, output_price: 2.5, cache_read_price: 0.03 },
  { provider: "gemini", id: "gemini-2.5-flash-lite", ...window, input_price: 0.1, output_price: 0.4, cache_read_price: 0.01 },
];

/**
 * How a model takes `thinkingConfig` (WIRE-FORMATS §4.2): `level` (Gemini 3: `thinkingLevel`),
 * `budget` (Gemini 2.5: `thinkingBudget`), `none` (older models reject a thinking config).
 */
export function thinkingStyle(model: string): "level" | "budget" | "none" {
  const id = model.slice(model.lastIndexOf("/") + 1);
  const m = /^gemini-(\d+)(?:\.(\d+))?/.exec(id);
  if (!m) return "none";
  const major = Number(m[1]);
  if (major >= 3) return "level";
  if (major === 2 && Number(m[2] ?? 0) >= 5) return "budget";
  return "none";
}

/** Largest `thinkingBudget` a 2.5 model takes (tokens): 32 768 on Pro, 24 576 on Flash. */
function maxBudget(model: string): number {
  return /-pro/.test(model) ? 32_768 : 24_576;
}

/**
 * `--effort` → `thinkingConfig` fields. Gemini 3: `thinkingLevel` low / high (Flash also medium).
 * Gemini 2.5: `thinkingBudget` low 1 024, medium 8 192, high 16 384, xhigh 24 576, max the
 * model's largest, capped at the model's largest. Older models: nothing.
 */
export function thinkingFields(model: string, effort: Effort): Record<string, unknown> {
  const style = thinkingStyle(model);
  if (style === "level") {
    const flash = /flash/.test(model);
    const level = effort === "low" ? "low" : effort === "medium" && flash ? "medium" : "high";
    return { thinkingLevel: level };
  }
  if (style === "budget") {
    const max = maxBudget(model);
    const budget = { low: 1_024, medium: 8_192, high: 16_384, xhigh: 24_576, max }[effort];
    return { thinkingBudget: Math.min(budget, max) };
  }
  return {};
}
