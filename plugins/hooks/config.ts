/**
 * The `hooks` settings block (LARIK-REFERENCE §14, Claude Code format):
 * `{<Event>: [{matcher?, hooks: [{type: "command", command, timeout?}]}]}`.
 * Entries are checked one by one so a single bad entry is reported and skipped instead of
 * dropping every hook.
 */
import { createHash } from "node:crypto";

/** The Claude Code compatible events, in lifecycle order. */
export const HOOK_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "Stop",
  "SubagentStop",
  "PreCompact",
  "Notification",
  "SessionEnd",
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Default hook timeout in seconds (§14). */
export const DEFAULT_TIMEOUT_S = 60;
/** Largest accepted `timeout`, in seconds (the `/hooks-config` range of §14). */
const MAX_TIMEOUT_S = 86_400;

/** One shell hook. `timeout` is in seconds. */
export interface HookCommand {
  type: "command";
  command: string;
  timeout?: number;
}

/** A matcher and the hooks it runs. */
export interface HookGroup {
  matcher?: string;
  hooks: HookCommand[];
}

export type HooksConfig = Partial<Record<HookEvent, HookGroup[]>>;

/** A plain object (not null, not an array): what hook settings and hook output must be. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Validates a raw `hooks` value. Invalid entries are left out and described in `problems`, one
 * line each, naming the key path (`hooks.PreToolUse[0].hooks[1]`) and the fix.
 * @param label the settings key the value came from (`hooks` or `shared_hooks`).
 */
export function parseHooksConfig(raw: unknown, label = "hooks"): { config: HooksConfig; problems: string[] } {
  const config: HooksConfig = {};
  const problems: string[] = [];
  if (raw === undefined || raw === null) return { config, problems };
  if (!isObject(raw)) {
    problems.push(`${label} must be an object of event names to matcher groups; it was ignored`);
    return { config, problems };
  }
  for (const [event, groups] of Object.entries(raw)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      problems.push(`${label}.${event}: unknown hook event; use one of ${HOOK_EVENTS.join(", ")}`);
      continue;
    }
    if (!Array.isArray(groups)) {
      problems.push(`${label}.${event} must be a list of {matcher?, hooks: [...]} groups; it was ignored`);
      continue;
    }
    const out: HookGroup[] = [];
    groups.forEach((g, gi) => {
      const at = `${label}.${event}[${gi}]`;
      if (!isObject(g) || !Array.isArray(g.hooks)) {
        problems.push(`${at} must be {matcher?, hooks: [{type: "command", command}]}; it was ignored`);
        return;
      }
      if (g.matcher !== undefined && typeof g.matcher !== "string") {
        problems.push(`${at}.matcher must be a string (a tool name or regex); the group was ignored`);
        return;
      }
      const hooks: HookCommand[] = [];
      g.hooks.forEach((h, hi) => {
        const hat = `${at}.hooks[${hi}]`;
        if (!isObject(h)) {
          problems.push(`${hat} must be {type: "command", command, timeout?}; it was ignored`);
          return;
        }
        if (h.type === "prompt") {
          problems.push(`${hat}: prompt hooks are not supported yet; use type "command"`);
          return;
        }
        if (h.type !== "command") {
          problems.push(`${hat}.type must be "command"; the hook was ignored`);
          return;
        }
        if (typeof h.command !== "string" || !h.command.trim()) {
          problems.push(`${hat}.command must be a non-empty shell command; the hook was ignored`);
          return;
        }
        if (h.timeout !== undefined && (typeof h.timeout !== "number" || !(h.timeout > 0) || h.timeout > MAX_TIMEOUT_S)) {
          problems.push(`${hat}.timeout must be a number of seconds from 1 to ${MAX_TIMEOUT_S}; the hook was ignored`);
          return;
        }
        hooks.push({ type: "command", command: h.command, timeout: h.timeout as number | undefined });
      });
      if (hooks.length) out.push({ matcher: g.matcher as string | undefined, hooks });
    });
    if (out.length) config[event as HookEvent] = out;
  }
  return { config, problems };
}

/** JSON with object keys sorted at every level, so equal sets hash equally. */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.filter((k) => value[k] !== undefined).map((k) => `${JSON.stringify(k)}:${stableStringify(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The approval pin of a shared hook set: 16 hex of sha256 over the set serialized with sorted
 * events (and sorted keys inside), as §14 describes. Any edit changes it, dropping the approval.
 */
export function hooksHash(raw: unknown): string {
  return createHash("sha256").update(stableStringify(raw ?? {})).digest("hex").slice(0, 16);
}

/** Number of hook commands in a config. */
export function countHooks(config: HooksConfig): number {
  let n = 0;
  for (const groups of Object.values(config)) for (const g of groups ?? []) n += g.hooks.length;
  return n;
}
