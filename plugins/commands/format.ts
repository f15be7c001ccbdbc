/**
 * Small shared pieces of the built-in commands: token and time formats, the displayed text of a
 * prompt, and the checks that turn a missing capability into a one-line error.
 */
import { ConfigError, isPrompt, type Agent, type CommandContext, type Message, type SessionStore } from "../../kernel/index.js";

/**
 * Tokens as the footer and compaction metrics show them (LARIK-REFERENCE §9): `850`, `26k`,
 * `1.2M`. Input in tokens.
 */
export function kTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** An exact token count with thousands separators (`12,345`). */
export function exactTokens(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** USD with enough digits for small sessions: `$0.0042`, `$1.23`. */
export function usd(n: number): string {
  return n < 1 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
}

/**
 * The context meter of the footer (LARIK-REFERENCE §9): `ctx 31% · 62k/200k`, capped at 100%.
 * `used` and `window` in tokens.
 */
export function contextMeter(used: number, window: number): string {
  const pct = window > 0 ? Math.min(100, Math.round((used / window) * 100)) : 0;
  return `ctx ${pct}% · ${kTokens(used)}/${kTokens(window)}`;
}

const NOTE_RE = /^\s*<system-note>[\s\S]*?<\/system-note>\s*$/;
const HOOK_CONTEXT_RE = /^<hook-context /;

/**
 * What the user typed for a prompt message: text blocks that are not attachments, queued
 * `<system-note>`s or hook context (the loop adds those as separate blocks, §2 and invariant 3).
 */
export function promptText(m: Message): string {
  return m.blocks
    .filter((b) => b.type === "text" && !b.attachment)
    .map((b) => (b as { text: string }).text)
    .filter((t) => !NOTE_RE.test(t) && !HOOK_CONTEXT_RE.test(t))
    .join("\n")
    .trim();
}

/** One line of at most `max` characters (code points), for lists. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join("")}…`;
}

/** A prompt of the display history with its message index (a turn boundary, §7). */
export interface PromptRef {
  /** 1-based number shown to the user. */
  n: number;
  /** Index in the display history (`agent.history()`), the `keep` of a branch before it. */
  index: number;
  /** The prompt as the model got it. */
  text: string;
  /** What the user typed when a slash command made it (`/review main..HEAD`), kernel `typedPrompt`. */
  typed?: string;
}

/** What a list shows for prompt `p`: the command line typed, else the prompt's text. */
export function shownPrompt(p: PromptRef): string {
  return p.typed ?? p.text;
}

/**
 * The prompts of a display history, numbered from 1.
 * @param typed `Replayed.typed` (the command line of each prompt a command made, by index), so
 *   lists show `/review main..HEAD` rather than the review prompt it collected
 */
export function listPrompts(history: readonly Message[], typed?: ReadonlyMap<number, string>): PromptRef[] {
  const out: PromptRef[] = [];
  history.forEach((m, index) => {
    if (!isPrompt(m)) return;
    const line = typed?.get(index);
    out.push({ n: out.length + 1, index, text: promptText(m), ...(line !== undefined ? { typed: line } : {}) });
  });
  return out;
}

/**
 * Prompt `arg` (1-based) of `prompts`, or the last one when `arg` is empty.
 * @throws Error when there are no prompts; ConfigError (a usage error: `-p` exits 2) naming the
 *   valid range for anything else.
 */
export function pickPrompt(prompts: PromptRef[], arg: string | undefined, command: string): PromptRef {
  if (!prompts.length) throw new Error(`${command}: this session has no prompts yet`);
  if (arg === undefined || arg === "") return prompts[prompts.length - 1]!;
  const n = Number(arg);
  if (!Number.isInteger(n) || n < 1 || n > prompts.length) {
    throw new ConfigError(`${command} ${arg}: give a prompt number from 1 to ${prompts.length} (${command === "/rewind" ? "/rewind" : "/prompt"} alone lists them)`);
  }
  return prompts[n - 1]!;
}

/**
 * The session store in force.
 * @throws Error when no store plugin is loaded (sessions live in memory only).
 */
export function requireStore(ctx: CommandContext, command: string): SessionStore {
  const store = ctx.host.sessionStore;
  if (!store) throw new Error(`${command} needs a session store: no session store plugin is loaded, so sessions live in memory only`);
  return store;
}

/**
 * Makes `next` the front end's agent and closes `ctx.agent` (firing `sessionEnd`, releasing its
 * session). The command closes the old agent, so `ui.switchAgent` must not.
 */
export async function switchTo(ctx: CommandContext, next: Agent, reason: string): Promise<void> {
  try {
    ctx.ui!.switchAgent!(next);
  } catch (err) {
    await next.close("switch failed");
    throw err;
  }
  await ctx.agent.close(reason);
}

/** Splits command arguments on whitespace. */
export function words(args: string): string[] {
  return args.trim().split(/\s+/).filter(Boolean);
}
