/**
 * Claude models the `anthropic` provider knows: context window and output cap in tokens, prices
 * in USD per million tokens (cache read/write default to 0.1× / 1.25× input in `costOf`).
 *
 * Sources: Anthropic's models overview and pricing pages. Entries marked "family" carry the
 * published numbers of their family because the model's own sheet was not available when
 * written; override them with `models.<id>` in config.
 */
import type { CatalogEntry } from "../../kernel/index.js";

export const ANTHROPIC_MODELS: CatalogEntry[] = [
  // family: Opus 4.5/4.6 numbers
  { provider: "anthropic", id: "claude-opus-5", context_window: 200_000, max_output: 64_000, input_price: 5, output_price: 25 },
  // family: Sonnet 4.5 numbers (also the model of fixture anthropic/server-tools-prompt-cache)
  { provider: "anthropic", id: "claude-sonnet-5", context_window: 200_000, max_output: 64_000, input_price: 3, output_price: 15 },
  { provider: "anthropic", id: "claude-opus-4-6", context_window: 200_000, max_output: 128_000, input_price: 5, output_price: 25 },
  { provider: "anthropic", id: "claude-opus-4-5", context_window: 200_000, max_output: 64_000, input_price: 5, output_price: 25 },
  { provider: "anthropic", id: "claude-sonnet-4-5", context_window: 200_000, max_output: 64_000, input_price: 3, output_price: 15 },
  { provider: "anthropic", id: "claude-haiku-4-5", context_window: 200_000, max_output: 64_000, input_price: 1, output_price: 5 },
  { provider: "anthropic", id: "claude-opus-4-1", context_window: 200_000, max_output: 32_000, input_price: 15, output_price: 75 },
  { provider: "anthropic", id: "claude-sonnet-4-20250514", context_window: 200_000, max_output: 64_000, input_price: 3, output_price: 15 },
];

/** Output cap sent when neither the request nor the catalog gives one (tokens). */
export const DEFAULT_MAX_TOKENS = 8192;

/**
 * How a model takes a thinking configuration (WIRE-FORMATS §1.3, LARIK-REFERENCE §10):
 * `adaptive` (Claude 4.6 and later: `thinking:{type:"adaptive"}` + `output_config.effort`),
 * `budget` (Claude 3.7 – 4.5: `thinking:{type:"enabled", budget_tokens}`), `none` (older).
 * Ids that do not parse as Claude versions are treated as `budget`, which most proxies accept.
 */
export function thinkingStyle(model: string): "adaptive" | "budget" | "none" {
  const id = model.slice(model.lastIndexOf("/") + 1);
  let m = /claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2})(?=-|$|@))?/.exec(id);
  if (!m) m = /claude-(\d+)(?:-(\d{1,2}))?-(?:opus|sonnet|haiku)/.exec(id);
  if (!m) return "budget";
  const version = Number(m[1]) + (m[2] ? Number(m[2]) / 10 : 0);
  if (version >= 4.6) return "adaptive";
  if (version >= 3.7) return "budget";
  return "none";
}
