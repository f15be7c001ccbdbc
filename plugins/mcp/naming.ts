/**
 * Tool and command names for MCP tools and prompts: `mcp__<server>__<tool>`, limited to
 * `^[a-zA-Z0-9_-]{1,64}$`, the intersection of what Anthropic (`^[a-zA-Z0-9_-]{1,128}$`), OpenAI
 * (`^[a-zA-Z0-9_-]+$`, 64 chars) and Gemini (64 chars, letters, digits, `_`, `-`, `.`, `:`)
 * accept (WIRE-FORMATS tool sections; LARIK-REFERENCE §15).
 */
import { createHash } from "node:crypto";

/** The pattern every provider accepts for a tool name. */
export const TOOL_NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;

/**
 * `mcp__<server>__<tool>` with every other character replaced by `_`. A name over 64 chars is
 * cut and ends in `_` + 8 hex of sha256 of the full name, so two long names stay apart.
 */
export function mcpName(server: string, item: string): string {
  const full = `mcp__${server}__${item}`.replace(/[^a-zA-Z0-9_-]/g, "_");
  if (full.length <= MAX) return full;
  const hash = createHash("sha256").update(`mcp__${server}__${item}`).digest("hex").slice(0, 8);
  return `${full.slice(0, MAX - 9)}_${hash}`;
}

/**
 * Hands out names unique within one tool list: a taken name gets `_2`, `_3`, … (cutting the base
 * so the result stays within 64 chars). Call in a stable order so names stay stable.
 */
export class NameAllocator {
  readonly #taken: Set<string>;
  constructor(taken: Iterable<string> = []) {
    this.#taken = new Set(taken);
  }
  /** Reserves and returns a unique form of `name`. */
  take(name: string): string {
    let out = name;
    for (let n = 2; this.#taken.has(out); n++) {
      const suffix = `_${n}`;
      out = `${name.slice(0, MAX - suffix.length)}${suffix}`;
    }
    this.#taken.add(out);
    return out;
  }
}
