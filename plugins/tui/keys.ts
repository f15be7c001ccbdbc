/**
 * Default key bindings of the composer (LARIK-REFERENCE §24 "Default keys"), as a pure mapping
 * from Ink's `useInput` arguments to an action. Ink 6.8 reports ctrl+j as the input `"\n"`
 * (not `return`), alt+enter as `return` with `meta`, shift+enter as `return` with `shift` only
 * where the terminal distinguishes it (kitty protocol `CSI 13;2u`, or xterm's
 * `CSI 27;2;13~`, which Ink passes through as text), and the Backspace key as `delete`.
 */
import type { Key } from "ink";

export type KeyAction =
  | { type: "submit" }
  | { type: "newline" }
  | { type: "insert"; text: string }
  | { type: "backspace" }
  | { type: "deleteForward" }
  | { type: "deleteWord" }
  | { type: "left" }
  | { type: "right" }
  | { type: "wordLeft" }
  | { type: "wordRight" }
  | { type: "up" }
  | { type: "down" }
  | { type: "home" }
  | { type: "end" }
  | { type: "killToStart" }
  | { type: "killToEnd" }
  | { type: "tab" }
  | { type: "cycleMode" }
  | { type: "escape" }
  | { type: "ctrlC" }
  | { type: "ctrlD" }
  | { type: "historySearch" }
  | { type: "externalEditor" }
  | { type: "toggleThinking" }
  | { type: "pasteStart" }
  | { type: "pasteEnd" }
  | { type: "none" };

/** Bracketed paste markers as Ink hands them over (the leading ESC already removed). */
const PASTE_START = "[200~";
const PASTE_END = "[201~";
const XTERM_SHIFT_ENTER = /^\[27;2;13~$/;
const UNKNOWN_SEQUENCE = /^\[[\d;:?]*[~A-Za-z]$/;

/** One key of a {@link splitBurst}: its input and the `Key` flags Ink would have set for it alone. */
export interface BurstKey {
  input: string;
  key: Partial<Key>;
}

// C0 controls a terminal sends for a key (Enter, Tab, ctrl+letter), and DEL (Backspace); not ESC
const CONTROL = /[\x00-\x1a\x1c-\x1f\x7f]/;

/**
 * The keys in an input that holds typed text together with Enter or a ctrl key in one chunk
 * (`"fix it\r"`, `"\x12query\r"`), which Ink hands over whole, as text, when keys come faster
 * than a frame or a paste is not bracketed: runs of text, and each control key on its own (Enter
 * as `return`, Tab as `tab`, DEL as `backspace`, ctrl+letter as the letter with `ctrl`).
 * Undefined for an input that is one key or plain text, and for one with an escape sequence
 * (arrows, function keys), which is left as Ink gave it.
 */
export function splitBurst(input: string): BurstKey[] | undefined {
  if (input.length < 2 || input.includes("\x1b") || !CONTROL.test(input)) return undefined;
  const keys: BurstKey[] = [];
  let text = "";
  for (const ch of input) {
    if (!CONTROL.test(ch)) {
      text += ch;
      continue;
    }
    if (text) keys.push({ input: text, key: {} });
    text = "";
    const code = ch.charCodeAt(0);
    if (ch === "\r") keys.push({ input: "\r", key: { return: true } });
    else if (ch === "\t") keys.push({ input: "\t", key: { tab: true } });
    else if (ch === "\n") keys.push({ input: "\n", key: {} }); // ctrl+j, a newline (keyAction)
    else if (code === 0x7f || code === 0x08) keys.push({ input: "", key: { backspace: true } });
    else keys.push({ input: String.fromCharCode(code + 96), key: { ctrl: true } });
  }
  if (text) keys.push({ input: text, key: {} });
  return keys;
}

/**
 * The text of an input that is only typed text and then Enter (`"ollama/llama3\r"`), in one
 * chunk ({@link splitBurst}); undefined for any other input.
 */
export function textThenEnter(input: string): string | undefined {
  const keys = splitBurst(input);
  return keys?.length === 2 && !keys[0]!.key.ctrl && keys[0]!.input && keys[1]!.key.return ? keys[0]!.input : undefined;
}

/** The action for one `useInput` call. */
export function keyAction(input: string, key: Key): KeyAction {
  if (input === PASTE_START) return { type: "pasteStart" };
  if (input === PASTE_END) return { type: "pasteEnd" };
  if (key.return) return key.meta || key.shift ? { type: "newline" } : { type: "submit" };
  if (input === "\n" || XTERM_SHIFT_ENTER.test(input)) return { type: "newline" };
  if (key.escape) return { type: "escape" };
  if (key.tab) return key.shift ? { type: "cycleMode" } : { type: "tab" };
  if (key.backspace || key.delete) return key.meta || key.ctrl ? { type: "deleteWord" } : { type: "backspace" };
  if (key.leftArrow) return key.meta || key.ctrl ? { type: "wordLeft" } : { type: "left" };
  if (key.rightArrow) return key.meta || key.ctrl ? { type: "wordRight" } : { type: "right" };
  if (key.upArrow) return { type: "up" };
  if (key.downArrow) return { type: "down" };
  if (key.home) return { type: "home" };
  if (key.end) return { type: "end" };
  if (key.ctrl) {
    switch (input) {
      case "c":
        return { type: "ctrlC" };
      case "d":
        return { type: "ctrlD" };
      case "a":
        return { type: "home" };
      case "e":
        return { type: "end" };
      case "b":
        return { type: "left" };
      case "f":
        return { type: "right" };
      case "u":
        return { type: "killToStart" };
      case "k":
        return { type: "killToEnd" };
      case "w":
        return { type: "deleteWord" };
      case "r":
        return { type: "historySearch" };
      case "g":
        return { type: "externalEditor" };
      case "o":
        return { type: "toggleThinking" };
      case "p":
        return { type: "up" };
      case "n":
        return { type: "down" };
      default:
        return { type: "none" };
    }
  }
  if (key.meta) {
    if (input === "b") return { type: "wordLeft" };
    if (input === "f") return { type: "wordRight" };
    return { type: "none" };
  }
  if (key.pageUp || key.pageDown) return { type: "none" };
  if (!input) return { type: "none" };
  // an escape sequence Ink has no name for (F-keys, focus reports) arrives as its tail
  if (UNKNOWN_SEQUENCE.test(input)) return { type: "none" };
  return { type: "insert", text: input };
}
