/**
 * Maps the Claude Code hook events onto the kernel's hook points (LARIK-REFERENCE §14,
 * docs/hooks.md): SessionStart → `sessionStart`, UserPromptSubmit → `userPromptSubmit`,
 * PreToolUse → `preToolUse`, PostToolUse → `postToolUse`, Stop/SubagentStop → `stop`/
 * `subagentStop`, PreCompact → `preCompact`, SessionEnd → `sessionEnd`, Notification → the
 * `event` hook on `permission_request`.
 */
import type { Agent, PluginContext, PreToolDecision, StopDecision, StopInfo, ToolResult } from "../../kernel/index.js";
import type { HookEngine, HookPayload } from "./engine.js";
import type { Outcome } from "./outcome.js";

/** Wraps hook text for the model as §14 says. */
const hookContext = (source: string, text: string) => `<hook-context source="${source}">${text}</hook-context>`;
const hookFeedback = (source: string, text: string) => `<hook-feedback source="${source}">${text}</hook-feedback>`;

function base(agent: Agent): HookPayload {
  return {
    session_id: agent.session.id,
    transcript_path: agent.session.location,
    permission_mode: agent.checker.mode,
  };
}

/**
 * Shows hook messages to the user. The kernel's hook payloads carry no notice channel, so
 * messages go to a `notice` function on the payload when a future kernel adds one, else to the
 * host's notices (the only user-facing channel a plugin has today).
 */
function shower(ctx: PluginContext, info: object): (text: string) => void {
  const fn = (info as { notice?: unknown }).notice;
  return typeof fn === "function" ? (t) => (fn as (t: string) => void).call(info, t) : (t) => ctx.notice(t);
}

function showAll(show: (t: string) => void, o: Outcome, event: string, canHalt: boolean): void {
  for (const m of o.messages) show(m);
  if (!canHalt && o.halt !== undefined) show(`${event} hook asked to stop (${o.halt}), but ${event} cannot stop anything`);
}

/** Registers the taps. Returns nothing: every tap is undone with the plugin. */
export function installTaps(ctx: PluginContext, engine: HookEngine): void {
  const h = ctx.hooks;
  /** additionalContext from PreToolUse, delivered with that call's result. */
  const preContext = new Map<string, string[]>();

  h.sessionStart.tap(async (info) => {
    if (!engine.has("SessionStart")) return;
    const o = await engine.fire("SessionStart", info.source, { ...base(info.agent), source: info.source });
    showAll(shower(ctx, info), o, "SessionStart", false);
    if (o.context.length) info.addContext(hookContext("SessionStart", o.context.join("\n")));
  });

  h.userPromptSubmit.tap(async (info) => {
    if (!engine.has("UserPromptSubmit")) return undefined;
    const o = await engine.fire("UserPromptSubmit", undefined, { ...base(info.agent), prompt: info.prompt });
    showAll(shower(ctx, info), o, "UserPromptSubmit", true);
    if (o.halt !== undefined) return { action: "halt" as const, reason: o.halt };
    if (o.block !== undefined) return { action: "block" as const, reason: o.block };
    // The kernel wraps this in <hook-context source="UserPromptSubmit">.
    if (o.context.length) info.addContext(o.context.join("\n"));
    return undefined;
  });

  h.preToolUse.tap(async (info): Promise<PreToolDecision | undefined> => {
    if (!engine.has("PreToolUse")) return undefined;
    const o = await engine.fire("PreToolUse", info.tool.name, {
      ...base(info.agent),
      tool_name: info.tool.name,
      tool_input: info.input,
      tool_use_id: info.tool_use_id,
    });
    showAll(shower(ctx, info), o, "PreToolUse", true);
    if (o.context.length) preContext.set(info.tool_use_id, o.context);
    if (o.halt !== undefined) {
      info.halt(o.halt);
      return { decision: "deny", reason: o.halt };
    }
    if (!o.permission && o.updatedInput === undefined) return undefined;
    const d: PreToolDecision = {};
    if (o.permission) d.decision = o.permission;
    if (o.permissionReason) d.reason = o.permissionReason;
    if (o.updatedInput !== undefined && o.permission !== "deny") d.updatedInput = o.updatedInput;
    return d;
  });

  h.postToolUse.tap(async (result: ToolResult, info): Promise<ToolResult> => {
    const extra: string[] = (preContext.get(info.tool_use_id) ?? []).map((c) => hookContext("PreToolUse", c));
    preContext.delete(info.tool_use_id);
    if (engine.has("PostToolUse")) {
      const o = await engine.fire("PostToolUse", info.tool.name, {
        ...base(info.agent),
        tool_name: info.tool.name,
        tool_input: info.input,
        tool_use_id: info.tool_use_id,
        tool_response: { output: result.content, is_error: result.is_error ?? false },
      });
      showAll(shower(ctx, info), o, "PostToolUse", true);
      if (o.block !== undefined) extra.push(hookFeedback("PostToolUse", o.block));
      for (const c of o.context) extra.push(hookContext("PostToolUse", c));
      if (o.halt !== undefined) info.halt(o.halt);
    }
    if (!extra.length) return result;
    return { ...result, content: `${result.content}\n\n${extra.join("\n")}` };
  });

  const stopTap = (event: "Stop" | "SubagentStop") => async (info: StopInfo): Promise<StopDecision | undefined> => {
    if (!engine.has(event)) return undefined;
    const payload: HookPayload = { ...base(info.agent), stop_hook_active: info.stop_hook_active };
    if (event === "SubagentStop") payload.agent_type = info.agent.label;
    const o = await engine.fire(event, undefined, payload);
    showAll(shower(ctx, info), o, event, true);
    if (o.halt !== undefined) return { action: "halt", reason: o.halt };
    // The kernel wraps the reason in <hook-feedback source="Stop">.
    if (o.block !== undefined) return { action: "block", reason: o.block };
    return undefined;
  };
  h.stop.tap(stopTap("Stop"));
  h.subagentStop.tap(stopTap("SubagentStop"));

  h.preCompact.tap(async (info) => {
    if (!engine.has("PreCompact")) return;
    // Claude Code knows only manual|auto; an overflow compaction is an automatic one.
    const trigger = info.trigger === "manual" ? "manual" : "auto";
    const o = await engine.fire("PreCompact", trigger, { ...base(info.agent), trigger });
    showAll(shower(ctx, info), o, "PreCompact", false);
  });

  h.sessionEnd.tap(async (info) => {
    if (engine.has("SessionEnd")) {
      const o = await engine.fire("SessionEnd", info.reason, { ...base(info.agent), reason: info.reason });
      showAll(shower(ctx, info), o, "SessionEnd", false);
    }
    await engine.idle();
  });

  h.event.tap((ev, agent) => {
    if (ev.type !== "permission_request" || !engine.has("Notification")) return;
    const message = `Larik needs your permission to use ${ev.tool_name}`;
    engine.background(async () => {
      const o = await engine.fire("Notification", "permission_prompt", {
        ...base(agent),
        message,
        notification_type: "permission_prompt",
      });
      for (const m of o.messages) ctx.notice(m);
    });
  });
}
