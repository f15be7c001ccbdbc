/**
 * The sessions a server holds (LARIK-REFERENCE §21): create, resume, continue and fork them
 * through the host's session store, list them, read transcripts of unloaded ones, and close
 * them on DELETE or shutdown.
 */
import {
  ConfigError,
  EFFORTS,
  PERMISSION_MODES,
  errorText,
  promptsOf,
  replay,
  resolveModel,
  type Agent,
  type Effort,
  type Host,
  type Message,
  type PermissionMode,
  type SessionPrompt,
  type SessionSummary,
} from "../../kernel/index.js";
import { ApiError } from "./errors.js";
import type { BusOptions } from "./bus.js";
import { ServerSession } from "./session.js";

/** Defaults for new sessions (`larik serve --model/--effort/--mode`). */
export interface SessionDefaults {
  model?: string;
  effort?: Effort;
  mode?: PermissionMode;
}

/** The sessions of one server, keyed by id. */
export class SessionManager {
  readonly host: Host;
  readonly defaults: SessionDefaults;
  readonly busOptions: BusOptions;
  #loaded = new Map<string, ServerSession>();
  #log: (line: string) => void;

  constructor(host: Host, defaults: SessionDefaults, busOptions: BusOptions, log: (line: string) => void) {
    this.host = host;
    this.defaults = defaults;
    this.busOptions = busOptions;
    this.#log = log;
  }

  get loaded(): ServerSession[] {
    return [...this.#loaded.values()];
  }

  /**
   * A loaded session by id or unique id prefix.
   * @throws ApiError 404 when none is loaded under that id, 400 for an ambiguous prefix.
   */
  get(idOrPrefix: string): ServerSession {
    const exact = this.#loaded.get(idOrPrefix);
    if (exact) return exact;
    const hits = [...this.#loaded.keys()].filter((k) => k.startsWith(idOrPrefix));
    if (hits.length === 1) return this.#loaded.get(hits[0]!)!;
    if (hits.length > 1) throw new ApiError(400, "bad_request", `session prefix "${idOrPrefix}" is ambiguous: it matches ${hits.slice(0, 8).join(", ")}`);
    throw new ApiError(404, "not_found", `session ${idOrPrefix} is not loaded: POST /v1/sessions {"resume": "${idOrPrefix}"} to load it`);
  }

  /** The loaded session, or undefined (no error). */
  find(idOrPrefix: string): ServerSession | undefined {
    try {
      return this.get(idOrPrefix);
    } catch {
      return undefined;
    }
  }

  /** Stored sessions of the host's directory plus loaded ones not in the store, newest first. */
  async list(): Promise<(SessionSummary & { loaded: boolean; busy: boolean })[]> {
    const store = this.host.sessionStore;
    const stored = store ? await store.list(this.host.cwd) : [];
    const out = stored.map((s) => {
      const l = this.#loaded.get(s.id);
      return { ...s, loaded: l !== undefined, busy: l?.busy !== undefined };
    });
    const known = new Set(stored.map((s) => s.id));
    for (const l of this.#loaded.values()) {
      if (!known.has(l.id)) out.push({ id: l.id, title: l.title(), updated: Date.now(), location: l.agent.session.location, loaded: true, busy: l.busy !== undefined });
    }
    return out;
  }

  /**
   * Creates, resumes, continues or forks a session (`POST /v1/sessions`). Resuming a session
   * that is already loaded returns it (`created: false`).
   * @throws ApiError 400 for bad options or no store, 404 for an unknown session.
   */
  async open(body: { model?: string; effort?: string; mode?: string; resume?: string; continue?: boolean; fork?: boolean }): Promise<{ session: ServerSession; created: boolean }> {
    if (body.resume !== undefined && body.continue) throw new ApiError(400, "bad_request", "give either resume or continue, not both");
    if (body.fork && body.resume === undefined && !body.continue) {
      throw new ApiError(400, "bad_request", "fork needs a session to branch from: add resume or continue");
    }
    let resume: string | undefined;
    if (body.resume !== undefined || body.continue) {
      const store = this.host.sessionStore;
      if (!store) throw new ApiError(400, "bad_request", "cannot resume: no session store plugin is loaded (sessions live in memory)");
      resume = await this.#resolveStored(body.resume);
      const loaded = this.#loaded.get(resume);
      if (loaded && !body.fork) return { session: loaded, created: false };
    }
    let agent: Agent;
    try {
      agent = await this.host.openAgent({
        model: body.model ?? (resume ? undefined : this.defaults.model),
        effort: (body.effort as Effort | undefined) ?? this.defaults.effort,
        mode: (body.mode as PermissionMode | undefined) ?? this.defaults.mode,
        resume,
        fork: body.fork,
      });
    } catch (err) {
      if (err instanceof ConfigError) throw new ApiError(400, "bad_request", errorText(err));
      // the id was resolved above, so a failure here is a lock held elsewhere or a bad file
      if (resume) throw new ApiError(409, "conflict", `cannot open session ${resume}: ${errorText(err)}`);
      throw err;
    }
    return { session: this.adopt(agent), created: true };
  }

  /** Registers an open agent as a loaded session. */
  adopt(agent: Agent): ServerSession {
    let id = agent.session.id;
    // In-memory sessions made in the same millisecond share an id; keep them apart.
    for (let n = 2; this.#loaded.has(id); n++) id = `${agent.session.id}~${n}`;
    const s = new ServerSession(id, agent, this.busOptions);
    this.#loaded.set(id, s);
    this.#log(`session ${id} opened (${agent.spec}, ${agent.checker.mode})`);
    return s;
  }

  async #resolveStored(idOrPrefix: string | undefined): Promise<string> {
    const list = await this.host.sessionStore!.list(this.host.cwd);
    if (idOrPrefix === undefined) {
      if (!list.length) throw new ApiError(404, "not_found", `no session to continue in ${this.host.cwd}: create one without continue`);
      return list[0]!.id;
    }
    if (list.some((s) => s.id === idOrPrefix)) return idOrPrefix;
    const hits = list.filter((s) => s.id.startsWith(idOrPrefix));
    if (hits.length === 1) return hits[0]!.id;
    if (hits.length > 1) throw new ApiError(400, "bad_request", `session prefix "${idOrPrefix}" is ambiguous: it matches ${hits.slice(0, 8).map((h) => h.id).join(", ")}`);
    throw new ApiError(404, "not_found", `no session "${idOrPrefix}" in ${this.host.cwd}: GET /v1/sessions lists them`);
  }

  /**
   * The display history of a session, loaded or not (unloaded ones are read through the store).
   * @throws ApiError 404 for an unknown session.
   */
  async messages(idOrPrefix: string): Promise<{ id: string; messages: Message[]; prompts: SessionPrompt[] }> {
    const loaded = this.find(idOrPrefix);
    if (loaded) {
      const { all, typed } = replay(loaded.agent.session.entries());
      return { id: loaded.id, messages: all, prompts: promptsOf(all, typed) };
    }
    const store = this.host.sessionStore;
    if (!store) throw new ApiError(404, "not_found", `session ${idOrPrefix} is not loaded and there is no session store to read it from`);
    const id = await this.#resolveStored(idOrPrefix);
    let handle;
    try {
      handle = await store.open(this.host.cwd, id);
    } catch (err) {
      throw new ApiError(409, "conflict", errorText(err));
    }
    try {
      // `typed`: the command line of a prompt a slash command made, for lists to show
      const { all, typed } = replay(handle.entries());
      return { id, messages: all, prompts: promptsOf(all, typed) };
    } finally {
      await handle.close();
    }
  }

  /**
   * Branches a session into a new loaded one (`POST …/fork`). `at` must be a prompt index: the
   * branch keeps the messages before it and the prompt's text is returned for re-sending.
   * @throws ApiError 409 when the source is busy, 400 for a bad `at`, 501 without a store.
   */
  async fork(idOrPrefix: string, at: number | undefined): Promise<{ session: ServerSession; prompt?: string; typed?: string }> {
    const store = this.host.sessionStore;
    if (!store) throw new ApiError(501, "not_implemented", "fork needs a session store plugin (sessions live in memory)");
    const source = this.find(idOrPrefix);
    if (source?.busy) throw new ApiError(409, "busy", `session ${source.id} is busy (${source.busy}): branch at a turn boundary, after the run ends`);
    const { id, messages, prompts } = await this.messages(idOrPrefix);
    let keep = messages.length;
    let prompt: string | undefined;
    let typed: string | undefined;
    if (at !== undefined) {
      const p = prompts.find((x) => x.index === at);
      if (!p) {
        const valid = prompts.map((x) => x.index).join(", ") || "none yet";
        throw new ApiError(400, "bad_request", `at=${at} is not a prompt index of session ${id}: use one of ${valid} (GET …/messages lists them)`);
      }
      keep = at;
      // the text the model got is what re-sends the turn (POST …/prompt runs no slash command);
      // `typed` is the command line a client shows for it
      prompt = p.text;
      typed = p.typed;
    }
    let branchId: string;
    try {
      const handle = await store.fork(this.host.cwd, id, keep);
      branchId = handle.id;
      await handle.close();
    } catch (err) {
      throw new ApiError(400, "bad_request", errorText(err));
    }
    const s = await this.open({
      resume: branchId,
      effort: source?.agent.effort ?? this.defaults.effort,
      mode: source?.agent.checker.mode ?? this.defaults.mode,
    });
    return { session: s.session, ...(prompt !== undefined ? { prompt } : {}), ...(typed !== undefined ? { typed } : {}) };
  }

  /** Stops and unloads a session (`DELETE`); its file is kept. */
  async close(s: ServerSession, reason: string): Promise<void> {
    this.#loaded.delete(s.id);
    await s.close(reason);
    this.#log(`session ${s.id} closed (${reason})`);
  }

  /** Closes every loaded session (shutdown). */
  async closeAll(reason: string): Promise<void> {
    await Promise.all(this.loaded.map((s) => this.close(s, reason)));
  }
}

/** Validates `--mode` / `--effort` values (one-line errors that list the choices). */
export function checkDefaults(d: { model?: string; effort?: string; mode?: string }, host: Host): SessionDefaults {
  if (d.mode !== undefined && !PERMISSION_MODES.includes(d.mode as PermissionMode)) {
    throw new ConfigError(`unknown mode "${d.mode}": use one of ${PERMISSION_MODES.join(", ")}`);
  }
  if (d.effort !== undefined && !EFFORTS.includes(d.effort as Effort)) {
    throw new ConfigError(`unknown effort "${d.effort}": use one of ${EFFORTS.join(", ")}`);
  }
  if (d.model !== undefined) resolveModel(d.model, host.providers, host.settings, host.env);
  return { model: d.model, effort: d.effort as Effort | undefined, mode: d.mode as PermissionMode | undefined };
}
