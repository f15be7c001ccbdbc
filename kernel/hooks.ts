/**
 * The hook points (DESIGN.md hook table). Each is a tapable hook whose class states its
 * semantics: series vs parallel, bail (first non-undefined result ends the call), waterfall
 * (each tap transforms the value). Only the kernel calls them. Taps registered through a
 * plugin context return a disposer, and an error thrown by a tap is re-raised as a
 * {@link PluginError} naming the plugin and the hook.
 */
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook } from "tapable";
import type { AgentEvent } from "./events.js";
import type { AnyTool, ToolResult } from "./tools.js";
import type { Agent } from "./agent.js";
import type { Disposer } from "./registry.js";
import { oneLine } from "./kit/one-line.js";
import { nearestName } from "./kit/nearest-name.js";

/**
 * An error raised inside a plugin, labelled with the plugin and the hook (or `setup`). Its
 * message keeps only the first line of the cause's: it becomes a one-line notice, and a plugin's
 * message may carry a stack or a dump. The whole error stays in `cause`.
 */
export class PluginError extends Error {
  readonly plugin: string;
  readonly hook: string;
  override readonly cause: unknown;
  constructor(plugin: string, hook: string, cause: unknown) {
    super(`plugin "${plugin}" failed in ${hook}: ${oneLine(cause)}`);
    this.name = "PluginError";
    this.plugin = plugin;
    this.hook = hook;
    this.cause = cause;
  }
}

/** Passed to `systemPrompt` taps. */
export interface SystemPromptInfo {
  cwd: string;
  projectRoot: string;
  /** True for subagents with `context: minimal`. */
  minimal?: boolean;
}

/** Every hook payload can show a line to the user: a `notice` event in the running turn. */
export interface HookNotice {
  notice(text: string): void;
}

/** Passed to `sessionStart` taps; `addContext` text reaches the model as a `<system-note>`. */
export interface SessionStartInfo extends HookNotice {
  agent: Agent;
  source: "startup" | "resume" | "clear";
  addContext(text: string): void;
}

/**
 * Passed to `sessionEnd` taps when an agent closes; `reason` is the caller's word (`exit`,
 * `resume`, `new`, `fork`, `deleted`, …). A throw is ignored: the session still closes.
 */
export interface SessionEndInfo extends HookNotice {
  agent: Agent;
  reason: string;
}

/** Passed to `userPromptSubmit` taps; `addContext` text is sent with the prompt. */
export interface PromptInfo extends HookNotice {
  agent: Agent;
  prompt: string;
  addContext(text: string): void;
}
/** `block` refuses the prompt (stop reason `blocked`); `halt` ends the turn (`hook_stopped`). */
export type PromptDecision = { action: "block" | "halt"; reason: string };

/** One tool call as hooks see it. */
export interface ToolCallInfo extends HookNotice {
  agent: Agent;
  tool: AnyTool;
  tool_use_id: string;
  input: unknown;
  /** Set by `postToolUse` taps to end the turn after this round (`hook_stopped`). */
  halt(reason: string): void;
}
/**
 * A `preToolUse` decision. `deny` wins over everything but the project boundary; `allow` skips
 * the mode and allow rules but not deny rules; `ask` forces a prompt. `updatedInput` replaces
 * the call's input (it is validated again).
 */
export interface PreToolDecision {
  decision?: "allow" | "deny" | "ask";
  reason?: string;
  updatedInput?: unknown;
}

/** Passed to `stop` / `subagentStop` taps when a reply has no tool calls (§14 Stop). */
export interface StopInfo extends HookNotice {
  agent: Agent;
  /** True when a stop hook already sent the agent back in this turn. */
  stop_hook_active: boolean;
  /** The text of the reply that would end the turn. */
  last_text: string;
}
/** `block` sends `reason` back to the model as feedback and continues (at most 5 times). */
export type StopDecision = { action: "block"; reason: string } | { action: "halt"; reason: string };

/** Passed to `preCompact` taps before a compaction (`overflow`: the provider refused the prompt as too long). */
export interface CompactInfo extends HookNotice {
  agent: Agent;
  trigger: "auto" | "manual" | "overflow";
}

/** The hook points of one host. */
export function createHooks() {
  return {
    /** Once per fresh context: transforms the list of system prompt sections. */
    systemPrompt: new AsyncSeriesWaterfallHook<[string[], SystemPromptInfo]>(["sections", "info"], "systemPrompt"),
    /** Once per fresh context: transforms the tool list (then sorted and frozen). */
    loadTools: new AsyncSeriesWaterfallHook<[AnyTool[], { agent: Agent }]>(["tools", "info"], "loadTools"),
    sessionStart: new AsyncSeriesHook<[SessionStartInfo]>(["info"], "sessionStart"),
    sessionEnd: new AsyncSeriesHook<[SessionEndInfo]>(["info"], "sessionEnd"),
    userPromptSubmit: new AsyncSeriesBailHook<[PromptInfo], PromptDecision | undefined>(["info"], "userPromptSubmit"),
    preToolUse: new AsyncSeriesBailHook<[ToolCallInfo], PreToolDecision | undefined>(["info"], "preToolUse"),
    postToolUse: new AsyncSeriesWaterfallHook<[ToolResult, ToolCallInfo]>(["result", "info"], "postToolUse"),
    stop: new AsyncSeriesBailHook<[StopInfo], StopDecision | undefined>(["info"], "stop"),
    subagentStop: new AsyncSeriesBailHook<[StopInfo], StopDecision | undefined>(["info"], "subagentStop"),
    preCompact: new AsyncSeriesHook<[CompactInfo]>(["info"], "preCompact"),
    /**
     * Every event, synchronously (trace, server bus). Must not throw or block. The event is
     * frozen (shallowly): a tap observes it, and an assignment to it throws in the tap.
     */
    event: new SyncHook<[AgentEvent, Agent]>(["event", "agent"], "event"),
  };
}
/** The host's hook points, each a tapable hook (see {@link createHooks}). */
export type Hooks = ReturnType<typeof createHooks>;
/** The name of a hook point, as in `ctx.hooks.<name>` and in {@link PluginError} messages. */
export type HookName = keyof Hooks;

type AnyTapable = {
  taps: { name: string; fn: unknown }[];
  tap(opts: { name: string; stage?: number }, fn: (...a: never[]) => unknown): void;
  tapPromise?(opts: { name: string; stage?: number }, fn: (...a: never[]) => Promise<unknown>): void;
};

type TapFn<H> = H extends SyncHook<infer A, infer R>
  ? (...args: A extends unknown[] ? A : never) => R
  : H extends AsyncSeriesWaterfallHook<infer A, infer R>
    ? (...args: A extends unknown[] ? A : never) => R | Promise<R>
    : H extends AsyncSeriesBailHook<infer A, infer R>
      ? (...args: A extends unknown[] ? A : never) => R | void | Promise<R | void>
      : H extends AsyncSeriesHook<infer A>
        ? (...args: A extends unknown[] ? A : never) => void | Promise<void>
        : never;

/** A plugin's view of one hook point: `tap` registers and returns a disposer. */
export interface HookTap<H> {
  tap(fn: TapFn<H>, opts?: { stage?: number }): Disposer;
}
/** A plugin's `ctx.hooks`: one {@link HookTap} per hook point. */
export type PluginHooks = { [K in HookName]: HookTap<Hooks[K]> };

/** A value as a problem line shows it: `the string "…"`, `number 3`, `an object`. */
function shown(v: unknown): string {
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (Array.isArray(v)) return "a list";
  if (v === null) return "null";
  return typeof v === "object" ? "an object" : `${typeof v} ${String(v)}`;
}

/** One decision object of a bail hook: `key` one of `values`, `reason` a string where required. */
function decisionProblem(r: unknown, key: string, values: string[], reasonRequired: boolean, expected: string): string | undefined {
  if (typeof r !== "object" || r === null || Array.isArray(r)) return `returned ${shown(r)}; return undefined (no opinion) or ${expected}`;
  const o = r as Record<string, unknown>;
  const v = o[key];
  if (!(v === undefined && !reasonRequired) && !values.includes(v as string)) {
    // Claude Code's hook JSON says "block" (and "approve") where a preToolUse decision says deny (allow)
    const hint = key === "decision" && v === "block" ? ': "block" is a shell hook\'s word, here it is "deny"' : "";
    return `returned ${key}: ${JSON.stringify(v) ?? "undefined"}, not one of ${values.map((x) => `"${x}"`).join(", ")}${hint}`;
  }
  if (o.reason !== undefined ? typeof o.reason !== "string" : reasonRequired) return `returned ${key}: "${String(v)}" without a string reason`;
  return undefined;
}

/**
 * What a tap's answer must be, per hook: anything else is the plugin's mistake, raised as its
 * {@link PluginError} where the hook's failure rule applies (preToolUse: the call is blocked, so a
 * guard's misspelt `deny` still fails closed; postToolUse: a notice, the result stands; others:
 * the turn ends). Without the check, a wrong answer was ignored (`{ decision: "block" }` let the
 * call run) or failed later naming no one (`out.filter is not a function`). `undefined` is always
 * accepted: a waterfall keeps the value, a bail hook goes on to the next tap.
 */
const RESULT_PROBLEMS: Partial<Record<HookName, (r: unknown) => string | undefined>> = {
  systemPrompt: (r) => (Array.isArray(r) && r.every((x) => typeof x === "string") ? undefined : `returned ${shown(r)}; return the list of sections (strings), changed or not`),
  loadTools: (r) => (Array.isArray(r) ? undefined : `returned ${shown(r)}; return the list of tools, changed or not`),
  postToolUse: (r) =>
    typeof r === "object" && r !== null && typeof (r as { content?: unknown }).content === "string"
      ? undefined
      : `returned ${shown(r)}; return the result ({ content: string, is_error? }), changed or not`,
  preToolUse: (r) => decisionProblem(r, "decision", ["allow", "deny", "ask"], false, '{ decision: "allow" | "deny" | "ask", reason?, updatedInput? }'),
  userPromptSubmit: (r) => decisionProblem(r, "action", ["block", "halt"], true, '{ action: "block" | "halt", reason }'),
  stop: (r) => decisionProblem(r, "action", ["block", "halt"], true, '{ action: "block" | "halt", reason }'),
  subagentStop: (r) => decisionProblem(r, "action", ["block", "halt"], true, '{ action: "block" | "halt", reason }'),
};

/** One hook point as one plugin sees it: taps are wrapped so that errors name the plugin. */
function tapFacade(hook: AnyTapable, name: HookName, plugin: string, track?: (d: Disposer) => void): HookTap<unknown> {
  return {
    tap(fn: (...args: unknown[]) => unknown, opts?: { stage?: number }) {
      // tapable's own tap takes (name, fn); here the name is the plugin's, and a string in
      // fn's place would only fail at the hook's first call, far from the mistake
      if (typeof fn !== "function") {
        throw new TypeError(`hooks.${name}.tap expects a function, got ${typeof fn}: the tap is named after your plugin, so write hooks.${name}.tap(fn)`);
      }
      const isSync = name === "event";
      const wrapped = isSync
        ? (...args: unknown[]) => {
            try {
              return fn(...args);
            } catch (err) {
              throw new PluginError(plugin, `hook "${name}"`, err);
            }
          }
        : async (...args: unknown[]) => {
            try {
              const result = await fn(...args);
              const bad = result === undefined ? undefined : RESULT_PROBLEMS[name]?.(result);
              if (bad) throw new PluginError(plugin, `hook "${name}"`, new TypeError(bad));
              return result;
            } catch (err) {
              if (err instanceof PluginError) throw err;
              throw new PluginError(plugin, `hook "${name}"`, err);
            }
          };
      const tapOpts = { name: plugin, stage: opts?.stage };
      if (isSync) hook.tap(tapOpts, wrapped as never);
      else hook.tapPromise!(tapOpts, wrapped as never);
      const entry = hook.taps[hook.taps.length - 1];
      const dispose = () => {
        const i = hook.taps.findIndex((t) => t === entry || t.fn === wrapped);
        if (i >= 0) {
          hook.taps.splice(i, 1);
          // tapable compiles a call function from the taps; drop it so it is rebuilt.
          (hook as unknown as { _resetCompilation(): void })._resetCompilation();
        }
      };
      track?.(dispose);
      return dispose;
    },
  } as HookTap<unknown>;
}

/**
 * A plugin's `ctx.hooks`. Each hook's facade is built at its first use, from getters on one shared
 * prototype: a plugin taps one or two of the dozen hooks, and building all of them for every
 * plugin was a third of the allocations of plugin set-up (bench/startup.mjs). The host's hooks
 * stay private: a plugin reaches them only through the wrapping facades.
 */
class HookFacades {
  static #defined = false;
  readonly #hooks: Hooks;
  readonly #plugin: string;
  readonly #track: ((d: Disposer) => void) | undefined;
  constructor(hooks: Hooks, plugin: string, track: ((d: Disposer) => void) | undefined) {
    this.#hooks = hooks;
    this.#plugin = plugin;
    this.#track = track;
    if (!HookFacades.#defined) HookFacades.#defineGetters(Object.keys(hooks) as HookName[]);
  }

  static #defineGetters(names: HookName[]): void {
    HookFacades.#defined = true;
    for (const name of names) {
      Object.defineProperty(HookFacades.prototype, name, {
        configurable: true,
        enumerable: true,
        get(this: HookFacades) {
          const facade = tapFacade(this.#hooks[name] as unknown as AnyTapable, name, this.#plugin, this.#track);
          Object.defineProperty(this, name, { value: facade, enumerable: true });
          return facade;
        },
      });
    }
  }
}

/**
 * Builds the per-plugin facade over the host's hooks. `track` receives the disposer of every tap
 * made through it (the host undoes them when the plugin unloads).
 */
export function pluginHooks(hooks: Hooks, plugin: string, track?: (d: Disposer) => void): PluginHooks {
  const facades = new HookFacades(hooks, plugin, track);
  // a plain-JavaScript plugin that taps a hook that does not exist (`hooks.preToolCall.tap`)
  // would fail with "Cannot read properties of undefined (reading 'tap')", naming no hook
  return new Proxy(facades, {
    get(target, key) {
      if (typeof key === "string" && !(key in target) && !NOT_HOOK_NAMES.has(key)) {
        const names = Object.keys(hooks);
        const near = nearestName(key, names);
        throw new TypeError(`ctx.hooks has no hook "${key}"${near ? `: did you mean "${near}"?` : `; the hooks are ${names.join(", ")}`}`);
      }
      // the getters read private fields, which a Proxy receiver does not have
      return Reflect.get(target, key);
    },
  }) as unknown as PluginHooks;
}

/** Names that code probing any object reads (await, JSON, inspectors, test matchers): not taken for a mistyped hook. */
const NOT_HOOK_NAMES = new Set(["then", "toJSON", "inspect", "asymmetricMatch", "nodeType", "$$typeof", "@@__IMMUTABLE_ITERABLE__@@", "@@__IMMUTABLE_RECORD__@@"]);
