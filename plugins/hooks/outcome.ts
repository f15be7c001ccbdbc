/**
 * The hook output protocol (LARIK-REFERENCE §14, Claude Code's command-hook contract) and how
 * the results of hooks that ran in parallel combine.
 *
 * Exit 0: stdout may be a JSON object with `continue:false` + `stopReason` (halt), `systemMessage`
 * (shown to the user), `decision:"block"` + `reason` (legacy `approve` = allow),
 * `hookSpecificOutput.permissionDecision` + `permissionDecisionReason`, `updatedInput`,
 * `additionalContext`; other stdout is model context for UserPromptSubmit and SessionStart only.
 * Exit 2: block with stderr as the reason (deny for PreToolUse). Other exits: a non-blocking error
 * shown to the user.
 */
import { isObject, type HookEvent } from "./config.js";
import type { HookRun } from "./runner.js";

/** What one hook (or a combined set of hooks) asks for. */
export interface Outcome {
  /** Block the prompt / the tool call / the stop, with this reason. */
  block?: string;
  /** End the turn (`continue: false`), with this reason. */
  halt?: string;
  permission?: "allow" | "deny" | "ask";
  permissionReason?: string;
  updatedInput?: unknown;
  /** Text for the model. */
  context: string[];
  /** Text for the user: `systemMessage`, errors, output of non-blocking events. */
  messages: string[];
}

/** Events whose hooks can block (exit 2 or `decision: "block"` changes what happens). */
const BLOCKING_EVENTS: ReadonlySet<HookEvent> = new Set(["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop"]);
/** Events whose plain (non-JSON) stdout becomes model context. */
const PLAIN_CONTEXT_EVENTS: ReadonlySet<HookEvent> = new Set(["UserPromptSubmit", "SessionStart"]);

const oneLine = (s: string, n = 300) => {
  const t = s.trim().replace(/\s*\n\s*/g, " ");
  return t.length > n ? `${t.slice(0, n)}…` : t;
};
const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() ? v : undefined);

/** A short name for a hook command in messages. */
function hookLabel(command: string): string {
  return oneLine(command, 60);
}

/** Reads one hook run as the protocol above says. */
export function parseRun(event: HookEvent, run: HookRun, timeoutS: number): Outcome {
  const o: Outcome = { context: [], messages: [] };
  const name = `${event} hook "${hookLabel(run.command)}"`;
  if (run.spawnError) {
    o.messages.push(`${name} could not start: ${run.spawnError}`);
    return o;
  }
  if (run.timedOut) {
    o.messages.push(`${name} timed out after ${timeoutS} s and was stopped`);
    return o;
  }
  if (run.code === 2) {
    const reason = run.stderr.trim() || `blocked by ${name} (exit 2, no message on stderr)`;
    if (event === "PreToolUse") {
      o.permission = "deny";
      o.permissionReason = reason;
    } else if (BLOCKING_EVENTS.has(event)) o.block = reason;
    else o.messages.push(`${name} exited with 2 (this event cannot block): ${oneLine(reason)}`);
    return o;
  }
  if (run.code !== 0) {
    const why = run.code === null ? `was killed by ${run.signal ?? "a signal"}` : `failed with exit code ${run.code}`;
    const detail = oneLine(run.stderr) || oneLine(run.stdout);
    o.messages.push(`${name} ${why}${detail ? `: ${detail}` : ""}`);
    return o;
  }
  const stdout = run.stdout.trim();
  if (!stdout) return o;
  let json: Record<string, unknown> | undefined;
  if (stdout.startsWith("{")) {
    try {
      const v: unknown = JSON.parse(stdout);
      if (isObject(v)) json = v;
    } catch {
      // not JSON after all: handled as plain text below
    }
  }
  if (!json) {
    if (PLAIN_CONTEXT_EVENTS.has(event)) o.context.push(stdout);
    return o;
  }
  applyJson(event, json, o, name);
  return o;
}

function applyJson(event: HookEvent, j: Record<string, unknown>, o: Outcome, name: string): void {
  const specific = isObject(j.hookSpecificOutput) ? j.hookSpecificOutput : {};
  if (j.continue === false) o.halt = str(j.stopReason) ?? `stopped by ${name}`;
  const sys = str(j.systemMessage);
  if (sys) o.messages.push(sys);
  const reason = str(j.reason);
  if (j.decision === "block") {
    if (event === "PreToolUse") {
      o.permission = "deny";
      o.permissionReason = reason ?? `blocked by ${name}`;
    } else o.block = reason ?? `blocked by ${name}`;
  } else if (j.decision === "approve" && event === "PreToolUse") {
    o.permission = "allow";
    o.permissionReason = reason;
  }
  const pd = specific.permissionDecision;
  if (event === "PreToolUse" && (pd === "allow" || pd === "deny" || pd === "ask")) {
    o.permission = pd;
    o.permissionReason = str(specific.permissionDecisionReason) ?? reason;
  }
  const updated = specific.updatedInput !== undefined ? specific.updatedInput : j.updatedInput;
  if (updated !== undefined && event === "PreToolUse") o.updatedInput = updated;
  const ctx = str(specific.additionalContext) ?? str(j.additionalContext);
  if (ctx) o.context.push(ctx);
}

const RANK = { allow: 0, ask: 1, deny: 2 } as const;

/**
 * Combines parallel hooks in config order (§14): any block blocks, any halt halts, deny > ask >
 * allow, the last `updatedInput` wins, reasons, contexts and messages are concatenated.
 */
export function combine(outcomes: Outcome[]): Outcome {
  const all: Outcome = { context: [], messages: [] };
  const blocks: string[] = [];
  const halts: string[] = [];
  const reasons = new Map<string, string[]>();
  for (const o of outcomes) {
    if (o.block !== undefined) blocks.push(o.block);
    if (o.halt !== undefined) halts.push(o.halt);
    if (o.permission) {
      if (!all.permission || RANK[o.permission] > RANK[all.permission]) all.permission = o.permission;
      if (o.permissionReason) reasons.set(o.permission, [...(reasons.get(o.permission) ?? []), o.permissionReason]);
    }
    if (o.updatedInput !== undefined) all.updatedInput = o.updatedInput;
    all.context.push(...o.context);
    all.messages.push(...o.messages);
  }
  if (blocks.length) all.block = blocks.join("\n");
  if (halts.length) all.halt = halts.join("\n");
  if (all.permission) {
    const r = reasons.get(all.permission);
    if (r?.length) all.permissionReason = r.join("\n");
  }
  return all;
}
