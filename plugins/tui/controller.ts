/**
 * The TUI's state and behaviour, kept apart from rendering so it can be driven and tested
 * without a terminal. It consumes an agent's event stream exactly as headless does, answers
 * every `permission_request` exactly once, queues prompts typed during a turn, runs slash
 * commands from the host's registry with a `ui` handle, and turns keys into edits.
 *
 * Finished output becomes {@link Item}s, appended once and never changed (the App prints them
 * through Ink's `<Static>`); everything else is the live region. Updates are coalesced by a
 * {@link FrameScheduler} (≤30 per second); keystrokes flush at once. While no turn runs nothing
 * here holds a timer.
 */
import {
  catalogEntry,
  commandErrorText,
  costOf,
  errorText,
  hasMentions,
  nearestCommand,
  PERMISSION_MODES,
  replay,
  slashCommand,
  toolInputSummary,
  type Agent,
  type AgentEvent,
  type Command,
  type CommandUi,
  type EventOf,
  type Host,
  type Message,
  type PermissionAnswer,
} from "../../kernel/index.js";
import type { Key } from "ink";
import * as ed from "./editor.js";
import { FrameScheduler } from "./frame.js";
import { keyAction, splitBurst, type KeyAction } from "./keys.js";
import { stableCut } from "./markdown.js";
import { filterCommands, needsArgs, PEER_COMMAND_NAMES } from "./palette.js";
import type { FooterInfo } from "./footer.js";
import type { PromptHistory } from "./history.js";
import { pickerEntries, type PickerEntry } from "./mentions.js";
import { todosDisplay, type Todo } from "./summary.js";
import type { ShellRun } from "./shell.js";

/** One finished piece of the conversation. Written to the terminal once. */
export type Item = { id: number; agent?: string } & (
  | { kind: "user"; text: string }
  | { kind: "command"; text: string }
  | { kind: "assistant"; text: string }
  | { kind: "thinking"; text: string; ms: number; expanded: boolean }
  | {
      kind: "tool";
      name: string;
      input: unknown;
      /** The call's one-line input summary, the kernel's (the same line headless prints). */
      summary: string;
      output: string;
      isError: boolean;
      display?: unknown;
    }
  | { kind: "notice"; text: string }
  /** A line a slash command printed: plain output, not a warning. */
  | { kind: "info"; text: string }
  | { kind: "error"; text: string }
  | { kind: "todos"; todos: Todo[] }
  | { kind: "shell"; command: string; output: string; code: number | null }
  | { kind: "banner"; text: string }
);

/** A tool call between `tool_start` and `tool_end`. */
export interface RunningTool {
  id: string;
  name: string;
  input: unknown;
  /** The call's one-line input summary (`toolInputSummary`). */
  summary: string;
  agent?: string;
  started: number;
}

/** A permission request waiting for the user, with the agent that must get the answer. */
export interface PendingPermission {
  event: EventOf<"permission_request">;
  agent: Agent;
  /** The call's one-line input summary (`toolInputSummary`). */
  summary: string;
  /** Diff preview for file-writing tools, once computed. */
  preview?: string;
}

/** The palette, the `@` picker or history search, when open. */
export type Overlay =
  | { type: "palette"; entries: Command[]; selected: number }
  | { type: "picker"; entries: PickerEntry[]; selected: number; loading: boolean }
  | { type: "search"; query: string; match?: { index: number; text: string } };

/** A snapshot for rendering; a new object after every change. */
export interface ViewState {
  items: readonly Item[];
  live: {
    /** The unfinished tail of the reply being streamed (Markdown). */
    text: string;
    thinking: string;
    thinkingStarted?: number;
    /** A tool call the model is still writing. */
    preparing?: string;
    tools: readonly RunningTool[];
  };
  running: boolean;
  turnStarted?: number;
  /** A command or `!cmd` in progress, for the status row. */
  busy?: string;
  input: ed.Buffer;
  overlay?: Overlay;
  permissions: readonly PendingPermission[];
  permissionStep: "choose" | "reason";
  permissionSelected: number;
  reason: ed.Buffer;
  queued: readonly string[];
  /** The latest todo list of this turn, shown live. */
  todos?: readonly Todo[];
  footer: FooterInfo;
  showThinking: boolean;
  hint?: string;
  /** Animation step while working (advances 4 times a second during a turn only). */
  tick: number;
  now: number;
}

/** What the controller needs from its surroundings; all optional for tests. */
export interface ControllerOptions {
  history?: PromptHistory;
  /** Raw writes to the terminal outside Ink (OSC 52). */
  write?: (s: string) => void;
  /** Project file list for the `@` picker. */
  listFiles?: (root: string) => Promise<string[]>;
  /** Runs `!cmd`. */
  runShell?: (agent: Agent, command: string, signal: AbortSignal) => Promise<ShellRun>;
  /** ctrl+g. */
  editExternally?: (text: string) => { text: string } | { error: string };
  /** Expands `@` mentions into blocks. */
  expand?: (text: string, agent: Agent) => Promise<{ blocks: import("../../kernel/index.js").Block[]; notices: string[]; notes?: string[] }>;
  /** Diff previews for permission prompts. */
  preview?: (tool: string, input: unknown, cwd: string) => Promise<string | undefined>;
  copy?: (text: string) => Promise<void>;
  /** ms between two ctrl+c that quit. */
  doubleCtrlCMs?: number;
  /** Animation interval during turns (ms); 0 turns it off (tests). */
  tickMs?: number;
  /** Frame length for coalescing (ms). */
  frameMs?: number;
  /**
   * How long a permission prompt ignores its answer keys after it appears (ms; default
   * {@link PROMPT_TYPE_AHEAD_MS}): 0 turns the guard off (tests).
   */
  promptGuardMs?: number;
  now?: () => number;
}

/**
 * A permission prompt takes no answer for this long after it appears (ms): keys typed before
 * anyone could read it (the rest of a prompt being typed when it pops up) would otherwise answer
 * it, `a` saving an "always allow" rule. Esc (deny) and ctrl+c still work at once.
 */
export const PROMPT_TYPE_AHEAD_MS = 500;

const FILES_TTL_MS = 10_000;

/** Drives one interactive session. */
export class TuiController {
  readonly host: Host;
  agent: Agent;
  readonly #opts: ControllerOptions;
  #items: Item[] = [];
  #nextId = 1;
  #live: { text: string; committed: string; thinking: string; thinkingStarted?: number; thinkingShown: boolean; preparing?: string; tools: RunningTool[] } = {
    text: "",
    committed: "",
    thinking: "",
    thinkingShown: false,
    tools: [],
  };
  #running = false;
  #turnStarted?: number;
  #busy?: string;
  #input: ed.Buffer = ed.EMPTY;
  #overlay?: Overlay;
  #overlayDismissed = false;
  #permissions: PendingPermission[] = [];
  /** When the permission prompt now shown appeared (ms, `now`), for {@link PROMPT_TYPE_AHEAD_MS}. */
  #promptShownAt = 0;
  #permissionStep: "choose" | "reason" = "choose";
  #permissionSelected = 0;
  #reason: ed.Buffer = ed.EMPTY;
  #queued: string[] = [];
  /** Queued prompts that carry a command's data (a review's diff): no `@` mention is attached. */
  #dataPrompts = new Set<string>();
  /** What was typed for queued prompts a command made (`/review main..HEAD`), their session title. */
  #typed = new Map<string, string>();
  #todos?: Todo[];
  #todosChanged = false;
  #showThinking = false;
  #hint?: string;
  #lastCtrlC = -Infinity;
  #pasting = false;
  #costUsd: number | null = 0;
  #background = 0;
  #tick = 0;
  #ticker?: NodeJS.Timeout;
  #files?: { at: number; list: string[] };
  #filesLoading?: Promise<void>;
  #shellAbort?: AbortController;
  #snapshot: ViewState;
  #listeners = new Set<() => void>();
  #quitFns: (() => void)[] = [];
  #quitting = false;
  /** Why the TUI itself cancelled the turn when not the user's esc or ctrl+c (a signal). */
  #cancelReason?: string;
  #idleWaiters: (() => void)[] = [];
  readonly scheduler: FrameScheduler;

  constructor(host: Host, agent: Agent, opts: ControllerOptions = {}) {
    this.host = host;
    this.agent = agent;
    this.#opts = opts;
    this.scheduler = new FrameScheduler(() => this.#flush(), opts.frameMs);
    this.#costUsd = this.#initialCost();
    for (const n of host.notices) this.#push({ kind: "notice", text: n });
    this.#replayHistory(agent);
    this.#snapshot = this.#build();
  }

  // ── store protocol (useSyncExternalStore) ──────────────────────────────────────────────

  /** Subscribes to snapshot changes; returns the unsubscribe function. */
  subscribe = (fn: () => void): (() => void) => {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  };

  /** The current snapshot (same object until something changes). */
  snapshot = (): ViewState => this.#snapshot;

  /** Registers what quitting does (the App unmounts Ink). */
  onQuit(fn: () => void): () => void {
    this.#quitFns.push(fn);
    return () => {
      const i = this.#quitFns.indexOf(fn);
      if (i >= 0) this.#quitFns.splice(i, 1);
    };
  }

  /** True once quit was asked for. */
  get quitting(): boolean {
    return this.#quitting;
  }

  /** Resolves when no turn, command or queued prompt remains (tests, shutdown). */
  idle(): Promise<void> {
    if (!this.#running && !this.#busy && !this.#queued.length) return Promise.resolve();
    return new Promise((r) => this.#idleWaiters.push(r));
  }

  #notify(now = false): void {
    if (now) this.scheduler.immediate();
    else this.scheduler.request();
  }

  #flush(): void {
    this.#snapshot = this.#build();
    for (const fn of [...this.#listeners]) fn();
  }

  #build(): ViewState {
    const prevItems = this.#snapshot?.items;
    // <Static> prints items past the last length it saw, so the array must be a new object
    // whenever something was appended (a copy of references: cheap even at 5,000 items)
    const items = prevItems && prevItems.length === this.#items.length ? prevItems : this.#items.slice();
    return {
      items,
      live: {
        text: this.#live.text,
        thinking: this.#live.thinkingShown ? "" : this.#live.thinking,
        thinkingStarted: this.#live.thinkingShown ? undefined : this.#live.thinkingStarted,
        preparing: this.#live.preparing,
        tools: [...this.#live.tools],
      },
      running: this.#running,
      turnStarted: this.#turnStarted,
      busy: this.#busy,
      input: this.#input,
      overlay: this.#overlay,
      permissions: [...this.#permissions],
      permissionStep: this.#permissionStep,
      permissionSelected: this.#permissionSelected,
      reason: this.#reason,
      // a command's prompt waits under the command line typed, not its expansion (a whole diff)
      queued: this.#queued.map((q) => this.#typed.get(q) ?? q),
      todos: this.#running && this.#todos ? [...this.#todos] : undefined,
      footer: this.footerInfo(),
      showThinking: this.#showThinking,
      hint: this.#hint,
      tick: this.#tick,
      now: this.#now(),
    };
  }

  /** The footer's current figures, read from the agent. */
  footerInfo(): FooterInfo {
    const a = this.agent;
    return {
      mode: a.checker.mode,
      model: a.spec,
      effort: a.effort,
      sandbox: a.checker.sandboxed,
      costUsd: this.#costUsd,
      contextTokens: a.lastContextTokens,
      contextWindow: a.contextWindow(),
      backgroundTasks: this.#background,
    };
  }

  #initialCost(): number | null {
    let total = 0;
    for (const [spec, v] of this.agent.usageByModel) {
      const slash = spec.indexOf("/");
      const entry = slash > 0 ? catalogEntry(this.host.providers, this.host.settings, spec.slice(0, slash), spec.slice(slash + 1)) : undefined;
      const c = costOf(v.usage, entry);
      if (c === null) return null;
      total += c;
    }
    return total;
  }

  /** The tool line's input summary: the kernel's, so that headless prints the same line. */
  #summary(tool: string, input: unknown): string {
    return toolInputSummary(this.host.tools.get(tool), input);
  }

  #push(item: DistributiveOmit<Item, "id">): void {
    this.#items.push({ ...item, id: this.#nextId++ } as Item);
  }

  /** Prints a line of command output (what `ctx.print` of commands does). */
  print(text: string): void {
    this.#push({ kind: "info", text });
    this.#notify();
  }

  // ── history replay (resume, /resume, /fork) ────────────────────────────────────────────

  /**
   * Shows `agent`'s history as the live transcript showed it: a prompt a command made appears as
   * the command line typed (`› /review main..HEAD`, its `data.typed`), not the prompt it expanded to.
   */
  #replayHistory(agent: Agent): void {
    const { all: messages, typed } = replay(agent.session.entries());
    if (!messages.length) return;
    const results = new Map<string, { content: string; is_error?: boolean }>();
    for (const m of messages) for (const b of m.blocks) if (b.type === "tool_result") results.set(b.id, b);
    this.#push({ kind: "banner", text: `session ${this.agent.session.id}: ${messages.length} messages so far` });
    for (const [i, m] of messages.entries()) {
      if (m.role === "user") {
        const line = typed.get(i);
        if (line !== undefined) {
          this.#push({ kind: "command", text: line });
          continue;
        }
        const text = m.blocks
          .filter((b) => b.type === "text" && !b.attachment)
          .map((b) => (b as { text: string }).text)
          .join("")
          .replace(/^(<system-note>[\s\S]*?<\/system-note>\s*)+/, "")
          .replace(/<hook-context[\s\S]*?<\/hook-context>\s*/g, "")
          .trim();
        if (text) this.#push({ kind: "user", text });
        continue;
      }
      for (const b of m.blocks) {
        if (b.type === "thinking" && b.text && !b.display_only) this.#push({ kind: "thinking", text: b.text, ms: b.duration_ms ?? 0, expanded: false });
        else if (b.type === "text" && b.text.trim()) this.#push({ kind: "assistant", text: b.text });
        else if (b.type === "tool_use") {
          const r = results.get(b.id);
          this.#push({ kind: "tool", name: b.name, input: b.input, summary: this.#summary(b.name, b.input), output: r?.content ?? "", isError: r?.is_error === true });
        }
      }
    }
  }

  // ── the ui handle given to commands ────────────────────────────────────────────────────

  /** The `ui` handle of {@link CommandUi}. */
  readonly ui: CommandUi = {
    switchAgent: (agent: Agent) => this.switchAgent(agent),
    setInput: (text: string) => {
      this.#setInput(ed.bufferOf(text));
      this.#notify(true);
    },
    copy: (text: string) => (this.#opts.copy ? this.#opts.copy(text) : Promise.resolve()),
    quit: () => this.quit(),
  };

  /** Makes `agent` current (after /new, /resume, /fork, /rewind) and shows its history. */
  switchAgent(agent: Agent): void {
    if (agent === this.agent) return;
    this.agent = agent;
    this.#costUsd = this.#initialCost();
    this.#todos = undefined;
    if (agent.history().length) this.#replayHistory(agent);
    else this.#push({ kind: "banner", text: `session ${agent.session.id}` });
    this.#notify();
  }

  /**
   * Ends the session: cancels a running turn and asks the App to unmount.
   * @param reason what stopped the turn, for the session and the model (`Agent.cancel`'s reason,
   *   e.g. `interrupted: stopped by SIGTERM`); "interrupted by user" when not given
   */
  quit(reason?: string): void {
    if (this.#quitting) return;
    this.#quitting = true;
    this.#cancelReason = reason;
    this.agent.cancel(reason);
    this.#shellAbort?.abort();
    this.#stopTicker();
    this.scheduler.cancel();
    this.#flush();
    // a copy: unmounting the App unregisters its callback while we iterate
    for (const fn of [...this.#quitFns]) fn();
  }

  // ── prompts, commands, turns ───────────────────────────────────────────────────────────

  /**
   * Handles submitted composer text: `!cmd` runs in the shell, `/name args` runs a registered
   * command, anything else is a prompt (queued while a turn or command runs).
   */
  async submit(raw: string): Promise<void> {
    const text = raw.replace(/\s+$/, "");
    if (!text.trim()) return;
    void this.#opts.history?.add(text);
    if (text.startsWith("!")) {
      await this.runShellCommand(text.slice(1).trim());
      return;
    }
    // the kernel's rule, as in `larik -p`: `/README.md is stale` is a prompt, `/cots` a typo
    const line = slashCommand(this.host.commands, text);
    if (line) {
      const cmd = line.command ?? this.host.commands.get(PEER_COMMAND_NAMES[line.name] ?? "");
      if (cmd) {
        await this.runCommand(cmd, line.args);
        return;
      }
      const near = nearestCommand(this.host.commands, line.name);
      // as -p says: how to send the text to the model after all
      const list = "type / to list them; a leading space sends the text as a prompt";
      const hint = near ? `did you mean /${near}? (${list})` : list;
      this.#push({ kind: "error", text: `unknown command /${line.name}: ${hint}` });
      this.#notify();
      return;
    }
    if (this.#running || this.#busy) {
      this.#queued.push(text);
      this.#notify();
      return;
    }
    await this.#turn(text);
  }

  /** Runs a slash command with the `ui` handle; a returned prompt is sent as a turn. */
  async runCommand(cmd: Command, args: string): Promise<void> {
    const label = `/${cmd.name}${args ? ` ${args}` : ""}`;
    if (cmd.idleOnly && (this.#running || this.#busy)) {
      this.#push({ kind: "error", text: `${label}: cannot run while ${this.#busy ?? "a turn"} is running (esc interrupts it)` });
      this.#notify();
      return;
    }
    this.#push({ kind: "command", text: label });
    const wasBusy = this.#busy;
    if (cmd.idleOnly) this.#busy = label;
    this.#notify();
    let prompt: string | undefined;
    let mentions = true;
    try {
      const r = await cmd.run({ host: this.host, agent: this.agent, args, print: (t) => this.print(t), ui: this.ui });
      prompt = r?.prompt;
      mentions = r?.mentions !== false;
    } catch (err) {
      this.#push({ kind: "error", text: commandErrorText(cmd, err) });
    } finally {
      if (cmd.idleOnly) this.#busy = wasBusy;
      this.#notify();
    }
    if (this.#quitting) return;
    if (prompt !== undefined) {
      if (this.#running || this.#busy) {
        this.#queued.push(prompt);
        if (!mentions) this.#dataPrompts.add(prompt);
        this.#typed.set(prompt, label);
      } else await this.#turn(prompt, false, mentions, label);
    } else this.#drain();
  }

  /** Runs `!cmd`: output shown now and sent with the next prompt. */
  async runShellCommand(command: string): Promise<void> {
    if (!command) return;
    if (!this.#opts.runShell) {
      this.#push({ kind: "error", text: "! commands are not available here" });
      this.#notify();
      return;
    }
    const ctrl = new AbortController();
    this.#shellAbort = ctrl;
    this.#busy = `!${command}`;
    this.#notify();
    try {
      const r = await this.#opts.runShell(this.agent, command, ctrl.signal);
      if (r.refused) this.#push({ kind: "error", text: `!${command}: refused: ${r.refused}` });
      else {
        this.#push({ kind: "shell", command, output: r.output, code: r.code });
        const { shellNote } = await import("./shell.js");
        this.agent.addNote(shellNote(r));
      }
    } finally {
      this.#shellAbort = undefined;
      this.#busy = undefined;
      this.#notify();
      this.#drain();
    }
  }

  /** Runs one turn; `typed` is the command line that made `text`, stored for session titles. */
  async #turn(text: string, showPrompt = true, mentions = true, typed?: string): Promise<void> {
    const agent = this.agent;
    this.#running = true;
    this.#turnStarted = this.#now();
    this.#todosChanged = false;
    if (showPrompt) this.#push(typed !== undefined ? { kind: "command", text: typed } : { kind: "user", text });
    this.#startTicker();
    this.#notify();
    try {
      let prompt: string | import("../../kernel/index.js").Block[] = text;
      let notes: string[] = [];
      if (mentions && this.#opts.expand && hasMentions(text)) {
        const x = await this.#opts.expand(text, agent);
        for (const n of x.notices) this.#push({ kind: "notice", text: n });
        if (x.blocks.length > 1) prompt = x.blocks;
        notes = x.notes ?? [];
      }
      for await (const ev of agent.run(prompt, { notes, ...(typed ? { typed } : {}) })) this.onEvent(ev, agent);
    } catch (err) {
      this.#push({ kind: "error", text: errorText(err) });
    } finally {
      this.#endTurn(agent);
    }
    this.#drain();
  }

  #endTurn(agent: Agent): void {
    if (this.#live.text.trim()) this.#push({ kind: "assistant", text: this.#live.text });
    this.#resetLive();
    this.#live.tools = [];
    const head = this.#permissions[0];
    this.#permissions = this.#permissions.filter((p) => p.agent !== agent);
    if (this.#permissions[0] !== head) this.#promptShownAt = this.#now();
    this.#permissionStep = "choose";
    this.#permissionSelected = 0;
    if (this.#todosChanged && this.#todos?.length) this.#push({ kind: "todos", todos: this.#todos });
    this.#todosChanged = false;
    this.#running = false;
    this.#turnStarted = undefined;
    this.#stopTicker();
    this.#notify();
  }

  #drain(): void {
    if (this.#quitting) return;
    if (!this.#running && !this.#busy && this.#queued.length) {
      const next = this.#queued.shift()!;
      const data = this.#dataPrompts.delete(next);
      const typed = this.#typed.get(next);
      this.#typed.delete(next);
      // a command's prompt shows as its command line, where a resumed transcript shows it
      void this.#turn(next, !data || typed !== undefined, !data, typed);
      return;
    }
    if (!this.#running && !this.#busy && !this.#queued.length) {
      for (const fn of this.#idleWaiters.splice(0)) fn();
    }
  }

  #resetLive(): void {
    this.#live.text = "";
    this.#live.committed = "";
    this.#live.thinking = "";
    this.#live.thinkingStarted = undefined;
    this.#live.thinkingShown = false;
    this.#live.preparing = undefined;
  }

  #startTicker(): void {
    const ms = this.#opts.tickMs ?? 250;
    if (ms <= 0 || this.#ticker) return;
    this.#ticker = setInterval(() => {
      this.#tick++;
      this.#notify();
    }, ms);
  }

  #stopTicker(): void {
    if (this.#ticker) clearInterval(this.#ticker);
    this.#ticker = undefined;
  }

  /** True while a timer of the controller exists (the idle check of the benchmark and tests). */
  get hasTimers(): boolean {
    return this.#ticker !== undefined || this.scheduler.pending;
  }

  // ── events ─────────────────────────────────────────────────────────────────────────────

  #finishThinking(now: number): void {
    if (this.#live.thinkingShown || !this.#live.thinking.trim()) return;
    const ms = now - (this.#live.thinkingStarted ?? now);
    this.#push({ kind: "thinking", text: this.#live.thinking, ms, expanded: this.#showThinking });
    this.#live.thinkingShown = true;
  }

  /** Applies one agent event from `agent`'s stream. */
  onEvent(ev: AgentEvent, agent: Agent = this.agent): void {
    const now = this.#now();
    const sub = ev.agent;
    switch (ev.type) {
      case "text_delta": {
        if (sub) break;
        this.#finishThinking(now);
        this.#live.preparing = undefined;
        this.#live.text += ev.text;
        const cut = stableCut(this.#live.text);
        if (cut > 0) {
          const done = this.#live.text.slice(0, cut);
          this.#push({ kind: "assistant", text: done });
          this.#live.committed += done;
          this.#live.text = this.#live.text.slice(cut);
        }
        break;
      }
      case "thinking_delta":
        if (sub) break;
        this.#live.thinkingStarted ??= now;
        this.#live.thinking += ev.text;
        break;
      case "tool_call_streaming":
        this.#live.preparing = sub ? `[${sub}] ${ev.tool_name}` : ev.tool_name;
        break;
      case "assistant_message": {
        if (sub) break;
        const m = ev.message;
        // a reply cut short ends with the transcript's marker block (`[interrupted by user]`,
        // `[response cut off by an error]`): the `done` notice or the `error` line says that once
        const blocks = ev.partial ? m.blocks.slice(0, -1) : m.blocks;
        if (!this.#live.thinkingShown) {
          for (const b of blocks) {
            if (b.type === "thinking" && b.text.trim() && !b.redacted) {
              this.#push({ kind: "thinking", text: b.text, ms: b.duration_ms ?? now - (this.#live.thinkingStarted ?? now), expanded: this.#showThinking });
            }
          }
        }
        const full = blocks
          .filter((b) => b.type === "text")
          .map((b) => (b as { text: string }).text)
          .join("");
        // the assembled message is the truth (invariant 10); deltas already printed stay
        const committed = this.#live.committed;
        let same = 0;
        while (same < committed.length && same < full.length && committed[same] === full[same]) same++;
        const rest = full.slice(same);
        if (rest.trim()) this.#push({ kind: "assistant", text: rest });
        this.#resetLive();
        break;
      }
      case "tool_start":
        this.#live.preparing = undefined;
        this.#live.tools.push({ id: ev.tool_id, name: ev.tool_name, input: ev.input, summary: this.#summary(ev.tool_name, ev.input), agent: sub, started: now });
        break;
      case "tool_end": {
        this.#live.tools = this.#live.tools.filter((t) => t.id !== ev.tool_id);
        const todos = todosDisplay(ev.display);
        if (todos && !sub) {
          this.#todos = todos;
          this.#todosChanged = true;
        }
        const input = ev.input as { run_in_background?: unknown } | undefined;
        if (ev.tool_name === "bash" && input?.run_in_background === true && !ev.is_error) this.#background++;
        this.#push({
          kind: "tool",
          name: ev.tool_name,
          input: ev.input,
          summary: this.#summary(ev.tool_name, ev.input),
          output: ev.output,
          isError: ev.is_error,
          display: ev.display,
          agent: sub,
        });
        break;
      }
      case "permission_request": {
        const p: PendingPermission = { event: ev, agent, summary: this.#summary(ev.tool_name, ev.input) };
        this.#permissions.push(p);
        if (this.#permissions.length === 1) {
          this.#permissionStep = "choose";
          this.#permissionSelected = 0;
          this.#promptShownAt = this.#now();
        }
        if (this.#opts.preview) {
          void this.#opts.preview(ev.tool_name, ev.input, ev.cwd).then((d) => {
            if (d) {
              p.preview = d;
              this.#notify();
            }
          });
        }
        break;
      }
      case "usage":
        if (!sub) this.#costUsd = ev.usage.cost_usd;
        break;
      case "compacted": {
        const c = ev.compaction;
        this.#push({ kind: "notice", agent: sub, text: `compacted (${c.trigger}): context ${c.before_tokens} → ${c.after_tokens} tokens, ${c.saved_tokens} freed` });
        break;
      }
      case "notice":
        this.#push({ kind: "notice", agent: sub, text: ev.text });
        break;
      case "error":
        this.#push({ kind: "error", agent: sub, text: ev.text });
        break;
      case "done":
        if (sub) break;
        if (this.#live.text.trim()) this.#push({ kind: "assistant", text: this.#live.text });
        this.#resetLive();
        // max_turns, max_tokens and refusal arrive as their own error or notice event
        if (ev.stop_reason === "interrupted") this.#push({ kind: "notice", text: this.#cancelReason ?? "interrupted by user" });
        break;
      case "task_done":
        this.#background = Math.max(0, this.#background - 1);
        this.#push({ kind: "notice", text: `◆ background ${ev.tool_id}${ev.agent ? ` (${ev.agent})` : ""} ${ev.stop_reason}` });
        break;
      default:
        break;
    }
    this.#notify();
  }

  // ── permissions ────────────────────────────────────────────────────────────────────────

  /**
   * Answers the first queued permission request, exactly once. A request the kernel already
   * dropped (the turn ended) is reported, not thrown.
   */
  answerPermission(answer: PermissionAnswer): void {
    const p = this.#permissions.shift();
    if (!p) return;
    this.#permissionStep = "choose";
    this.#permissionSelected = 0;
    this.#reason = ed.EMPTY;
    this.#promptShownAt = this.#now(); // the next one's, if one is queued
    try {
      p.agent.respond(p.event.request_id, answer);
      if (answer.allow && answer.always && p.event.suggested_rule) this.#push({ kind: "notice", text: `always allowing ${p.event.suggested_rule} in this project` });
    } catch (err) {
      this.#push({ kind: "notice", text: errorText(err) });
    }
    this.#notify(true);
  }

  /** The controller's clock (ms): `opts.now`, which tests set, else `Date.now`. */
  #now(): number {
    return (this.#opts.now ?? Date.now)();
  }

  #permissionKey(a: KeyAction, input: string): void {
    const p = this.#permissions[0]!;
    if (this.#permissionStep === "reason") {
      switch (a.type) {
        case "submit": {
          const reason = this.#reason.text.trim();
          this.answerPermission({ allow: false, reason: reason || undefined });
          return;
        }
        case "escape":
          this.#permissionStep = "choose";
          this.#reason = ed.EMPTY;
          break;
        case "ctrlC":
          this.#ctrlC();
          return;
        default:
          this.#reason = this.#edit(this.#reason, a);
      }
      this.#notify(true);
      return;
    }
    const options = p.event.suggested_rule ? ["allow", "always", "deny"] : ["allow", "deny"];
    const choose = (o: string) => {
      if (o === "allow") this.answerPermission({ allow: true });
      else if (o === "always") this.answerPermission({ allow: true, always: true });
      else {
        this.#permissionStep = "reason";
        this.#reason = ed.EMPTY;
        this.#notify(true);
      }
    };
    // type-ahead: keys before the prompt could be read answer nothing (esc and ctrl+c still do)
    const guard = this.#opts.promptGuardMs ?? PROMPT_TYPE_AHEAD_MS;
    if (a.type !== "escape" && a.type !== "ctrlC" && this.#now() - this.#promptShownAt < guard) return;
    const k = input.toLowerCase();
    if (a.type === "insert") {
      if (k === "y" || k === "1") return choose("allow");
      if ((k === "a" || k === "2") && options.includes("always")) return choose("always");
      if (k === "n" || k === String(options.length)) return choose("deny");
      return;
    }
    switch (a.type) {
      case "submit":
        return choose(options[this.#permissionSelected] ?? "allow");
      case "up":
        this.#permissionSelected = (this.#permissionSelected + options.length - 1) % options.length;
        break;
      case "down":
      case "tab":
        this.#permissionSelected = (this.#permissionSelected + 1) % options.length;
        break;
      case "escape":
        this.answerPermission({ allow: false });
        return;
      case "ctrlC":
        this.#ctrlC();
        return;
      default:
        return;
    }
    this.#notify(true);
  }

  // ── keys ───────────────────────────────────────────────────────────────────────────────

  /** The `useInput` handler. */
  handleKey = (input: string, key: Key): void => {
    if (this.#quitting) return;
    const a = keyAction(input, key);
    if (a.type === "pasteStart") {
      this.#pasting = true;
      return;
    }
    if (a.type === "pasteEnd") {
      this.#pasting = false;
      return;
    }
    if (this.#pasting) {
      // inside a bracketed paste every key is text, newlines included
      const text = a.type === "submit" || a.type === "newline" ? "\n" : input;
      if (this.#permissions.length && this.#permissionStep === "reason") this.#reason = ed.insert(this.#reason, text);
      else if (!this.#permissions.length) this.#setInput(ed.insert(this.#input, text));
      this.#notify(true);
      return;
    }
    // keys that came in one chunk go where they would have gone one by one: the composer,
    // history search, a denial's reason
    const burst = a.type === "insert" ? splitBurst(a.text) : undefined;
    if (burst) {
      // but never answer a permission prompt: its Enter would pick the highlighted option, so
      // `n` + a reason + Enter sent at once would allow the call
      if (this.#permissions.length && this.#permissionStep === "choose") return;
      const none: Key = { ...key, return: false, tab: false, backspace: false, ctrl: false };
      for (const k of burst) this.handleKey(k.input, { ...none, ...k.key });
      return;
    }
    if (a.type !== "ctrlC" && this.#hint) this.#hint = undefined;
    if (this.#permissions.length) {
      this.#permissionKey(a, input);
      return;
    }
    if (this.#overlay?.type === "search") {
      this.#searchKey(a);
      return;
    }
    this.#composerKey(a);
  };

  #edit(b: ed.Buffer, a: KeyAction): ed.Buffer {
    switch (a.type) {
      case "insert":
        return ed.insert(b, a.text);
      case "newline":
        return ed.insert(b, "\n");
      case "backspace":
        return ed.backspace(b);
      case "deleteForward":
        return ed.deleteForward(b);
      case "deleteWord":
        return ed.deleteWord(b);
      case "left":
        return ed.left(b);
      case "right":
        return ed.right(b);
      case "wordLeft":
        return ed.wordLeft(b);
      case "wordRight":
        return ed.wordRight(b);
      case "home":
        return ed.home(b);
      case "end":
        return ed.end(b);
      case "killToStart":
        return ed.killToStart(b);
      case "killToEnd":
        return ed.killToEnd(b);
      default:
        return b;
    }
  }

  #setInput(b: ed.Buffer): void {
    if (b.text !== this.#input.text) this.#overlayDismissed = false;
    this.#input = b;
    this.#refreshOverlay();
  }

  #refreshOverlay(): void {
    if (this.#overlay?.type === "search") return;
    const text = this.#input.text;
    const slash = /^\/(\S*)$/.exec(text);
    if (slash && !this.#overlayDismissed) {
      const entries = filterCommands(this.host.commands.list(), slash[1]!);
      const prev = this.#overlay?.type === "palette" ? this.#overlay.selected : 0;
      this.#overlay = { type: "palette", entries, selected: Math.min(prev, Math.max(0, entries.length - 1)) };
      return;
    }
    const mention = ed.mentionAt(this.#input);
    if (mention && !this.#overlayDismissed && this.#opts.listFiles) {
      const now = this.#now();
      const fresh = this.#files && now - this.#files.at < FILES_TTL_MS;
      if (!fresh && !this.#filesLoading) {
        const list = this.#opts.listFiles;
        this.#filesLoading = list(this.host.cwd)
          .then((l) => {
            this.#files = { at: this.#now(), list: l };
          })
          .catch(() => {
            this.#files = { at: this.#now(), list: [] };
          })
          .finally(() => {
            this.#filesLoading = undefined;
            this.#refreshOverlay();
            this.#notify(true);
          });
      }
      const entries = this.#files ? pickerEntries(this.#files.list, mention.query) : [];
      const prev = this.#overlay?.type === "picker" ? this.#overlay.selected : 0;
      this.#overlay = { type: "picker", entries, selected: Math.min(prev, Math.max(0, entries.length - 1)), loading: !this.#files };
      return;
    }
    this.#overlay = undefined;
  }

  #composerKey(a: KeyAction): void {
    const ov = this.#overlay;
    switch (a.type) {
      case "ctrlC":
        this.#ctrlC();
        return;
      case "ctrlD":
        if (!this.#input.text) {
          this.quit();
          return;
        }
        this.#setInput(ed.deleteForward(this.#input));
        break;
      case "escape":
        if (ov) {
          this.#overlay = undefined;
          this.#overlayDismissed = true;
        } else if (this.#running || this.agent.running) this.agent.cancel(); // a turn, or /compact
        else if (this.#shellAbort) this.#shellAbort.abort();
        break;
      case "submit": {
        if (ov?.type === "picker" && ov.entries.length) {
          this.#completeMention(ov.entries[ov.selected]!);
          break;
        }
        if (ov?.type === "palette" && ov.entries.length) {
          const cmd = ov.entries[ov.selected]!;
          if (needsArgs(cmd)) {
            this.#setInput(ed.bufferOf(`/${cmd.name} `));
            break;
          }
          this.#setInput(ed.EMPTY);
          this.#overlay = undefined;
          void this.#opts.history?.add(`/${cmd.name}`);
          this.#notify(true);
          void this.runCommand(cmd, "");
          return;
        }
        const text = this.#input.text;
        this.#setInput(ed.EMPTY);
        this.#overlay = undefined;
        this.#opts.history?.reset();
        this.#notify(true);
        void this.submit(text);
        return;
      }
      case "insert": {
        this.#setInput(ed.insert(this.#input, a.text));
        this.#opts.history?.reset();
        break;
      }
      case "tab":
        if (ov?.type === "picker" && ov.entries.length) this.#completeMention(ov.entries[ov.selected]!);
        else if (ov?.type === "palette" && ov.entries.length) {
          const cmd = ov.entries[ov.selected]!;
          this.#setInput(ed.bufferOf(`/${cmd.name} `));
        }
        break;
      case "up":
      case "down": {
        if (ov && ov.type !== "search" && ov.entries.length) {
          const n = ov.entries.length;
          ov.selected = (ov.selected + (a.type === "up" ? n - 1 : 1)) % n;
          this.#overlay = { ...ov };
          break;
        }
        const multi = this.#input.text.includes("\n");
        if (multi && a.type === "up" && !ed.onFirstLine(this.#input)) {
          this.#input = ed.up(this.#input);
          break;
        }
        if (multi && a.type === "down" && !ed.onLastLine(this.#input)) {
          this.#input = ed.down(this.#input);
          break;
        }
        const h = this.#opts.history;
        const v = a.type === "up" ? h?.prev(this.#input.text) : h?.next();
        if (v !== undefined) {
          this.#input = ed.bufferOf(v);
          this.#overlay = undefined;
          this.#overlayDismissed = true;
        }
        break;
      }
      case "cycleMode": {
        const i = PERMISSION_MODES.indexOf(this.agent.checker.mode);
        this.agent.checker.mode = PERMISSION_MODES[(i + 1) % PERMISSION_MODES.length]!;
        break;
      }
      case "historySearch":
        this.#overlay = { type: "search", query: "", match: this.#opts.history?.search("") };
        break;
      case "externalEditor": {
        const r = this.#opts.editExternally?.(this.#input.text);
        if (!r) break;
        if ("error" in r) this.#push({ kind: "error", text: r.error });
        else this.#setInput(ed.bufferOf(r.text));
        break;
      }
      case "toggleThinking": {
        this.#showThinking = !this.#showThinking;
        // printed output is never redrawn: showing thinking reprints the latest thought in full
        if (this.#showThinking) {
          const last = [...this.#items].reverse().find((i) => i.kind === "thinking");
          if (last && last.kind === "thinking") this.#push({ kind: "thinking", text: last.text, ms: last.ms, expanded: true });
        }
        this.#hint = this.#showThinking ? "thinking shown (ctrl+o hides)" : "thinking collapsed (ctrl+o shows)";
        break;
      }
      case "none":
        return;
      default:
        this.#setInput(this.#edit(this.#input, a));
        if (a.type !== "left" && a.type !== "right" && a.type !== "home" && a.type !== "end") this.#opts.history?.reset();
    }
    this.#notify(true);
  }

  #completeMention(entry: PickerEntry): void {
    this.#setInput(ed.completeMention(this.#input, entry.path, !entry.dir));
  }

  #searchKey(a: KeyAction): void {
    const ov = this.#overlay as Extract<Overlay, { type: "search" }>;
    const h = this.#opts.history;
    switch (a.type) {
      case "insert":
      case "backspace": {
        const query = a.type === "insert" ? ov.query + a.text : ov.query.slice(0, -1);
        this.#overlay = { type: "search", query, match: h?.search(query) };
        break;
      }
      case "historySearch":
      case "up": {
        const older = ov.match ? h?.search(ov.query, ov.match.index) : undefined;
        if (older) this.#overlay = { ...ov, match: older };
        break;
      }
      case "submit":
      case "tab":
      case "right":
      case "end":
        this.#overlay = undefined;
        if (ov.match) this.#setInput(ed.bufferOf(ov.match.text));
        break;
      case "escape":
      case "ctrlC":
        this.#overlay = undefined;
        this.#refreshOverlay();
        break;
      default:
        break;
    }
    this.#notify(true);
  }

  #ctrlC(): void {
    const now = this.#now();
    if (now - this.#lastCtrlC < (this.#opts.doubleCtrlCMs ?? 2000)) {
      this.quit();
      return;
    }
    this.#lastCtrlC = now;
    if (this.#input.text) this.#setInput(ed.EMPTY);
    else if (this.#running || this.agent.running) this.agent.cancel();
    else if (this.#shellAbort) this.#shellAbort.abort();
    this.#hint = "press ctrl+c again to quit";
    this.#notify(true);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
