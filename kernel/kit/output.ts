/**
 * Output safety for anything sent to a model: no NUL bytes, no invalid UTF-8, and caps that keep
 * head and tail without cutting a UTF-8 sequence or a surrogate pair (LARIK-REFERENCE §3, §5).
 */

/** Default cap on one tool result sent to the model, in bytes of UTF-8. */
export const OUTPUT_CAP_BYTES = 30_000;

/**
 * Decodes bytes as UTF-8, replacing invalid sequences with U+FFFD and NUL with U+2400 (␀).
 * Returns the text and whether anything was replaced.
 */
export function toSafeText(input: Uint8Array | string): { text: string; replaced: boolean } {
  let text: string;
  let replaced = false;
  if (typeof input === "string") {
    text = input.toWellFormed();
    replaced = text !== input;
  } else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(input);
    } catch {
      text = new TextDecoder("utf-8").decode(input);
      replaced = true;
    }
  }
  if (text.includes("\0")) {
    text = text.replaceAll("\0", "\u2400");
    replaced = true;
  }
  return { text, replaced };
}

/** Cuts `s` to at most `maxBytes` of UTF-8 from the start, never inside a character. */
function headBytes(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= maxBytes) return s;
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}

/** The last at most `maxBytes` of UTF-8 of `s`, never starting inside a character. */
function tailBytes(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= maxBytes) return s;
  let start = buf.length - maxBytes;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString("utf8");
}

/**
 * Caps text at `maxBytes` (UTF-8), keeping about 40% head and 60% tail with a marker line that
 * says how much was left out. Returns the text unchanged when it fits.
 */
export function capOutput(text: string, maxBytes = OUTPUT_CAP_BYTES, hint = ""): { text: string; truncated: boolean } {
  const total = Buffer.byteLength(text, "utf8");
  if (total <= maxBytes) return { text, truncated: false };
  const headN = Math.floor(maxBytes * 0.4);
  const tailN = maxBytes - headN;
  const head = headBytes(text, headN);
  const tail = tailBytes(text, tailN);
  const omitted = total - Buffer.byteLength(head) - Buffer.byteLength(tail);
  return { text: `${head}\n… [${omitted} bytes omitted${hint ? `; ${hint}` : ""}] …\n${tail}`, truncated: true };
}
