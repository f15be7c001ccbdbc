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

/**
 * The text of an input that is typed text and then Enter in one chunk (`"ollama/llama3\r"`), which
 * Ink hands over whole and without `return` when keys come faster than a frame or a paste is not
 * bracketed; undefined for any other input (a lone Enter, text with a newline inside).
 */
export function textThenEnter(input: string): string | undefined {
  return input.length > 1 ? /^([^\r\n]*)\r$/.exec(input)?.[1] : undefined;
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
