/**
 * Markdown for the terminal: marked 18 with marked-terminal 7.3 (which highlights fenced code
 * with cli-highlight), on a private `Marked` instance so the global `marked` stays untouched
 * (STACK.md gotcha 13). Both are loaded once, lazily, before the first frame; until then text
 * is shown plain. Colour follows chalk's detection (none when stdout is not a TTY).
 */
import type { Marked } from "marked";

let md: Marked | undefined;
let loading: Promise<void> | undefined;

/** Loads marked + marked-terminal (about 40 ms the first time). Safe to call repeatedly. */
export function loadMarkdown(): Promise<void> {
  loading ??= (async () => {
    const [{ Marked }, { markedTerminal }] = await Promise.all([import("marked"), import("marked-terminal")]);
    md = new Marked(
      markedTerminal(
        {
          // Ink wraps (transcript) or frame.ts hard-wraps (live region); reflowing here would
          // wrap twice at different widths.
          reflowText: false,
          showSectionPrefix: false,
          emoji: false,
          tab: 2,
          width: 100,
        },
        { ignoreIllegals: true },
      ),
    );
    // marked-terminal 7.3 prints a list item's text as written (`* item **two**`) since marked
    // 13 gives it inline tokens (mikaelbr/marked-terminal#304, #371): render those as marked's
    // own renderer does, and leave every other text token to marked-terminal
    md.use({
      renderer: {
        text(token) {
          return "tokens" in token && token.tokens ? this.parser.parseInline(token.tokens) : false;
        },
      },
    });
  })();
  return loading;
}

// Model text is untrusted: no escape sequences of its own may reach the terminal.
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

/** `text` with control characters (ESC, BEL, C1 ...) removed; tabs and newlines kept. */
export function stripControl(text: string): string {
  return text.replace(CONTROL, "");
}

/**
 * Renders Markdown to ANSI-styled text without trailing blank lines. Falls back to the plain
 * (control-stripped) text when the renderer is not loaded yet or fails on odd input.
 */
export function renderMarkdown(text: string): string {
  const clean = stripControl(text);
  if (!md || !clean.trim()) return clean.trimEnd();
  try {
    const out = md.parse(clean, { async: false });
    return out.replace(/\s+$/, "");
  } catch {
    return clean.trimEnd();
  }
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Where a streaming reply can be cut so the part before renders the same whether or not more
 * text follows: the end of the last blank line that is outside a fenced code block. Returns 0
 * when there is no such point. Finished paragraphs are moved to the transcript at this cut, so
 * the live region only ever re-renders the paragraph being written.
 */
export function stableCut(text: string): number {
  let inFence: string | undefined;
  let cut = 0;
  let pos = 0;
  let prevBlank = false;
  const lines = text.split("\n");
  // the last element has no newline yet: it is unfinished and never a cut point
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i]!;
    const end = pos + line.length + 1;
    const m = FENCE.exec(line);
    if (m) {
      const mark = m[1]!;
      if (!inFence) inFence = mark[0]!.repeat(mark.length);
      else if (mark[0] === inFence[0] && mark.length >= inFence.length && line.trim() === mark) inFence = undefined;
    }
    const blank = line.trim() === "";
    if (!inFence && blank && !prevBlank && i > 0) cut = end;
    prevBlank = blank;
    pos = end;
  }
  return cut;
}
