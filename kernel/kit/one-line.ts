/**
 * Errors as one line, for notices and one-line error messages.
 */
import { ProviderError } from "../types.js";

/**
 * A one-line configuration error that says what to fix (a bad model spec, a missing key, a
 * malformed settings file): a usage problem, on which `larik` exits with status 2 (cli/main.ts).
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/**
 * The message of an error as notices and `error` events show it: a {@link ProviderError}
 * prefixed with its provider and HTTP status (`anthropic (HTTP 529): Overloaded`), any other
 * error's message as it is (a plugin's `PluginError` already names the plugin and hook).
 */
export function errorText(err: unknown): string {
  if (err instanceof ProviderError) {
    const status = err.status ? ` (HTTP ${err.status})` : "";
    return `${err.provider}${status}: ${err.message}`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * An error's message on one line: its first line, plus the place of a syntax error, which jiti
 * puts on a line of its own (`<path>:<line>:<column>`, column counted from 0). The place reads
 * `at line L, column C` (both counted from 1, as editors do) when it is in `file`, the module
 * being loaded, else `at <path>:L:C`. Other errors keep their first line only: the later lines
 * of a message are often a stack, whose frames look like places too.
 */
export function oneLine(err: unknown, file?: string): string {
  const msg = err instanceof Error ? err.message : String(err);
  const lines = msg.split("\n").map((l) => l.trim()).filter(Boolean);
  const first = lines[0] ?? "unknown error";
  const syntax = /^(ParseError|SyntaxError)\b/.test(first) || (err instanceof Error && /^(ParseError|SyntaxError)$/.test(err.name));
  if (!syntax) return first;
  const place = lines
    .slice(1)
    .filter((l) => !l.startsWith("at "))
    .map((l) => /^(.+):(\d+):(\d+)$/.exec(l))
    .find((m) => m && Number(m[2]) > 0);
  if (!place) return first;
  const [, path, line, column] = place;
  const col = Number(column) + 1;
  return `${first} at ${path === file ? `line ${line}, column ${col}` : `${path}:${line}:${col}`}`;
}

/**
 * The text of a plugin's `notice(text)` in a hook payload or a tool's `ToolContext`, checked
 * where the plugin called it: a notice event carries one string, and anything else would only
 * fail later, as an invalid event that blames the kernel. Thrown here, the mistake is reported as
 * the caller's (a hook tap's `PluginError` names the plugin and hook, a failed tool call the tool).
 * @throws TypeError when `text` is not a string, saying what was passed.
 */
export function noticeText(text: unknown): string {
  if (typeof text === "string") return text;
  throw new TypeError(noticeTextProblem(text));
}

/** What is wrong with a `notice(text)` argument that is not a string, as one line. */
export function noticeTextProblem(text: unknown): string {
  const got =
    text instanceof Error
      ? `an Error (${JSON.stringify(text.message.split("\n")[0])}): pass its message`
      : text === null || text === undefined
        ? String(text)
        : typeof text === "object"
          ? `${Array.isArray(text) ? "an array" : "an object"}: pass one line of text`
          : `${typeof text} ${String(text).slice(0, 40)}`;
  return `notice(text) takes a string, got ${got}`;
}
