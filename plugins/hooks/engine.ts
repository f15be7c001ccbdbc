/**
 * The hook set of one host and how an event runs it: personal hooks (`settings.hooks`) always,
 * shared project hooks (`settings.shared_hooks`) only once approved and pinned to their hash
 * (LARIK-REFERENCE §14). Matching hooks run in parallel; identical commands run once.
 */
import type { ChildProcess } from "node:child_process";
import { countHooks, DEFAULT_TIMEOUT_S, hooksHash, parseHooksConfig, type HookCommand, type HookEvent, type HooksConfig } from "./config.js";
import { compileMatcher } from "./matcher.js";
import { combine, parseRun, type Outcome } from "./outcome.js";
import { killGroup, runHookCommand } from "./runner.js";

/** Where a hook came from: the user's own files, or the shared project file. */
export type HookSource = "personal" | "project";

export interface EngineOptions {
  /** Raw `settings.hooks` (personal and private files). */
  personal: unknown;
  /** Raw `settings.shared_hooks` (the shared `.larik/settings.json`). */
  shared: unknown;
  /** `settings.approved_project_hooks`: the hash the user approved, if any. */
  approvedHash?: unknown;
  cwd: string;
  projectRoot: string;
  env: NodeJS.ProcessEnv;
}

/** The stdin payload fields (§14); fields that do not apply to an event are left out. */
export interface HookPayload {
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  hook_event_name?: HookEvent;
  permission_mode?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  tool_response?: { output: string; is_error: boolean };
  prompt?: string;
  stop_hook_active?: boolean;
  source?: string;
  trigger?: string;
  message?: string;
  notification_type?: string;
  reason?: string;
  agent_type?: string;
}

export class HookEngine {
  readonly personal: HooksConfig;
  readonly shared: HooksConfig;
  /** The approval pin of the shared set as it is now. */
  readonly sharedHash: string;
  /** One line per invalid entry, for start-up notices. */
  readonly problems: string[];
  #approved: boolean;
  readonly #opts: EngineOptions;
  readonly #running = new Map<ChildProcess, Promise<unknown>>();
  readonly #background = new Set<Promise<unknown>>();

  constructor(opts: EngineOptions) {
    this.#opts = opts;
    const p = parseHooksConfig(opts.personal, "hooks");
    const s = parseHooksConfig(opts.shared, "shared_hooks");
    this.personal = p.config;
    this.shared = s.config;
    this.problems = [...p.problems, ...s.problems];
    this.sharedHash = hooksHash(opts.shared);
    this.#approved = this.hasShared && opts.approvedHash === this.sharedHash;
  }

  /** True when the shared project file defines any hook. */
  get hasShared(): boolean {
    return countHooks(this.shared) > 0;
  }

  /** True when the shared hooks run (approved for their current hash). */
  get approved(): boolean {
    return this.#approved;
  }

  /** Turns the shared hooks on for this host (after `/hooks approve` saved the pin). */
  approve(): void {
    this.#approved = true;
  }

  /** Every configured hook with its source, for `/hooks`. */
  list(): { event: HookEvent; matcher?: string; hook: HookCommand; source: HookSource }[] {
    const out: { event: HookEvent; matcher?: string; hook: HookCommand; source: HookSource }[] = [];
    for (const [source, cfg] of [["personal", this.personal], ["project", this.shared]] as const) {
      for (const [event, groups] of Object.entries(cfg) as [HookEvent, HooksConfig[HookEvent]][]) {
        for (const g of groups ?? []) for (const hook of g.hooks) out.push({ event, matcher: g.matcher, hook, source });
      }
    }
    return out;
  }

  /** The hooks that run for `event` on `value` (tool name, source, trigger), deduplicated by command. */
  matching(event: HookEvent, value: string | undefined): HookCommand[] {
    const groups = [...(this.personal[event] ?? []), ...(this.#approved ? (this.shared[event] ?? []) : [])];
    const seen = new Set<string>();
    const out: HookCommand[] = [];
    for (const g of groups) {
      if (value !== undefined && !compileMatcher(g.matcher)(value)) continue;
      for (const h of g.hooks) {
        if (seen.has(h.command)) continue;
        seen.add(h.command);
        out.push(h);
      }
    }
    return out;
  }

  /** True when some hook would run for `event` (any matcher). */
  has(event: HookEvent): boolean {
    return (this.personal[event]?.length ?? 0) > 0 || (this.#approved && (this.shared[event]?.length ?? 0) > 0);
  }

  /**
   * Runs every hook matching `value` in parallel with `payload` on stdin and combines their
   * outcomes. `value` undefined means the event has no matcher (every group runs).
   */
  async fire(event: HookEvent, value: string | undefined, payload: HookPayload): Promise<Outcome> {
    const hooks = this.matching(event, value);
    if (!hooks.length) return { context: [], messages: [] };
    const full = { ...payload, cwd: this.#opts.cwd, hook_event_name: event };
    const env = { ...this.#opts.env, LARIK_PROJECT_DIR: this.#opts.projectRoot, CLAUDE_PROJECT_DIR: this.#opts.projectRoot };
    const outcomes = await Promise.all(
      hooks.map(async (h) => {
        const timeoutS = h.timeout ?? DEFAULT_TIMEOUT_S;
        const run = await runHookCommand(h.command, full, {
          cwd: this.#opts.cwd,
          env,
          timeoutMs: timeoutS * 1000,
          track: (child, done) => {
            this.#running.set(child, done);
            void done.finally(() => this.#running.delete(child));
          },
        });
        return parseRun(event, run, timeoutS);
      }),
    );
    return combine(outcomes);
  }

  /** Runs `fn` without anyone awaiting it (Notification from a sync event tap). */
  background(fn: () => Promise<unknown>): void {
    const p = fn().catch(() => {});
    this.#background.add(p);
    void p.finally(() => this.#background.delete(p));
  }

  /** Resolves when every background run has finished. */
  async idle(): Promise<void> {
    while (this.#background.size) await Promise.all([...this.#background]);
  }

  /** Kills every hook still running (plugin unload, host dispose). */
  killAll(): void {
    for (const child of this.#running.keys()) killGroup(child);
  }
}
