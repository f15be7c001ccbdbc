/**
 * The recorded provider streams under test/fixtures/providers and their manifest (expected
 * outcomes per file), shared by every provider test.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ndjsonToSse, type Chunking, type Reply } from "./replay-server.js";

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

/** The manifest's OpenAI-style `finish_reason` names as neutral stop reasons. */
export const NORMALIZED_STOP: Readonly<Record<string, string>> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

/** The usual ways a recording is written: whole, in 1-byte writes and in two random splits. */
export const CHUNKINGS: [string, Chunking][] = [
  ["whole", "whole"],
  ["1-byte writes", "bytes"],
  ["random splits (seed 7)", { seed: 7, max: 48 }],
  ["random splits (seed 99)", { seed: 99, max: 9 }],
];

/**
 * The reply that replays a recording: its status and headers (less the framing ones the replay
 * server sets itself) and its body, a `.chunks.ndjson` capture turned back into SSE.
 */
export function replyFor(entry: ManifestEntry, chunking: Chunking): Reply {
  const raw = fixture(entry.file);
  const body = entry.file.endsWith(".chunks.ndjson") ? ndjsonToSse(raw) : raw;
  const headers = { ...entry.response_headers };
  delete headers["transfer-encoding"];
  delete headers["content-length"];
  return { status: entry.http_status, headers, body, chunking };
}
