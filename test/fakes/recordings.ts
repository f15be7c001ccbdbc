/**
 * The recorded provider streams under test/fixtures/providers and their manifest (expected
 * outcomes per file), shared by every provider test.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const FIX = join(import.meta.dirname, "..", "fixtures", "providers");

/** One manifest row: a recording, its HTTP status and headers, and what it must decode to. */
export interface ManifestEntry {
  file: string;
  api: string;
  http_status: number;
  response_headers: Record<string, string>;
  expected: Record<string, any>;
}

/** A recording's text (path relative to test/fixtures/providers). */
export const fixture = (p: string): string => readFileSync(join(FIX, p), "utf8");

/** Every manifest row, or those of one API (`anthropic`, `openai-chat`, `gemini`, ...). */
export function manifestFor(api?: string): ManifestEntry[] {
  const all = JSON.parse(fixture("manifest.json")) as ManifestEntry[];
  return api ? all.filter((m) => m.api === api) : all;
}
