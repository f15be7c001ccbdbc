/**
 * The `--output` values of `larik -p` (LARIK-REFERENCE §1: text or json, others rejected).
 */
import { ConfigError } from "../../kernel/index.js";

/** What `-p` prints: streamed text, or one event object per line. */
export type OutputFormat = "text" | "json";

/**
 * `--output`'s value as a format; `undefined` (no flag) is `text`.
 * @throws ConfigError (a usage error, exit 2) naming the two values for anything else.
 */
export function outputFormat(value: string | undefined): OutputFormat {
  const format = value ?? "text";
  if (format !== "text" && format !== "json") throw new ConfigError(`--output ${format}: use text or json`);
  return format;
}
