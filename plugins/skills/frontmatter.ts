/**
 * YAML frontmatter of `SKILL.md` and command files: the small subset these files use
 * (Claude Code's skill and command docs): top-level `key: value` pairs with plain, quoted,
 * `|`/`>` block and multi-line plain scalars, `true`/`false`, numbers, `[a, b]` and `- item`
 * lists. Nested maps are kept as their raw text. `raw` holds each value's source text so
 * `argument-hint: [file] [mode]` can be read as written (§13 "read raw").
 */

export interface Frontmatter {
  /** Parsed values by key. */
  data: Record<string, unknown>;
  /** Each key's value exactly as written (block values joined with newlines, trimmed). */
  raw: Record<string, string>;
  /** The text after the closing `---`. */
  body: string;
  /** True when the file starts with a frontmatter block. */
  present: boolean;
}

const KEY_LINE = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*)|\s*)$/;

/** Splits `text` into frontmatter and body. A file without a closed block is all body. */
export function parseFrontmatter(text: string): Frontmatter {
  const src = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = src.split("\n");
  if (lines[0]?.trim() !== "---") return { data: {}, raw: {}, body: src, present: false };
  let end = -1;
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!.trimEnd();
    if (l === "---" || l === "...") {
      end = i;
      break;
    }
  }
  if (end < 0) return { data: {}, raw: {}, body: src, present: false };
  const { data, raw } = parseYamlSubset(lines.slice(1, end));
  return { data, raw, body: lines.slice(end + 1).join("\n").replace(/^\n+/, ""), present: true };
}

function parseYamlSubset(lines: string[]): { data: Record<string, unknown>; raw: Record<string, string> } {
  const data: Record<string, unknown> = {};
  const raw: Record<string, string> = {};
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const m = KEY_LINE.exec(line);
    if (!m || /^\s/.test(line) || line.trimStart().startsWith("#")) {
      i++;
      continue;
    }
    const key = m[1]!;
    const inline = (m[2] ?? "").trim();
    // Continuation lines: indented or blank, up to the next top-level key.
    const block: string[] = [];
    let j = i + 1;
    while (j < lines.length && (lines[j]!.trim() === "" || /^\s/.test(lines[j]!) || /^-\s/.test(lines[j]!))) block.push(lines[j++]!);
    while (block.length && block[block.length - 1]!.trim() === "") block.pop();
    i = j;
    raw[key] = [inline, ...block.map((b) => b.trim())].filter((s) => s !== "").join("\n");
    data[key] = parseValue(inline, block);
  }
  return { data, raw };
}

function dedent(block: string[]): string[] {
  const indents = block.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)![0].length);
  const n = indents.length ? Math.min(...indents) : 0;
  return block.map((l) => l.slice(Math.min(n, /^\s*/.exec(l)![0].length)));
}

/** Folds lines as YAML `>` and plain multi-line scalars do: blank lines become newlines. */
function fold(lines: string[]): string {
  let out = "";
  let pendingBreak = false;
  for (const l of lines) {
    if (!l.trim()) {
      out += "\n";
      pendingBreak = true;
      continue;
    }
    out += out && !pendingBreak ? ` ${l.trim()}` : l.trim();
    pendingBreak = false;
  }
  return out;
}

function parseValue(inline: string, block: string[]): unknown {
  const blockScalar = /^([|>])([+-]?)\s*(?:#.*)?$/.exec(inline);
  if (blockScalar) {
    const body = dedent(block);
    let s = blockScalar[1] === "|" ? body.join("\n") : fold(body);
    if (blockScalar[2] !== "-") s = s.replace(/\n*$/, "\n");
    if (blockScalar[2] === "-") s = s.replace(/\n+$/, "");
    return s;
  }
  if (inline === "") {
    const items = block.filter((l) => l.trim());
    if (!items.length) return null;
    if (items.every((l) => /^\s*-(\s|$)/.test(l))) return items.map((l) => scalar(l.trim().replace(/^-\s*/, "")));
    // A nested map or other structure: kept as text; none of the keys Larik reads use one.
    return dedent(block).join("\n").trim();
  }
  if (inline.startsWith("[") && inline.endsWith("]")) {
    const inner = inline.slice(1, -1).trim();
    return inner ? splitFlow(inner).map((s) => scalar(s.trim())) : [];
  }
  if (block.length && !/^["']/.test(inline)) return scalar(fold([inline, ...block]));
  return scalar(inline);
}

function splitFlow(s: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | undefined;
  for (const ch of s) {
    if (quote) {
      cur += ch;
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      cur += ch;
    } else if (ch === ",") {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function scalar(v: string): unknown {
  if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v.slice(1, -1);
    }
  }
  if (v.startsWith("'") && v.endsWith("'") && v.length >= 2) return v.slice(1, -1).replaceAll("''", "'");
  const plain = v.replace(/\s+#.*$/, "").trim();
  if (/^(true|false)$/i.test(plain)) return plain.toLowerCase() === "true";
  if (/^(null|~)$/i.test(plain) || plain === "") return null;
  if (/^-?\d+(\.\d+)?$/.test(plain)) return Number(plain);
  return plain;
}
