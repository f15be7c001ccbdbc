/**
 * One loaded session of the server (LARIK-REFERENCE §21): its agent, its event bus and its
 * pending permissions. Prompt, compact, undo and clear mark it busy; an overlapping one is
 * refused with 409. `mode` may change mid-run, model and effort only when idle.
 */
import {
  addUsage,
  catalogEntry,
  costOf,
  emptyUsage,
  errorText,
  expandMentions,
  hasMentions,
  isPrompt,
  promptsOf,
  resolveModel,
  typedPrompt,
  type Agent,
  type AgentEvent,
  type Block,
  type Effort,
  type Message,
  type PermissionMode,
} from "../../kernel/index.js";
import { ApiError } from "./errors.js";
import { SessionBus, type BusOptions } from "./bus.js";
import { PermissionBook, type PendingPermission } from "./permissions.js";

/** What marks a session busy. */
export type BusyWith = "prompt" | "compact" | "undo" | "clear";

/** The final answer of a prompt run (`wait: true`). */
export interface RunResult {
  after_seq: number;
  stop_reason: string;
  text: string;
  error?: string;
}

/** How long closing waits for a cancelled run to wind down before closing anyway (ms). */
const CLOSE_GRACE_MS = 10_000;

/** One loaded session. */
export class ServerSession {
  /** The key clients use: the session id. */
  readonly id: string;
  readonly agent: Agent;
  readonly bus: SessionBus;
  readonly permissions: PermissionBook;
  #busy: BusyWith | undefined;
  #run: Promise<RunResult> | undefined;
  #closed = false;

  constructor(id: string, agent: Agent, busOpts: BusOptions) {
    this.id = id;
    this.agent = agent;
    this.bus = new SessionBus(id, busOpts);
    this.permissions = new PermissionBook(this.bus);
  }

  get busy(): BusyWith | undefined {
    return this.#busy;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The session's title: its first prompt, at most 80 characters; for a prompt a slash command
   * made, what was typed (`/review main..HEAD`, kernel `typedPrompt`), as `larik --sessions` shows.
   */
  title(): string {
    const session = this.agent.session;
    const entry = session.entries().find((e) => e.type === "message" && e.message !== undefined && isPrompt(e.message));
    const first = session.meta.title ?? (entry && typedPrompt(entry)) ?? promptsOf(this.agent.history())[0]?.text ?? "";
    const line = first.replace(/\s+/g, " ").trim();
    return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  }

  /** The `GET /v1/sessions/{id}` view. */
  info() {
    const a = this.agent;
    let total = emptyUsage();
    let cost: number | null = 0;
    const byModel: Record<string, { usage: ReturnType<typeof emptyUsage>; requests: number; cost_usd: number | null }> = {};
    for (const [key, v] of a.usageByModel) {
      total = addUsage(total, v.usage);
      const slash = key.indexOf("/");
      const entry = slash > 0 ? catalogEntry(a.host.providers, a.host.settings, key.slice(0, slash), key.slice(slash + 1)) : undefined;
      const c = costOf(v.usage, entry);
      byModel[key] = { usage: v.usage, requests: v.requests, cost_usd: c };
      cost = cost === null || c === null ? null : cost + c;
    }
    if (a.usageByModel.size === 0) cost = 0;
    return {
      id: this.id,
      title: this.title(),
      location: a.session.location,
      loaded: true,
      busy: this.#busy !== undefined,
      ...(this.#busy ? { busy_with: this.#busy } : {}),
      model: a.spec,
      mode: a.checker.mode,
      ...(a.effort ? { effort: a.effort } : {}),
      ...(a.session.meta.fork_of ? { fork_of: a.session.meta.fork_of } : {}),
      last_seq: this.bus.lastSeq,
      usage: { total, cost_usd: cost, by_model: byModel },
      permissions: this.permissions.list() satisfies PendingPermission[],
      tasks: [] as unknown[],
    };
  }

  #refuseIfBusy(what: string): void {
    if (this.#closed) throw new ApiError(404, "not_found", `session ${this.id} was closed`);
    if (this.#busy) {
      throw new ApiError(409, "busy", `session ${this.id} is busy (${this.#busy}): wait for status busy=false or POST …/cancel before ${what}`);
    }
  }

  #setBusy(what: BusyWith | undefined): void {
    this.#busy = what;
    this.bus.publish(what ? { type: "status", busy: true, busy_with: what } : { type: "status", busy: false });
  }

  /**
   * Starts a turn. `@path` mentions in `text` are attached first (LARIK-REFERENCE §2; the session
   * counts as busy meanwhile); a refused one becomes a `notice` event after `status`. Publishes
   * `user_message` and `status {busy: true}`, then every agent event; when the run ends, expires
   * unanswered permission requests and publishes `status {busy: false}`.
   * Returns the seq before the prompt's first event and a promise of the final answer.
   * @throws ApiError 409 when the session is busy, 404 when it closed meanwhile.
   */
  async startPrompt(text: string): Promise<{ after_seq: number; done: Promise<RunResult> }> {
    this.#refuseIfBusy("prompting");
    let prompt: string | Block[] = text;
    let notices: string[] = [];
    let notes: string[] = [];
    if (hasMentions(text)) {
      // held busy without a status event: reading the files is part of starting the turn
      this.#busy = "prompt";
      try {
        const x = await expandMentions(text, this.agent);
        if (x.blocks.length > 1) prompt = x.blocks;
        notices = x.notices;
        notes = x.notes;
      } finally {
        this.#busy = undefined;
      }
      this.#refuseIfBusy("prompting");
    }
    let events: AsyncIterable<AgentEvent>;
    const after_seq = this.bus.lastSeq;
    try {
      events = this.agent.run(prompt, { notes });
    } catch (err) {
      throw new ApiError(409, "busy", errorText(err));
    }
    this.bus.publish({ type: "user_message", text });
    this.#setBusy("prompt");
    for (const n of notices) this.bus.publish({ type: "notice", text: n });
    const done = this.#drain(events, after_seq);
    this.#run = done;
    return { after_seq, done };
  }

  async #drain(events: AsyncIterable<AgentEvent>, after_seq: number): Promise<RunResult> {
    let last: Message | undefined;
    let stop = "error";
    let error: string | undefined;
    try {
      for await (const ev of events) {
        if (ev.type === "permission_request") this.permissions.add(ev);
        else this.bus.publish(ev);
        // a reply cut short is not the answer: `text` stays the last finished reply's
        if (ev.type === "assistant_message" && !ev.agent && !ev.partial) last = ev.message;
        else if (ev.type === "error" && !ev.agent) error = ev.text;
        else if (ev.type === "done" && !ev.agent) stop = ev.stop_reason;
      }
    } catch (err) {
      error = errorText(err);
      this.bus.publish({ type: "error", text: error });
    } finally {
      this.permissions.expireAll();
      this.#run = undefined;
      this.#setBusy(undefined);
    }
    const text = last ? last.blocks.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("") : "";
    return { after_seq, stop_reason: stop, text, ...(error ? { error } : {}) };
  }

  /**
   * Runs `fn` with the session marked busy as `what` (compact, undo, clear).
   * @throws ApiError 409 when busy; whatever `fn` throws.
   */
  async exclusive<T>(what: BusyWith, fn: () => Promise<T>): Promise<T> {
    this.#refuseIfBusy(what);
    this.#setBusy(what);
    try {
      return await fn();
    } finally {
      this.#setBusy(undefined);
    }
  }

  /** Interrupts the running turn; returns whether one was running. */
  cancel(): boolean {
    const running = this.agent.running;
    this.agent.cancel();
    return running;
  }

  /**
   * Changes model, effort or mode. `mode` applies at once, even mid-run; model and effort
   * need an idle session.
   * @throws ApiError 409 while busy (model/effort), 400 for a model that does not resolve.
   */
  async patch(body: { model?: string; effort?: string; mode?: string }): Promise<void> {
    if (body.model !== undefined || body.effort !== undefined) this.#refuseIfBusy("changing model or effort");
    if (body.model !== undefined) {
      const a = this.agent;
      let r: ReturnType<typeof resolveModel>;
      try {
        r = resolveModel(body.model, a.host.providers, a.host.settings, a.host.env);
      } catch (err) {
        throw new ApiError(400, "bad_request", errorText(err));
      }
      const provider = await r.factory.create(r.config);
      // re-check: the provider factory may have awaited while a prompt came in
      this.#refuseIfBusy("changing model");
      a.provider = provider;
      a.providerName = r.provider;
      a.model = r.model;
    }
    if (body.effort !== undefined) this.agent.effort = body.effort as Effort;
    if (body.mode !== undefined) this.agent.checker.mode = body.mode as PermissionMode;
  }

  /**
   * Stops the run (if any), expires its permission requests, publishes `session_closed`, ends
   * every subscriber after its queue drains and closes the agent (the session file is kept).
   */
  async close(reason: string): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const run = this.#run;
    if (run) {
      this.agent.cancel();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([run.catch(() => {}), new Promise((r) => (timer = setTimeout(r, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
    }
    this.permissions.expireAll();
    this.bus.publish({ type: "session_closed", reason });
    this.bus.close();
    await this.agent.close(reason);
  }
}

