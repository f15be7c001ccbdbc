/**
 * The agent loop (LARIK-REFERENCE §2). `run(prompt)` runs one turn and returns its events:
 * model rounds until a response has no tool calls (at most `max_turns`), tools authorized in
 * order and executed in batches, every tool_use answered exactly once, the transcript appended
 * as it goes. One turn at a time; the loop knows nothing of any UI.
 */
import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { AgentEventSchema, type AgentEvent, type PermissionAnswer, type StopReason, type UsageInfo } from "./events.js";
import type { Host } from "./host.js";
import { Channel } from "./kit/channel.js";
import { isoTime } from "./kit/time.js";
import { PluginError, type ToolCallInfo } from "./hooks.js";
import { PermissionChecker, type PermissionMode, PERMISSION_MODES } from "./permission.js";
import {
  addUsage,
  emptyUsage,
  MessageSchema,
  ProviderError,
  UsageSchema,
  type Block,
  type Effort,
  type Message,
  type ModelStopReason,
  type Provider,
  type StreamEvent,
  type ToolResultBlock,
  type ToolUseBlock,
  type Usage,
} from "./types.js";
import { invalidArguments, invalidJson, parseToolArguments, permissionCall, toolSpec, type AnyTool, type FileTracker, type ToolContext, type ToolResult } from "./tools.js";
import { isPrompt, promptsOf, pushMerged, repairToolResults, replay, type SessionPrompt, type SessionHandle, type SessionMeta, type NewEntry, type SessionEntry } from "./session.js";
import { costOf, DEFAULT_CONTEXT_WINDOW, catalogEntry } from "./models.js";
import type { CatalogEntry } from "./registries.js";
import { openModel, providerWho, streamOf } from "./fallback.js";
import { nearestName } from "./kit/nearest-name.js";
import { startupMark } from "./kit/startup-probe.js";
import { ConfigError, errorText, noticeText } from "./kit/one-line.js";
import { createCheckpointStore, DEFAULT_CHECKPOINT_RETENTION_DAYS, undoNote, type CheckpointStore } from "./checkpoint.js";
import { capOutput, toSafeText } from "./kit/output.js";
import { buildSystemPrompt } from "./prompt.js";
import { dataDir } from "./paths.js";
import { inheritSidecars, sidecarDirOf } from "./sidecars.js";
import { DEFAULT_MAX_TURNS, updatePrivateProjectSettings } from "./config.js";
import { autoCompact, compactContext, compactOrReport, type CompactionRun, type CompactResult } from "./compaction.js";

/** What {@link Agent.open} (and `host.openAgent`, without `host`) takes; every field is optional but `host`. */
export interface AgentOptions {
  host: Host;
  /** A model spec (`provider/model`, bare id or role); default from settings or keys. */
  model?: string;
  /** A ready provider (embedding, tests); skips spec resolution. Needs `model`. */
  provider?: Provider;
  /** Permission mode (§4); default `settings.mode`, else `default`. */
  mode?: PermissionMode;
  /** Reasoning effort (§1 `--effort`); default `settings.effort`, else the provider's own. */
  effort?: Effort;
  /** Resume this session id (or unique prefix). */
  resume?: string;
  /** Continue the newest session of this directory. */
  continue?: boolean;
  /** With resume/continue: branch into a new session instead of appending. */
  fork?: boolean;
  /** An already open session to continue in (a branch just made by `/fork` or `/rewind`). */
  session?: SessionHandle;
  /** Model rounds per turn (settings `max_turns`, default 200). */
  maxTurns?: number;
  /** Where `/undo` snapshots go; default the file store under the data folder (§8). */
  checkpoints?: CheckpointStore;
  /** Label for forwarded subagent events. */
  label?: string;
  /**
   * Open the agent even when its model cannot be opened (none configured, its key missing, an
   * unknown provider): for a front end that may only run a slash command needing no model
   * (`larik -p /cost`). The problem is kept in {@link Agent.modelError}, a model request fails
   * with it, and a new session is kept in memory, not stored (nothing to continue with `-c`).
   */
  modelOptional?: boolean;
}

const INTERRUPTED = "interrupted by user";
/** How long `close` waits for a cancelled turn to finish writing (ms). */
const CLOSE_WAIT_MS = 5_000;

const MAX_STOP_BLOCKS = 5;

/** The provider of an agent whose model could not be opened: every request fails with why. */
function unopenedProvider(err: ConfigError): Provider {
  return {
    name: "",
    async *stream() {
      throw err;
    },
  };
}

/** An in-memory session for hosts without a store. */
class MemorySession implements SessionHandle {
  readonly id: string;
  readonly location = "(memory)";
  readonly meta: SessionMeta;
  readonly warnings: string[] = [];
  #entries: SessionEntry[] = [];
  constructor(meta: SessionMeta) {
    this.meta = meta;
    this.id = `mem-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    this.append({ type: "meta", meta });
  }
  entries() {
    return this.#entries;
  }
  append(entry: NewEntry): SessionEntry {
    const prev = this.#entries[this.#entries.length - 1];
    const full = { ...entry, id: `${this.id}-${this.#entries.length}`, parent_id: prev?.id ?? null, ts: isoTime() } as SessionEntry;
    this.#entries.push(full);
    return full;
  }
  async close() {}
}

class Tracker implements FileTracker {
  #reads = new Map<string, number>();
  recordRead(p: string, m: number) {
    this.#reads.set(p, m);
  }
  lastRead(p: string) {
    return this.#reads.get(p);
  }
}

interface PendingPermission {
  resolve(a: PermissionAnswer): void;
  suggested?: string;
}

/**
 * One conversation on one session: the loop of LARIK-REFERENCE §2. Open it with
 * `host.openAgent(opts)`; `run(prompt)` runs one turn and yields its events (docs/architecture.md
 * "The event contract"); the front end answers each `permission_request` with `respond`.
 */
export class Agent {
  readonly host: Host;
  session: SessionHandle;
  provider: Provider;
  /** Provider name and model id as used in specs. */
  providerName: string;
  model: string;
  effort?: Effort;
  readonly checker: PermissionChecker;
  readonly checkpoints: CheckpointStore;
  readonly files: FileTracker = new Tracker();
  readonly label?: string;
  /** The active context sent to the model. */
  messages: Message[] = [];
  /** Notes queued for the next user message (`<system-note>`). */
  readonly notes: string[] = [];
  /** Frozen per fresh context (invariant 1). */
  #system?: string;
  #tools?: AnyTool[];
  #running?: AbortController;
  /** Settles when the running turn has ended and written its last entries. */
  #turnDone?: Promise<void>;
  #pending = new Map<string, PendingPermission>();
  #permSeq = 0;
  #closeFns: (() => void)[] = [];
  /** Whether the last prompt went out with the plan-mode note, so the next one says it ended. */
  #planNoted = false;
  /** Set while a fresh context still owes its `sessionStart` hook. */
  #contextSource: "startup" | "resume" | "clear" | undefined = "startup";
  readonly maxTurns: number;
  /** Session totals by `provider/model`. */
  readonly usageByModel = new Map<string, { usage: Usage; requests: number }>();
  /**
   * Prompt size of the last request (tokens); on a resumed session, the last one the session
   * recorded (or its compaction's size) until this agent makes its own.
   */
  lastContextTokens = 0;
  #contextWindow?: number;
  /**
   * Why the model could not be opened, for an agent opened with `modelOptional`; undefined once
   * a model is open (also after {@link setModel}). Its requests fail with this error.
   */
  modelError?: ConfigError;

  private constructor(opts: {
    host: Host;
    session: SessionHandle;
    provider: Provider;
    providerName: string;
    model: string;
    effort?: Effort;
    mode: PermissionMode;
    maxTurns: number;
    checkpoints: CheckpointStore;
    label?: string;
  }) {
    this.host = opts.host;
    this.session = opts.session;
    this.provider = opts.provider;
    this.providerName = opts.providerName;
    this.model = opts.model;
    this.effort = opts.effort;
    this.maxTurns = opts.maxTurns;
    this.checkpoints = opts.checkpoints;
    this.label = opts.label;
    const perms = opts.host.settings.permissions ?? {};
    this.checker = new PermissionChecker({
      mode: opts.mode,
      allow: perms.allow,
      deny: perms.deny,
      cwd: opts.host.cwd,
      projectRoot: opts.host.projectRoot,
      sandboxed: opts.host.sandbox !== undefined,
      env: opts.host.env,
    });
  }

  /**
   * Resolves the model, opens (or creates, resumes, forks) the session and rebuilds its context.
   * @throws ConfigError with a one-line message for a bad spec, a missing key, a bad mode.
   */
  static async open(opts: AgentOptions): Promise<Agent> {
    const { host } = opts;
    const s = host.settings;
    const mode = opts.mode ?? (s.mode as PermissionMode | undefined) ?? "default";
    if (!PERMISSION_MODES.includes(mode)) {
      throw new ConfigError(`unknown mode "${mode}": use one of ${PERMISSION_MODES.join(", ")}`);
    }
    const store = host.sessionStore;
    let prior: SessionHandle | undefined = opts.session;
    if ((opts.resume || opts.continue) && !store) throw new ConfigError("cannot resume: no session store plugin is loaded");
    if (opts.fork && !opts.resume && !opts.continue) throw new ConfigError("--fork needs a session to branch from: add -c or --resume <id>");
    if (!prior && store && (opts.resume || opts.continue)) {
      let id = opts.resume;
      if (!id) {
        const list = await store.list(host.cwd);
        if (!list.length) {
          // sessions belong to the folder they ran in; one run from a subfolder finds none
          const atRoot = host.projectRoot !== host.cwd && (await store.list(host.projectRoot)).length > 0;
          const there = atRoot ? ` (the project root ${host.projectRoot} has sessions: run larik -c there)` : "";
          throw new ConfigError(`no session to continue in ${host.cwd}: start one without -c${there}`);
        }
        // a session that never got a prompt (a TUI opened and quit, `larik -p /cost`) is not the
        // conversation -c means to continue
        id = (list.find((s) => s.title) ?? list[0]!).id;
      }
      try {
        prior = opts.fork ? await store.fork(host.cwd, id) : await store.open(host.cwd, id);
      } catch (err) {
        // an unknown, ambiguous or locked session is a usage problem the user fixes (exit 2)
        throw new ConfigError(errorText(err));
      }
    }
    let spec = opts.model;
    // a resumed session continues with the model it last used (a /model switch survives)
    // replayed once: a 10,000-message session costs milliseconds to rebuild
    const replayed = prior ? replay(prior.entries()) : undefined;
    if (!spec && prior) spec = replayed!.lastModel ?? `${prior.meta.provider}/${prior.meta.model}`;
    let provider: Provider;
    let providerName: string;
    let model: string;
    let openNotices: string[] = [];
    let modelError: ConfigError | undefined;
    if (opts.provider) {
      provider = opts.provider;
      providerName = opts.provider.name;
      model = spec?.includes("/") ? spec.slice(spec.indexOf("/") + 1) : (spec ?? "scripted");
    } else {
      try {
        const opened = await openModel(spec, host.providers, s, host.env);
        provider = opened.provider;
        providerName = opened.resolved.provider;
        model = opened.resolved.model;
        openNotices = opened.notices;
      } catch (err) {
        if (!opts.modelOptional || !(err instanceof ConfigError)) throw err;
        modelError = err;
        provider = unopenedProvider(err);
        // the spec as written, for `/model` and the catalog lookups of `/cost`; nothing resolved
        const slash = spec?.indexOf("/") ?? -1;
        providerName = spec && slash > 0 ? spec.slice(0, slash) : "";
        model = spec && slash > 0 ? spec.slice(slash + 1) : (spec ?? "");
      }
    }
    const session =
      prior ??
      (store && !modelError
        ? await store.create({ cwd: host.cwd, provider: providerName, model })
        : new MemorySession({ cwd: host.cwd, provider: providerName, model }));
    const maxTurns = opts.maxTurns ?? (typeof s.max_turns === "number" ? s.max_turns : DEFAULT_MAX_TURNS);
    const agent = new Agent({
      host,
      session,
      provider,
      providerName,
      model,
      effort: opts.effort ?? (s.effort as Effort | undefined),
      mode,
      maxTurns,
      checkpoints:
        opts.checkpoints ??
        createCheckpointStore({
          dataDir: dataDir(host.env),
          sessionId: session.id,
          projectRoot: host.projectRoot,
          retentionDays: typeof s.checkpoint_retention_days === "number" ? s.checkpoint_retention_days : DEFAULT_CHECKPOINT_RETENTION_DAYS,
        }),
      label: opts.label,
    });
    agent.#hostNoticeCursor = host.notices.length;
    agent.modelError = modelError;
    host.notices.push(...openNotices); // shown at the first turn
    // a provider handed in ready-made (embedding, tests) is probed by whoever built it
    if (!opts.provider && !modelError) await agent.#probeModel();
    if (prior) {
      const r = replayed!;
      agent.messages = r.messages;
      for (const [k, v] of r.usageByModel) agent.usageByModel.set(k, v);
      agent.compactions = r.compactions;
      agent.compactionSavedTokens = r.compactionSavedTokens;
      agent.lastContextTokens = r.lastContextTokens;
      agent.#contextSource = "resume";
      const lastPrompt = r.all.findLast((m) => isPrompt(m));
      agent.#planNoted = !!lastPrompt?.blocks.some((b) => b.type === "text" && b.text.includes(PLAN_NOTE_START));
      // an undo run by another process since the last prompt (`larik -c -p /undo`, then `-c`)
      // queued its note in that process, which ended before a prompt could carry it
      const since = prior.entries().findLast((e) => e.type === "message" && e.message !== undefined && isPrompt(e.message))?.ts;
      const undone = since && agent.checkpoints.undoneAfter ? await agent.checkpoints.undoneAfter(since).catch(() => []) : [];
      if (undone.length) agent.notes.push(undoNote(undone));
      // a branch's history may send the model to raw_output for a call its source ran
      if (store) await inheritSidecars(host.env, store, host.cwd, prior).catch(() => {});
      // the user sees them as notices at the first turn, the model as notes (without this
      // machine's path to the file, or byte offsets, which tell the model nothing)
      agent.notes.push(...(prior.notes ?? prior.warnings.map((w) => w.replace(/\S+\.jsonl(?=:\d+:)/g, "the session file"))));
      host.notices.push(...prior.warnings);
    }
    startupMark("agent open");
    return agent;
  }

  /**
   * Switches the model for the following requests (`/model`, the server's PATCH). The system
   * prompt and tools stay as they are; thinking blocks are replayed only to the model that made
   * them, so switching back and forth is safe.
   * @throws ConfigError for a bad spec or a missing key; Error while a turn runs.
   */
  async setModel(spec: string): Promise<void> {
    if (this.#running) throw new Error("cannot switch the model while a turn is running");
    const opened = await openModel(spec, this.host.providers, this.host.settings, this.host.env);
    this.provider = opened.provider;
    this.providerName = opened.resolved.provider;
    this.model = opened.resolved.model;
    this.host.notices.push(...opened.notices);
    this.#contextWindow = undefined;
    this.modelError = undefined;
    await this.#probeModel();
  }

  /** `provider/model` of the current model. */
  get spec(): string {
    return `${this.providerName}/${this.model}`;
  }

  /** True while a turn or `/compact` runs (a second `run` would throw). */
  get running(): boolean {
    return this.#running !== undefined;
  }

  /** Queues a note for the next user message. */
  addNote(text: string): void {
    this.notes.push(text);
  }

  /** Registers a callback for when the agent closes. */
  onClose(fn: () => void): void {
    this.#closeFns.push(fn);
  }

  /**
   * Interrupts the running turn (or `/compact`), if any; a second cancel of the same turn changes
   * nothing.
   * @param reason one line saying what stopped the turn, put where "interrupted by user" stands
   *   otherwise: after the partial reply (`[reason]`), in the results of the calls it stopped, and
   *   in the signal's reason, which `bash` quotes (`interrupted: --timeout 5m reached`).
   */
  cancel(reason: string = INTERRUPTED): void {
    if (!this.#running || this.#running.signal.aborted) return;
    this.#interruption = reason;
    this.#running.abort(new Error(reason));
  }

  /** What the calls and the partial reply of a cancelled turn say stopped them. */
  #interruption = INTERRUPTED;

  /**
   * Starts a fresh context in the same session (`/clear`): a `compaction` entry with no summary.
   * @throws Error while a turn runs.
   */
  clear(): void {
    if (this.running) throw new Error("cannot clear while a turn is running");
    this.messages = [];
    this.#system = undefined;
    this.#tools = undefined;
    this.#contextSource = "clear";
    this.session.append({ type: "compaction", summary: "", data: { clear: true } });
  }

  /** The system prompt and tools of the current context (built on first use). */
  async context(): Promise<{ system: string; tools: AnyTool[] }> {
    if (this.#system === undefined || this.#tools === undefined) {
      const tools = await this.host.hooks.loadTools.promise([...this.host.tools.list()], { agent: this });
      this.#tools = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      Object.freeze(this.#tools);
      this.#system = await buildSystemPrompt(this.host);
    }
    return { system: this.#system, tools: this.#tools };
  }

  /**
   * Answers a `permission_request` exactly once.
   * @throws Error when the id is unknown or already answered.
   */
  respond(requestId: string, answer: PermissionAnswer): void {
    const p = this.#pending.get(requestId);
    if (!p) throw new Error(`permission request ${requestId} is unknown or was already answered`);
    this.#pending.delete(requestId);
    p.resolve(answer);
  }

  /**
   * Runs one turn. Refused (throws) while another turn runs; by the time `done` reaches the
   * consumer the turn is over, so the next `run` may start from the `done` handler.
   * @param opts.typed what the user typed when a slash command made `prompt` (`/review main..HEAD`
   *   for the collected review prompt): stored with the prompt as `data.typed`, so session lists
   *   title the session by it (LARIK-REFERENCE §7 titles; Claude Code shows the typed command);
   *   the model still gets `prompt`.
   * @param opts.notes notes for the model that belong to this prompt (the `@` mentions that
   *   {@link expandMentions} could not attach): queued as {@link addNote} does, but only once the
   *   turn is accepted, so that a refused prompt's notes never reach another one.
   * @throws Error while a turn (or `/compact`) runs.
   */
  run(prompt: string | Block[], opts: { typed?: string; notes?: readonly string[] } = {}): AsyncIterable<AgentEvent> {
    if (this.#running) {
      throw new Error(`${this.#compacting ? "a compaction" : "a turn"} is already running: wait for it to finish or cancel it`);
    }
    if (opts.notes) this.notes.push(...opts.notes);
    const ctrl = new AbortController();
    this.#running = ctrl;
    this.#interruption = INTERRUPTED;
    const ch = new Channel<AgentEvent>();
    const emit = (e: AgentEvent) => this.#emit(ch, e);
    this.#turnDone = this.#turn(prompt, ctrl.signal, emit, opts.typed)
      .catch((err: unknown): StopReason => {
        emit({ type: "error", text: errorText(err) });
        return "error";
      })
      .then((reason) => {
        // the agent is idle before `done` is sent: a front end that starts the queued prompt
        // when it sees `done` (the contract says drain until `done`) must not be refused
        for (const [, p] of this.#pending) p.resolve({ allow: false, reason: "the turn ended before an answer" });
        this.#pending.clear();
        this.#running = undefined;
        this.#turnDone = undefined;
        try {
          emit({ type: "done", stop_reason: reason, session_id: this.session.id });
        } finally {
          ch.close();
        }
      });
    return ch;
  }

  #emit(ch: Channel<AgentEvent>, e: AgentEvent): void {
    if (this.label && !e.agent) e = { ...e, agent: this.label };
    const parsed = AgentEventSchema.safeParse(e);
    // zod's message is a JSON dump over many lines, and only the first line of an error is shown
    if (!parsed.success) throw new Error(`kernel bug: invalid ${e.type} event: ${issuesLine(parsed.error.issues)}`);
    this.#callEventTaps(e, ch);
    ch.push(e);
  }

  /**
   * Calls each `event` tap on its own: tapable's `call` stops at the first tap that throws, and a
   * broken tap must not starve the ones after it (the hooks plugin's Notification). A tap that
   * throws fails on every event, so its failure is reported once per plugin and hook for the
   * host's life; the tap stays and the run goes on.
   */
  #callEventTaps(e: AgentEvent, ch: Channel<AgentEvent>): void {
    const taps = this.host.hooks.event.taps;
    if (!taps.length) return;
    // taps observe: one that changed the event would send every front end (and the server's SSE)
    // an event the schema never checked, so an assignment throws in the tap. Frozen only when
    // someone taps: this runs for every streamed delta.
    Object.freeze(e);
    for (const tap of taps) {
      try {
        (tap.fn as (e: AgentEvent, agent: Agent) => void)(e, this);
      } catch (cause) {
        const err = cause instanceof PluginError ? cause : new PluginError(tap.name, 'hook "event"', cause);
        let seen = reportedTapErrors.get(this.host);
        if (!seen) reportedTapErrors.set(this.host, (seen = new Set()));
        const key = `${err.plugin}\0${err.hook}`;
        if (seen.has(key)) continue;
        seen.add(key);
        ch.push({ type: "notice", text: `${err.message}; further errors from it are not shown` });
      }
    }
  }

  async #turn(prompt: string | Block[], signal: AbortSignal, emit: (e: AgentEvent) => void, typed?: string): Promise<StopReason> {
    const say = (text: string) => emit({ type: "notice", text: noticeText(text) });
    this.#flushHostNotices(emit);
    const { tools } = await this.context();
    this.#flushHostNotices(emit);
    const hooks = this.host.hooks;
    // An untapped hook is not called: tapable compiles a function for a hook's first call even
    // with no taps, and these two are on the path of every first model request.
    if (this.#contextSource !== undefined) {
      const source = this.#contextSource;
      const extra: string[] = [];
      if (hooks.sessionStart.isUsed()) await hooks.sessionStart.promise({ agent: this, source, addContext: (t) => extra.push(t), notice: say });
      this.notes.push(...extra);
      this.#contextSource = undefined;
    }
    const text = typeof prompt === "string" ? prompt : prompt.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("\n");
    const context: string[] = [];
    const decision = hooks.userPromptSubmit.isUsed()
      ? await hooks.userPromptSubmit.promise({ agent: this, prompt: text, addContext: (t) => context.push(t), notice: say })
      : undefined;
    if (decision) {
      emit({ type: "notice", text: `prompt ${decision.action === "block" ? "blocked" : "stopped"} by a hook: ${decision.reason}` });
      return decision.action === "block" ? "blocked" : "hook_stopped";
    }
    await this.checkpoints.beginTurn();
    const compaction = this.#compactionRun(tools, signal, emit);
    const compacted = await autoCompact(compaction, false);
    const blocks: Block[] = [];
    const notes = this.notes.splice(0);
    // the model learns the mode from the prompt, not from a refusal after it has tried to edit
    if (this.checker.mode === "plan") notes.push(planNote(tools.some((t) => t.name === "exit_plan_mode")));
    else if (this.#planNoted) notes.push(PLAN_ENDED_NOTE);
    this.#planNoted = this.checker.mode === "plan";
    if (notes.length) blocks.push({ type: "text", text: notes.map((n) => `<system-note>${n}</system-note>`).join("\n") });
    for (const c of context) blocks.push({ type: "text", text: `<hook-context source="UserPromptSubmit">${c}</hook-context>` });
    if (typeof prompt === "string") blocks.push({ type: "text", text: prompt });
    else blocks.push(...prompt);
    // the checkpoint unit of this turn, so `/rewind n files` can map a prompt to its snapshots
    const turn = this.checkpoints.currentTurn?.();
    const data = { ...(turn !== undefined ? { checkpoint_turn: turn } : {}), ...(typed?.trim() ? { typed: typed.trim() } : {}) };
    this.#appendMessage({ role: "user", blocks }, undefined, Object.keys(data).length ? data : undefined);
    if (compacted === "failed") {
      // the prompt is kept (a resume shows it, nothing typed is lost), with a mark where its
      // answer would be; a compaction cut short by a cancel is an interrupt, not an error
      const mark = signal.aborted ? `[${this.#interruption}]` : "[not answered: the compaction before it failed]";
      this.#appendMessage({ role: "assistant", blocks: [{ type: "text", text: mark }], model: this.model });
      return signal.aborted ? "interrupted" : "error";
    }

    let stopBlocks = 0;
    let overflowRetried = false;
    for (let round = 0; round < this.maxTurns; round++) {
      if (signal.aborted) return "interrupted";
      if (round > 0 && (await autoCompact(compaction, true)) === "failed") return signal.aborted ? "interrupted" : "error";
      const res = await this.#request(tools, signal, emit);
      if (res.kind === "interrupted") return "interrupted";
      if (res.kind === "overflow") {
        // compact once and retry once per turn; a second overflow is an error (LARIK-REFERENCE §9)
        if (overflowRetried) {
          emit({ type: "error", text: `the conversation still does not fit the model's context window after compacting it (${res.message}): /clear starts a fresh context, or use a model with a larger window` });
          return "error";
        }
        // the context is this prompt alone: a summary of it would not fit either, and an error
        // that starts "compaction failed" names a step the user never asked for
        if (this.messages.length <= 1) {
          emit({ type: "error", text: `the prompt does not fit the model's context window, with nothing earlier to compact (${res.message}): shorten it, or use a model with a larger window` });
          return "error";
        }
        overflowRetried = true;
        const c = await compactOrReport("overflow", compaction, true);
        if (!c) return signal.aborted ? "interrupted" : "error";
        round--;
        continue;
      }
      if (res.kind === "error") return "error";
      const uses = res.message.blocks.filter((b): b is ToolUseBlock => b.type === "tool_use");
      if (uses.length === 0) {
        // Anthropic pauses a long server-tool turn (`pause_turn`): sending the reply back as it is
        // lets the model go on, in a new round
        if (res.stop === "pause_turn") continue;
        // said here, once, so every front end shows it (the TUI, -p's stderr, the server's clients)
        if (res.stop === "max_tokens") {
          say("the reply hit the model's output limit (max_tokens)");
          return "max_tokens";
        }
        if (res.stop === "refusal") {
          say("the model refused to answer");
          return "refusal";
        }
        const hook = this.label ? hooks.subagentStop : hooks.stop;
        const lastText = res.message.blocks.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
        // a turn that ends with nothing to show would look like a hang or a lost answer (`-p`
        // prints nothing and exits 0); the reference is silent, Claude Code shows "(no content)"
        if (!lastText.trim()) say("the model returned an empty reply");
        const d = await hook.promise({ agent: this, stop_hook_active: stopBlocks > 0, last_text: lastText, notice: say });
        if (d?.action === "halt") return "hook_stopped";
        if (d?.action === "block" && stopBlocks < MAX_STOP_BLOCKS) {
          stopBlocks++;
          this.#appendMessage({ role: "user", blocks: [{ type: "text", text: `<hook-feedback source="${this.label ? "SubagentStop" : "Stop"}">${d.reason}</hook-feedback>` }] });
          continue;
        }
        return "end_turn";
      }
      const halted = await this.#runTools(uses, tools, signal, emit);
      this.#flushHostNotices(emit);
      if (signal.aborted) return "interrupted";
      if (halted) return "hook_stopped";
    }
    // an error, as in Claude Code (`-p` exits 1, "Reached maximum number of turns"): the model
    // has not seen the last results, so the task is unfinished
    emit({ type: "error", text: `stopped after ${this.maxTurns} model rounds (max_turns) before the model finished: raise max_turns in the settings, or send another prompt to go on` });
    return "max_turns";
  }

  /** Host notices that arrived after this agent opened (a background MCP server failing). */
  #hostNoticeCursor = 0;
  #flushHostNotices(emit: (e: AgentEvent) => void): void {
    const all = this.host.notices;
    while (this.#hostNoticeCursor < all.length) emit({ type: "notice", text: all[this.#hostNoticeCursor++]! });
  }

  #appendMessage(m: Message, usage?: Usage, data?: Record<string, unknown>): void {
    pushMerged(this.messages, m);
    this.session.append({ type: "message", message: m, usage, model: usage ? this.#answeredSpec(m.model) : undefined, ...(data ? { data } : {}) });
  }

  /**
   * `provider/model` of the model that produced a message: the adapter stamps the bare id, a
   * fallback (kernel/fallback.ts) its full `provider/model` spec.
   */
  #answeredSpec(model: string | undefined): string {
    const m = model ?? this.model;
    return m === this.model || !m.includes("/") ? `${this.providerName}/${m}` : m;
  }

  /** Asks a local server's provider for its loaded window and tool support (Ollama). */
  async #probeModel(): Promise<void> {
    const p = this.provider;
    const [window, tools] = await Promise.all([
      p.contextWindow?.(this.model).catch(() => undefined),
      p.supportsTools?.(this.model).catch(() => undefined),
    ]);
    if (window) this.#contextWindow = window;
    if (tools === false) this.host.notices.push(`${this.spec} cannot call tools: pick a model with tool support for coding work`);
  }

  /** Streams one model request; stores the assembled assistant message. */
  async #request(
    tools: AnyTool[],
    signal: AbortSignal,
    emit: (e: AgentEvent) => void,
  ): Promise<
    | { kind: "ok"; message: Message; stop: string }
    | { kind: "interrupted" }
    | { kind: "error" }
    | { kind: "overflow"; message: string }
  > {
    const { system } = await this.context();
    const messages = repairToolResults(this.messages);
    const entry = catalogEntry(this.host.providers, this.host.settings, this.providerName, this.model);
    const started = Date.now();
    let firstOutput: number | undefined;
    let partial = "";
    try {
      startupMark("request built");
      const request = { model: this.model, system, tools: tools.map(toolSpec), messages, max_tokens: entry?.max_output, effort: this.effort, session_id: this.session.id, signal };
      for await (const ev of streamOf(this.provider, request, providerWho(this.host.providers, this.providerName))) {
        if (ev.type === "text_delta") {
          firstOutput ??= Date.now();
          partial += ev.text;
          emit({ type: "text_delta", text: ev.text });
        } else if (ev.type === "thinking_delta") {
          emit({ type: "thinking_delta", text: ev.text });
        } else if (ev.type === "tool_use_start") {
          firstOutput ??= Date.now();
          emit({ type: "tool_call_streaming", tool_id: ev.id, tool_name: ev.name });
        } else if (ev.type === "notice") {
          if (typeof ev.text !== "string") throw this.#providerBug(`a notice whose text is not a string (${typeof ev.text})`);
          emit({ type: "notice", text: ev.text });
        } else if (ev.type === "done") {
          this.#checkDone(ev);
          const thinkingMs = (firstOutput ?? Date.now()) - started;
          const message: Message = {
            ...ev.message,
            model: ev.message.model ?? this.model,
            blocks: uniqueToolUseIds(ev.message.blocks.map((b) => (b.type === "thinking" && b.duration_ms === undefined ? { ...b, duration_ms: thinkingMs } : b))),
          };
          this.#appendMessage(message, ev.usage);
          emit({ type: "assistant_message", message });
          emit({ type: "usage", usage: this.#usageInfo(ev.usage, message.model ?? this.model, Date.now() - started, firstOutput ? firstOutput - started : undefined) });
          if (ev.stop_reason === "error") {
            emit({ type: "error", text: "the model stopped with an error" });
            return { kind: "error" };
          }
          return { kind: "ok", message, stop: ev.stop_reason };
        }
      }
      throw new ProviderError({ provider: this.providerName, kind: "truncated", message: "the response ended without a final message" });
    } catch (err) {
      if (signal.aborted) {
        const blocks: Block[] = [];
        if (partial) blocks.push({ type: "text", text: partial });
        blocks.push({ type: "text", text: `[${this.#interruption}]` });
        const message: Message = { role: "assistant", blocks, model: this.model };
        this.#appendMessage(message);
        // the text already streamed reaches a reader of events too (`-p --output json` omits
        // deltas), marked partial so that no front end takes it for the finished reply
        if (partial) emit({ type: "assistant_message", message, partial: true });
        return { kind: "interrupted" };
      }
      if (!partial && err instanceof ProviderError && err.kind === "context_overflow") {
        return { kind: "overflow", message: errorText(err) };
      }
      if (partial) {
        const message: Message = { role: "assistant", blocks: [{ type: "text", text: partial }, { type: "text", text: "[response cut off by an error]" }], model: this.model };
        this.#appendMessage(message);
        emit({ type: "assistant_message", message, partial: true });
      }
      emit({ type: "error", text: errorText(err) });
      return { kind: "error" };
    }
  }

  /**
   * Checks a provider's `done` before anything of it is stored: a plugin's provider that assembles
   * a bad message (a text block without text, no usage) would otherwise be written to the
   * transcript, then fail as an invalid event that blames the kernel, or as a TypeError.
   * @throws Error naming the provider and the plugin that registered it, and the bad fields.
   */
  #checkDone(ev: Extract<StreamEvent, { type: "done" }>): void {
    const problems: string[] = [];
    const message = MessageSchema.safeParse(ev.message);
    if (!message.success) problems.push(issuesLine(message.error.issues, "message"));
    else if (ev.message.role !== "assistant") problems.push(`message.role: expected "assistant", got "${ev.message.role}"`);
    const usage = UsageSchema.safeParse(ev.usage);
    if (!usage.success) problems.push(issuesLine(usage.error.issues, "usage"));
    if (!MODEL_STOP_REASONS.has(ev.stop_reason)) problems.push(`stop_reason: expected one of ${[...MODEL_STOP_REASONS].join(", ")}, got ${JSON.stringify(ev.stop_reason)}`);
    if (problems.length) throw this.#providerBug(`a final message that breaks the Provider contract: ${problems.join("; ")}`);
  }

  /** An error for a provider that broke the stream contract, naming it and the plugin that registered it. */
  #providerBug(what: string): Error {
    return new Error(`${providerWho(this.host.providers, this.providerName)} sent ${what}`);
  }

  #usageInfo(turn: Usage, answeredBy: string, requestMs: number, ttft?: number): UsageInfo {
    const key = this.#answeredSpec(answeredBy);
    const cur = this.usageByModel.get(key) ?? { usage: emptyUsage(), requests: 0 };
    cur.usage = addUsage(cur.usage, turn);
    cur.requests++;
    this.usageByModel.set(key, cur);
    let total = emptyUsage();
    // null while no model of the session has a price (local models): "unpriced", not "$0"
    let cost: number | null = null;
    const byModel: NonNullable<UsageInfo["by_model"]> = {};
    let entry: CatalogEntry | undefined;
    for (const [k, v] of this.usageByModel) {
      total = addUsage(total, v.usage);
      const slash = k.indexOf("/");
      const e = catalogEntry(this.host.providers, this.host.settings, k.slice(0, slash), k.slice(slash + 1));
      if (k === key) entry = e;
      const c = costOf(v.usage, e);
      byModel[k] = { usage: v.usage, cost_usd: c, requests: v.requests };
      if (c !== null) cost = (cost ?? 0) + c;
    }
    this.lastContextTokens = turn.input + turn.cache_read + turn.cache_write;
    return {
      model: key,
      turn,
      total,
      cost_usd: cost,
      request_cost_usd: costOf(turn, entry),
      context_tokens: this.lastContextTokens,
      context_window: this.contextWindow(),
      request_ms: requestMs,
      ttft_ms: ttft,
      by_model: byModel,
      compactions: this.compactions,
      compaction_saved_tokens: this.compactionSavedTokens,
    };
  }

  /** The context window in tokens: provider-reported, else catalog, else 128k. */
  contextWindow(): number {
    if (this.#contextWindow) return this.#contextWindow;
    const e = catalogEntry(this.host.providers, this.host.settings, this.providerName, this.model);
    return e?.context_window ?? DEFAULT_CONTEXT_WINDOW;
  }

  /** Authorizes every call in order, then executes batches; appends one tool_result message. */
  async #runTools(uses: ToolUseBlock[], tools: AnyTool[], signal: AbortSignal, emit: (e: AgentEvent) => void): Promise<boolean> {
    const byName = new Map(tools.map((t) => [t.name, t]));
    const results: (ToolResultBlock | undefined)[] = new Array(uses.length);
    let halt: string | undefined;
    type Approved = { index: number; use: ToolUseBlock; tool: AnyTool; input: unknown; info: ToolCallInfo };
    const approved: Approved[] = [];
    // A refused call's tool_start/tool_end wait until every call before it in the reply has
    // started (not finished): all calls are authorized before any runs, and a front end that
    // prints a line per event (`-p`) would otherwise show the refusal of a second call before the
    // first one's start.
    const refused: boolean[] = new Array(uses.length).fill(false);
    let announced = 0;
    const announceRefused = (before: number) => {
      for (; announced < before; announced++) {
        if (!refused[announced]) continue;
        const use = uses[announced]!;
        const r = results[announced]!;
        emit({ type: "tool_start", tool_id: use.id, tool_name: use.name, input: use.input, refused: true });
        emit({ type: "tool_end", tool_id: use.id, tool_name: use.name, input: use.input, output: r.content, is_error: true });
      }
    };
    for (let i = 0; i < uses.length; i++) {
      const use = uses[i]!;
      if (signal.aborted) break;
      // a call after others that will run first may depend on them (read, then edit; edit, then edit
      // what it made): checked against the files as they are now, it would be refused wrongly
      const r = await this.#authorize(use, byName.get(use.name), tools, signal, emit, (reason) => (halt ??= reason), approved.length === 0);
      if ("result" in r) {
        results[i] = r.result;
        refused[i] = true;
        if (!approved.length) announceRefused(i + 1);
      } else approved.push({ index: i, use, tool: r.tool, input: r.input, info: r.info });
    }
    // Execute: consecutive parallel-safe calls run together; others alone.
    let k = 0;
    while (k < approved.length && !signal.aborted) {
      const batch = [approved[k]!];
      const safe = (a: Approved) => a.tool.kind === "read" || a.tool.concurrencySafe === true;
      if (safe(batch[0]!)) while (k + batch.length < approved.length && safe(approved[k + batch.length]!)) batch.push(approved[k + batch.length]!);
      k += batch.length;
      // #execute emits its tool_start before its first await: the batch's starts and the
      // refusals between them go out in the calls' order, then those up to the next batch
      const running = batch.map(async (a) => {
        announceRefused(a.index);
        results[a.index] = await this.#execute(a.use, a.tool, a.input, a.info, signal, emit);
      });
      announceRefused(approved[k]?.index ?? uses.length);
      await Promise.all(running);
    }
    // when the turn was cancelled before a call started, the refusals after it
    announceRefused(uses.length);
    const blocks: ToolResultBlock[] = uses.map((u, i) => {
      if (results[i]) return results[i];
      // never started (the turn was cancelled): its tool_end still tells a front end, and a
      // reader of `-p --output json`, that the call is answered
      emit({ type: "tool_end", tool_id: u.id, tool_name: u.name, input: u.input, output: this.#interruption, is_error: true });
      return { type: "tool_result", id: u.id, content: this.#interruption, is_error: true };
    });
    this.#appendMessage({ role: "user", blocks });
    if (halt) emit({ type: "notice", text: `turn stopped by a hook: ${halt}` });
    return halt !== undefined;
  }

  async #authorize(
    use: ToolUseBlock,
    tool: AnyTool | undefined,
    tools: AnyTool[],
    signal: AbortSignal,
    emit: (e: AgentEvent) => void,
    onHalt: (reason: string) => void,
    precheck: boolean,
  ): Promise<{ result: ToolResultBlock } | { tool: AnyTool; input: unknown; info: ToolCallInfo }> {
    const fail = (content: string): { result: ToolResultBlock } => ({ result: { type: "tool_result", id: use.id, content, is_error: true } });
    if (!tool) return fail(unknownToolText(use.name, tools.map((t) => t.name)));
    if (use.raw_input !== undefined) return fail(invalidJson(use.name, use.raw_input));
    let parsed = parseToolArguments(tool.input, use.input);
    if (!parsed.success) return fail(invalidArguments(tool.name, parsed.error, use.input));
    let input = parsed.data;
    const info: ToolCallInfo = { agent: this, tool, tool_use_id: use.id, input, halt: onHalt, notice: (text) => emit({ type: "notice", text: noticeText(text) }) };
    let hook: { decision: "allow" | "deny" | "ask"; reason?: string } | undefined;
    try {
      const d = await this.host.hooks.preToolUse.promise(info);
      if (d?.updatedInput !== undefined) {
        parsed = parseToolArguments(tool.input, d.updatedInput);
        if (!parsed.success) return fail(invalidArguments(tool.name, parsed.error, d.updatedInput));
        input = parsed.data;
        info.input = input;
      }
      if (d?.decision) hook = { decision: d.decision, reason: d.reason };
    } catch (err) {
      return fail(`blocked: ${errorText(err)}`);
    }
    const decision = this.checker.decide(permissionCall(tool, input, hook));
    if (decision.decision === "deny") return fail(`permission denied: ${decision.reason}`);
    if (decision.decision === "ask") {
      // a call that would fail anyway gets its error now, not a question whose "yes" leads only
      // to it; a precheck that itself fails leaves the question (run checks again anyway). Called
      // inside a promise: a plain-JavaScript precheck may throw or answer without one.
      const checkCtx = { cwd: this.host.cwd, projectRoot: this.host.projectRoot, files: this.files, settings: this.host.settings };
      const checked: unknown = precheck
        ? await Promise.resolve()
            .then(() => tool.precheck?.(input, checkCtx))
            .catch(() => undefined)
        : undefined;
      const problem = typeof checked === "string" ? checked : undefined;
      // cancelled while a preToolUse hook or the precheck ran: nobody is left to ask (an aborted
      // signal never fires its listener, so the request would wait for an answer that never comes)
      if (signal.aborted) return fail(this.#interruption);
      if (problem) return fail(problem);
      const request_id = `perm-${++this.#permSeq}`;
      let interrupted = false;
      const answer = await new Promise<PermissionAnswer>((resolve) => {
        const onAbort = () => {
          if (!this.#pending.delete(request_id)) return;
          interrupted = true;
          resolve({ allow: false });
        };
        // the listener goes with the answer: a turn may ask hundreds of times, and Node warns on
        // stderr (MaxListenersExceededWarning) from the 11th listener on one signal
        const settle = (a: PermissionAnswer) => {
          signal.removeEventListener("abort", onAbort);
          resolve(a);
        };
        this.#pending.set(request_id, { resolve: settle, suggested: decision.suggested_rule });
        signal.addEventListener("abort", onAbort, { once: true });
        emit({
          type: "permission_request",
          request_id,
          tool_id: use.id,
          tool_name: tool.name,
          input,
          suggested_rule: decision.suggested_rule,
          cwd: this.host.cwd,
          reason: decision.reason,
        });
      });
      // an unanswered call is not one the user denied (LARIK-REFERENCE §2: "interrupted by user")
      if (interrupted) return fail(this.#interruption);
      if (!answer.allow) {
        if (answer.automatic) return fail(`permission denied: ${answer.reason ?? "no one could approve this call"}`);
        return fail(answer.reason ? `the user denied this call: ${answer.reason}` : "the user denied this call");
      }
      if (answer.always && decision.suggested_rule) await this.#saveAlways(decision.suggested_rule, emit);
    }
    return { tool, input, info };
  }

  async #saveAlways(rule: string, emit: (e: AgentEvent) => void): Promise<void> {
    this.checker.addAllowRule(rule);
    try {
      await updatePrivateProjectSettings(this.host.cwd, (cur) => {
        const perms = (cur.permissions ?? {}) as { allow?: string[] };
        const allow = [...new Set([...(perms.allow ?? []), rule])];
        return { ...cur, permissions: { ...perms, allow } };
      }, this.host.env);
    } catch (err) {
      emit({ type: "notice", text: `"always allow ${rule}" holds for this session only: ${errorText(err)}` });
    }
  }

  async #execute(
    use: ToolUseBlock,
    tool: AnyTool,
    input: unknown,
    info: ToolCallInfo,
    signal: AbortSignal,
    emit: (e: AgentEvent) => void,
  ): Promise<ToolResultBlock> {
    emit({ type: "tool_start", tool_id: use.id, tool_name: tool.name, input });
    const ctx: ToolContext = {
      cwd: this.host.cwd,
      projectRoot: this.host.projectRoot,
      signal,
      sessionId: this.session.id,
      toolUseId: use.id,
      files: this.files,
      checkpoint: (p) => this.checkpoints.capture(p),
      sandbox: this.host.sandbox,
      notice: (text) => emit({ type: "notice", text: noticeText(text) }),
      sidecarDir: async () => {
        const dir = sidecarDirOf(this.host.env, this.session.id);
        await mkdir(dir, { recursive: true, mode: 0o700 });
        return dir;
      },
      settings: this.host.settings,
    };
    let result: ToolResult;
    const exec = () => tool.run(input, ctx);
    // a shell command can change any file: in a git repo the store records what it changed (§8)
    const track =
      tool.kind === "bash" && !(input as { run_in_background?: boolean }).run_in_background
        ? this.checkpoints.trackCommand?.bind(this.checkpoints)
        : undefined;
    // a tool that ignores the abort (a plugin's, an MCP call stuck in a server) must not hold the
    // turn: after a grace for tools that stop and report what they did, its result is given up
    const stopped = afterAbort(signal, TOOL_STOP_GRACE_MS);
    try {
      // started now, not in a later tick: a tool registers its abort listener before anyone can cancel
      const running = Promise.resolve(track ? track(ctx.cwd, exec, { warn: (text) => emit({ type: "notice", text }) }) : exec());
      running.catch(() => {}); // given up on, it may still fail later: not an unhandled rejection
      const r = await Promise.race([running, stopped.promise]);
      result =
        r === GAVE_UP
          ? { content: `${this.#interruption} (${tool.name} did not stop within ${TOOL_STOP_GRACE_MS / 1000} s and may still be running)`, is_error: true }
          : r;
    } catch (err) {
      result = { content: signal.aborted ? this.#interruption : `${tool.name} failed: ${errorText(err)}`, is_error: true };
    } finally {
      stopped.dispose();
    }
    result = checkedResult(result, `${tool.name} returned`);
    try {
      const hooked = await this.host.hooks.postToolUse.promise(result, info);
      const checked = checkedResult(hooked, `a postToolUse hook returned, for ${tool.name},`);
      // a broken hook loses nothing: the tool's own result stands
      if (checked === hooked) result = checked;
      else emit({ type: "notice", text: `${checked.content}; the tool's own result was kept` });
    } catch (err) {
      emit({ type: "notice", text: errorText(err) });
    }
    const safe = toSafeText(result.content);
    let content = safe.text;
    if (safe.replaced) content += "\n[note: invalid UTF-8 or NUL bytes in the output were replaced]";
    content = capOutput(content).text;
    emit({ type: "tool_end", tool_id: use.id, tool_name: tool.name, input, output: content, display: result.display, is_error: result.is_error ?? false });
    const block: ToolResultBlock = { type: "tool_result", id: use.id, content };
    if (result.is_error) block.is_error = true;
    if (result.images?.length) block.images = result.images;
    return block;
  }

  /** What a compaction run by this turn (or `/compact`) works with; kernel/compaction.ts. */
  #compactionRun(tools: AnyTool[], signal: AbortSignal, emit: (e: AgentEvent) => void): CompactionRun {
    return { agent: this, tools, signal, emit, usageInfo: (usage, model, ms) => this.#usageInfo(usage, model, ms) };
  }

  /** Compactions of this session so far, and the tokens they freed (estimates). */
  compactions = 0;
  compactionSavedTokens = 0;

  /**
   * `/compact`: summarizes now. Events go to `onEvent` (a `compacted` event, usage).
   * @throws Error while a turn runs, or when the summary request fails.
   */
  async compact(trigger: "manual" = "manual", onEvent?: (e: AgentEvent) => void): Promise<CompactResult> {
    if (this.#running) throw new Error("cannot compact while a turn is running");
    if (!this.messages.length) throw new Error("nothing to compact yet");
    const ctrl = new AbortController();
    this.#running = ctrl;
    this.#compacting = true;
    this.#interruption = INTERRUPTED;
    const ch = new Channel<AgentEvent>();
    try {
      const { tools } = await this.context();
      const emit = (e: AgentEvent) => {
        this.#emit(ch, e);
        onEvent?.(e);
      };
      return await compactContext(trigger, this.#compactionRun(tools, ctrl.signal, emit), false);
    } finally {
      this.#running = undefined;
      this.#compacting = false;
      ch.close();
    }
  }

  /** True while `/compact` runs (it holds the agent as a turn does). */
  #compacting = false;

  /** Cancels a running turn and waits (up to 5 s) for it to write its last entries, fires `sessionEnd`, closes the session. */
  async close(reason = "exit"): Promise<void> {
    this.cancel();
    // a cancelled turn still writes its tool results (interrupted) before the session closes;
    // tools stop on the abort at once, and a deadline keeps one that does not from holding exit
    if (this.#turnDone) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.#turnDone, new Promise<void>((done) => (timer = setTimeout(done, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    try {
      await this.host.hooks.sessionEnd.promise({ agent: this, reason, notice: (text) => this.host.notices.push(noticeText(text)) });
    } catch {
      // a failing SessionEnd hook must not keep the session open
    }
    await this.session.close();
    for (const fn of this.#closeFns.splice(0)) fn();
  }

  /** Messages for display (every message ever written). */
  history(): Message[] {
    return replay(this.session.entries()).all;
  }

  /**
   * Prompt indexes (turn boundaries) of the display history, with the text typed (see
   * {@link promptsOf}) and, for a prompt a slash command made, the command line (`typed`).
   */
  prompts(): SessionPrompt[] {
    const { all, typed } = replay(this.session.entries());
    return promptsOf(all, typed);
  }
}

/**
 * Gives every tool_use of one reply its own id. Results are matched to calls by id, so two calls
 * sharing one (a server bug seen with OpenAI-compatible servers) would both get the last call's
 * result on replay, and the API rejects the next request; an empty id cannot be answered at all.
 * A repeat becomes `<id>_2`, `<id>_3`, … (skipping ids the reply already uses); the first keeps
 * its own, so a well-behaved reply is stored exactly as it came.
 */
function uniqueToolUseIds(blocks: Block[]): Block[] {
  const taken = new Set<string>();
  for (const b of blocks) if (b.type === "tool_use") taken.add(b.id);
  const seen = new Set<string>();
  return blocks.map((b) => {
    if (b.type !== "tool_use") return b;
    if (b.id && !seen.has(b.id)) {
      seen.add(b.id);
      return b;
    }
    const base = b.id || "call";
    let n = 2;
    while (taken.has(`${base}_${n}`)) n++;
    const id = `${base}_${n}`;
    taken.add(id);
    seen.add(id);
    return { ...b, id };
  });
}

/**
 * `r` when it is a {@link ToolResult} (`content` a string), else an error result that says what
 * was wrong: a plugin written in plain JavaScript can return anything, and one bad result must
 * not end the turn with its calls unanswered (invariant 3).
 */
function checkedResult(r: unknown, who: string): ToolResult {
  const o = r as Partial<Record<keyof ToolResult, unknown>> | null | undefined;
  let wrong: string | undefined;
  if (!o || typeof o !== "object") wrong = r === null ? "null" : typeof r;
  else if (typeof o.content !== "string") wrong = `content of type ${typeof o.content}`;
  else if (o.is_error !== undefined && typeof o.is_error !== "boolean") wrong = `is_error of type ${typeof o.is_error}`;
  else if (o.images !== undefined && !Array.isArray(o.images)) wrong = `images of type ${typeof o.images}`;
  if (wrong === undefined) return r as ToolResult;
  return { content: `${who} no valid result (expected { content: string, is_error?: boolean, images?: [] }, got ${wrong})`, is_error: true };
}

/** How long a cancelled tool may take to stop and return its own result (ms). */
const TOOL_STOP_GRACE_MS = 2_000;
const GAVE_UP: unique symbol = Symbol("gave up");

/** A promise of {@link GAVE_UP} `graceMs` after `signal` aborts (never before); `dispose` drops the timer and listener. */
function afterAbort(signal: AbortSignal, graceMs: number): { promise: Promise<typeof GAVE_UP>; dispose(): void } {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const promise = new Promise<typeof GAVE_UP>((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve(GAVE_UP), graceMs);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return {
    promise,
    dispose() {
      if (onAbort) signal.removeEventListener("abort", onAbort);
      clearTimeout(timer);
    },
  };
}

/**
 * The result for a call to a tool that is not offered: the nearest name first (a model that
 * writes `Read` or `read_file` means `read`), then the offered names, at most 40 of them (with
 * a few MCP servers the whole list would run to hundreds).
 */
function unknownToolText(name: string, offered: string[]): string {
  const near = nearestName(name, offered) ?? offered.find((t) => name.toLowerCase().startsWith(`${t}_`));
  const shown = offered.slice(0, 40).join(", ") + (offered.length > 40 ? `, and ${offered.length - 40} more` : "");
  return `unknown tool "${name}"${near ? ` (did you mean "${near}"?)` : ""}: available tools are ${shown}`;
}

const PLAN_NOTE_START = "Plan mode is on:";

/**
 * The note each prompt carries in plan mode (LARIK-REFERENCE §2 "Plan mode note"). Without an
 * `exit_plan_mode` tool (the default preset has none) the plan is the answer: the user approves
 * it by leaving plan mode, and `larik -p --mode plan` ends with it.
 */
function planNote(exitTool: boolean): string {
  const present = exitTool
    ? "then present your plan with exit_plan_mode, which asks the user to approve it."
    : "then present your plan as your answer; nothing is changed until the user leaves plan mode.";
  return `${PLAN_NOTE_START} only read-only tools run (read, grep, glob and the like); bash, file edits and other changes are refused. Investigate, ${present}`;
}

/** The note of the first prompt after plan mode ended. */
const PLAN_ENDED_NOTE = "Plan mode has ended: bash and file edits are available again, under the current permission mode.";

/** `event` tap failures already reported, by host: `plugin\0hook` keys (see `#callEventTaps`). */
const reportedTapErrors = new WeakMap<Host, Set<string>>();

/** The stop reasons a provider's `done` may carry ({@link ModelStopReason}). */
const MODEL_STOP_REASONS: ReadonlySet<string> = new Set<ModelStopReason>(["end_turn", "tool_use", "max_tokens", "refusal", "pause_turn", "error"]);

/** zod issues as one line (`message.blocks.0.text: expected string, received undefined`), under `prefix`. */
function issuesLine(issues: readonly { path: PropertyKey[]; message: string }[], prefix?: string): string {
  return issues
    .map((i) => {
      const path = [...(prefix ? [prefix] : []), ...i.path.map(String)].join(".");
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join("; ");
}
