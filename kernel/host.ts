/**
 * The plugin host: loads plugins in order, owns the registries and hook points, and opens
 * agents. A plugin that throws in `setup`, or whose `setup` does not finish within
 * {@link DEFAULT_SETUP_TIMEOUT_MS}, is reported by name and the host starts without it.
 */
import { createHooks, pluginHooks, PluginError, type Hooks } from "./hooks.js";
import { Registry, type Disposer } from "./registry.js";
import type { Plugin, PluginContext, PluginRegistry } from "./plugin.js";
import { toolDefinitionProblem, type AnyTool } from "./tools.js";
import { commandProblem, providerFactoryProblem, type Command, type Frontend, type ProviderFactory, type Sandbox, type Skill } from "./registries.js";
import type { SessionStore } from "./session.js";
import type { Settings } from "./config.js";
import { join } from "node:path";
import { canonicalDir, dataDir, gitRoot } from "./paths.js";
import { Agent, type AgentOptions } from "./agent.js";
import { unmatchableRules } from "./permission.js";
import { selectSandbox } from "./sandbox.js";
import { isPlugin } from "./plugin.js";
import { nearestName } from "./kit/nearest-name.js";
import { noticeTextProblem } from "./kit/one-line.js";

/** What {@link Host.create} takes. */
export interface HostOptions {
  /**
   * Plugins in load order (a preset, then config plugins). An entry that is not a plugin is
   * skipped with a notice, and so is a later plugin with the name of an earlier one.
   */
  plugins: Plugin[];
  /** Where each entry of `plugins` came from (`"the preset"`), for notices; same order. */
  sources?: (string | undefined)[];
  /** Plugin names to leave out; a name that matches no plugin gets a notice. */
  disable?: string[];
  /** The working directory (default `process.cwd()`); its git root becomes the project root. */
  cwd?: string;
  /** Merged settings, as `loadConfig(cwd).settings` gives them; default none. */
  settings?: Settings;
  /** The environment keys and folders are read from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Notices gathered before the host existed (settings warnings). */
  notices?: string[];
  /**
   * How long a plugin's `setup` may take, in ms, before the host starts without it; `0` for no
   * limit (default `LARIK_SETUP_TIMEOUT_MS` from `env`, else {@link DEFAULT_SETUP_TIMEOUT_MS}).
   */
  setupTimeoutMs?: number;
}

/**
 * How long a plugin's `setup` may take before the host starts without it (ms). A setup that
 * waits for something that never comes (a server that does not answer, a lock) would otherwise
 * hang start-up with nothing on screen naming it.
 */
const DEFAULT_SETUP_TIMEOUT_MS = 10_000;

interface Loaded {
  plugin: Plugin;
  disposers: Disposer[];
  onDispose: (() => void | Promise<void>)[];
  /** Set when its setup ran out of time: what it registers later is refused or undone at once. */
  abandoned?: boolean;
}

/** What {@link Host}'s setup timer races a setup against first: it loses to a promise that has already settled. */
const NOT_SETTLED_VALUE = Symbol("not settled");
const NOT_SETTLED = Promise.resolve(NOT_SETTLED_VALUE);

/**
 * The plugin host (DESIGN.md): loads plugins in order into its registries and hook points, picks
 * the sandbox, and opens agents. Build it with {@link Host.create} (or `createHost` from `larik`).
 */
export class Host {
  readonly cwd: string;
  /** The file-tool boundary: the git root, else cwd. */
  readonly projectRoot: string;
  readonly settings: Settings;
  readonly env: NodeJS.ProcessEnv;
  readonly hooks: Hooks = createHooks();
  readonly providers = new Registry<ProviderFactory>("providers");
  readonly tools = new Registry<AnyTool>("tools");
  readonly frontends = new Registry<Frontend>("frontends");
  readonly sandboxes = new Registry<Sandbox>("sandboxes");
  readonly commands = new Registry<Command>("commands");
  readonly skills = new Registry<Skill>("skills");
  readonly sessionStores = new Registry<SessionStore>("sessionStores");
  /** The sandbox bash runs in, chosen at start-up by probing; undefined runs unconfined. */
  sandbox?: Sandbox;
  /** One-line start-up notices (failed plugins, ignored settings). */
  readonly notices: string[] = [];
  /** Plugins that failed to load, with the error. */
  readonly failed: { name: string; error: Error }[] = [];
  readonly #loaded = new Map<string, Loaded>();
  readonly #agents = new Set<Agent>();
  /** While {@link Host.create} loads its list: why a required name is not loaded yet. */
  #whyMissing?: (name: string) => string;
  /** How long a plugin's setup may take (ms); 0 for no limit. */
  readonly #setupTimeoutMs: number;

  private constructor(opts: HostOptions) {
    this.cwd = canonicalDir(opts.cwd ?? process.cwd());
    this.projectRoot = gitRoot(this.cwd) ?? this.cwd;
    this.settings = opts.settings ?? {};
    this.env = opts.env ?? process.env;
    this.notices.push(...(opts.notices ?? []));
    this.#setupTimeoutMs = opts.setupTimeoutMs ?? this.#setupTimeoutFromEnv();
  }

  /**
   * `LARIK_SETUP_TIMEOUT_MS` when it is a positive number or `0` (no limit, as for a setup that
   * rightly waits long: a debugger attached), else the default (with a notice for a bad value).
   */
  #setupTimeoutFromEnv(): number {
    const raw = this.env.LARIK_SETUP_TIMEOUT_MS;
    if (raw === undefined || raw === "") return DEFAULT_SETUP_TIMEOUT_MS;
    // Number(" ") is 0, which would read as "no limit"
    const ms = raw.trim() === "" ? NaN : Number(raw);
    if (Number.isFinite(ms) && ms >= 0) return ms;
    this.notices.push(`LARIK_SETUP_TIMEOUT_MS: expected a number of milliseconds, or 0 for no limit, got ${JSON.stringify(raw)}; using ${DEFAULT_SETUP_TIMEOUT_MS}`);
    return DEFAULT_SETUP_TIMEOUT_MS;
  }

  /**
   * Builds a host and loads `opts.plugins` in order. Never throws for a bad plugin: an entry that
   * is not a plugin, a second plugin of a name, a plugin whose setup throws and a name in
   * `disable` that matches no plugin each leave a one-line notice in {@link Host.notices}.
   */
  static async create(opts: HostOptions): Promise<Host> {
    const host = new Host(opts);
    const disabled = new Set(opts.disable ?? []);
    const from = (i: number) => (opts.sources?.[i] ? ` from ${opts.sources[i]}` : ` (plugins[${i}])`);
    /** Name → index of the first entry of that name: it keeps the name even when it is disabled or fails. */
    const first = new Map<string, number>();
    const listed = opts.plugins.filter(isPlugin).map((p) => p.name);
    // "not loaded" alone sends the user looking for a plugin that is there, one place too late
    host.#whyMissing = (name) => {
      if (disabled.has(name)) return `which is disabled (remove "${name}" from disable)`;
      if (host.failed.some((f) => f.name === name)) return "which failed to load (see its notice)";
      if (listed.includes(name)) return `which comes after it in the plugin list: list "${name}" before it`;
      const near = nearestName(name, listed);
      return `which is not in the plugin list${near ? ` (did you mean "${near}"?)` : ""}`;
    };
    for (const [i, plugin] of opts.plugins.entries()) {
      if (!isPlugin(plugin)) {
        const err = new Error(`got ${describeValue(plugin)}; a plugin is definePlugin({ name, setup })`);
        host.failed.push({ name: `plugins[${i}]`, error: err });
        host.notices.push(`plugins[${i}] skipped: ${err.message}`);
        continue;
      }
      const earlier = first.get(plugin.name);
      if (earlier !== undefined) {
        // replacing the earlier one would silently drop what it registered (a preset's front end)
        const why =
          opts.plugins[earlier] === plugin
            ? `it is already listed${from(earlier)}; list it once`
            : `the plugin of that name${from(earlier)} came first and keeps it; rename one of them, or remove one`;
        host.notices.push(`plugin "${plugin.name}"${from(i)} skipped: ${why}`);
        continue;
      }
      first.set(plugin.name, i);
      if (disabled.has(plugin.name)) continue;
      await host.load(plugin);
    }
    host.#whyMissing = undefined;
    for (const name of disabled) {
      if (first.has(name)) continue;
      const near = nearestName(name, [...first.keys()]);
      const hint = near ? `did you mean "${near}"?` : `the plugins are ${[...first.keys()].join(", ") || "(none)"}`;
      host.notices.push(`disable: "${name}" matches no plugin and leaves nothing out; ${hint}`);
    }
    host.#warnUnmatchableRules();
    const sel = await selectSandbox(host.sandboxes.list(), host.settings, { cacheFile: join(dataDir(host.env), "sandbox-probe.json") });
    host.sandbox = sel.sandbox;
    // a preset without any sandbox plugin chose that: only a failed probe is worth a notice
    if (sel.notice && host.sandboxes.list().length) host.notices.push(sel.notice);
    return host;
  }

  /** Start-up warnings for permission rules that can never match (DESIGN.md lessons). */
  #warnUnmatchableRules(): void {
    const perms = this.settings.permissions ?? {};
    const names = this.tools.list().map((t) => t.name);
    for (const list of ["allow", "deny"] as const) {
      // MCP tools join at the first prompt, so their rules cannot be judged by name yet
      const rules = (perms[list] ?? []).filter((r) => !r.startsWith("mcp__"));
      for (const r of unmatchableRules(rules, names.length ? names : undefined, list)) {
        // a rule for a tool of a plugin that is not loaded is legitimate; a wrongly cased name is not
        if (r.why.startsWith("no tool is named") && !r.why.includes("did you mean")) continue;
        this.notices.push(`permission ${list} rule "${r.rule}" can never match: ${r.why}`);
      }
    }
  }

  /** Names of loaded plugins, in load order. */
  get plugins(): string[] {
    return [...this.#loaded.keys()];
  }

  /** Name and description of each loaded plugin, in load order (what `--version` lists). */
  get pluginDescriptions(): [name: string, description: string | undefined][] {
    return [...this.#loaded.values()].map(({ plugin }) => [plugin.name, plugin.description]);
  }

  /**
   * Loads one plugin; on failure undoes its partial registrations and records a notice. A loaded
   * plugin of the same name is unloaded first (a reload); {@link Host.create} never does that.
   */
  async load(plugin: Plugin): Promise<boolean> {
    if (!isPlugin(plugin)) {
      const err = new Error(`not a plugin: got ${describeValue(plugin)}; a plugin is definePlugin({ name, setup })`);
      this.failed.push({ name: String((plugin as { name?: unknown } | null)?.name ?? "?"), error: err });
      this.notices.push(`plugin skipped: ${err.message}`);
      return false;
    }
    if (this.#loaded.has(plugin.name)) await this.unload(plugin.name);
    const missing = (plugin.requires ?? []).filter((r) => !this.#loaded.has(r));
    if (missing.length) {
      const why = missing.map((r) => `requires "${r}", ${this.#whyMissing?.(r) ?? "which is not loaded"}`).join("; ");
      const err = new PluginError(plugin.name, "setup", new Error(why));
      this.failed.push({ name: plugin.name, error: err });
      this.notices.push(`${err.message}; started without it`);
      return false;
    }
    const loaded: Loaded = { plugin, disposers: [], onDispose: [] };
    const reg = <T extends { name: string }>(r: Registry<T>, problem?: (value: unknown) => string | undefined): PluginRegistry<T> => ({
      register: (value: T) => {
        // refused where the plugin registers it: in setup that skips the plugin with its name
        const bad = problem?.(value);
        if (bad) throw new TypeError(bad);
        if (loaded.abandoned) throw new Error(`plugin "${plugin.name}": registered after its setup ran out of time; the host started without it`);
        const d = r.register(value, plugin.name);
        loaded.disposers.push(d);
        return d;
      },
    });
    const hooks = pluginHooks(this.hooks, plugin.name, (d) => (loaded.abandoned ? d() : loaded.disposers.push(d)));
    const ctx: PluginContext = {
      name: plugin.name,
      hooks,
      providers: reg(this.providers, providerFactoryProblem),
      tools: reg(this.tools, toolDefinitionProblem),
      frontends: reg(this.frontends),
      sandboxes: reg(this.sandboxes),
      commands: reg(this.commands, commandProblem),
      skills: reg(this.skills),
      sessionStores: reg(this.sessionStores),
      settings: this.settings,
      cwd: this.cwd,
      host: this,
      // a notice that is not text is shown as this plugin's mistake, not raised: host notices are
      // also sent later as events, where it would fail a turn that names no one
      notice: (text) => this.notices.push(typeof text === "string" ? text : `plugin "${plugin.name}": ${noticeTextProblem(text)}`),
      onDispose: (fn) => loaded.onDispose.push(fn),
    };
    try {
      const pending = plugin.setup(ctx) as unknown;
      // a synchronous setup (most of them) gets no timer
      if (isThenable(pending)) await this.#settleInTime(pending, loaded);
    } catch (cause) {
      for (const d of loaded.disposers.splice(0).reverse()) d();
      const err = cause instanceof PluginError ? cause : new PluginError(plugin.name, "setup", cause);
      this.failed.push({ name: plugin.name, error: err });
      this.notices.push(`${err.message}; started without it`);
      return false;
    }
    this.#loaded.set(plugin.name, loaded);
    return true;
  }

  /**
   * Waits for an async setup, at most the setup time limit (with limit 0, for as long as it
   * takes). The timer is cleared as soon as the setup settles; until then it keeps the process
   * alive on purpose: a setup awaiting a promise that nothing will settle would otherwise let Node
   * exit silently, with status 0, mid start-up (with no limit, it then waits until stopped).
   * @throws Error when the limit passes first (the setup is then abandoned: its later
   * registrations are refused, its later failure ignored); the setup's own error otherwise.
   */
  async #settleInTime(pending: PromiseLike<unknown>, loaded: Loaded): Promise<void> {
    // An async setup with nothing to wait for (the default preset's hooks, mcp and the macOS
    // sandbox, on a machine or project that has none of theirs) has settled already: it wins
    // this race, and is spared the timer, which every start would otherwise pay for.
    if ((await Promise.race([pending, NOT_SETTLED])) !== NOT_SETTLED_VALUE) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = this.#setupTimeoutMs;
    const late = new Promise<never>((_, reject) => {
      if (limit === 0) {
        // no limit: only the keep-alive (setTimeout's longest delay, about 24.8 days, renewed)
        const keepAlive = () => (timer = setTimeout(keepAlive, 2 ** 31 - 1));
        keepAlive();
        return;
      }
      timer = setTimeout(() => {
        loaded.abandoned = true;
        reject(new Error(`did not finish within ${limit / 1000} s (LARIK_SETUP_TIMEOUT_MS sets the limit)`));
      }, limit);
    });
    try {
      await Promise.race([pending, late]);
    } finally {
      clearTimeout(timer);
      // an abandoned setup that fails later would otherwise be an unhandled rejection
      if (loaded.abandoned) Promise.resolve(pending).catch(() => {});
    }
  }

  /** Undoes every registration of a plugin and runs its dispose callbacks. */
  async unload(name: string): Promise<void> {
    const loaded = this.#loaded.get(name);
    if (!loaded) return;
    this.#loaded.delete(name);
    for (const d of loaded.disposers.reverse()) d();
    for (const fn of loaded.onDispose.reverse()) {
      try {
        await fn();
      } catch (err) {
        this.notices.push(new PluginError(name, "dispose", err).message);
      }
    }
  }

  /** The session store in force (the last registered), or undefined for in-memory sessions. */
  get sessionStore(): SessionStore | undefined {
    const list = this.sessionStores.list();
    return list[list.length - 1];
  }

  /**
   * Opens an agent on a new, resumed or forked session (see {@link Agent.open}).
   * @throws ConfigError for a bad spec or mode, a missing key, or a session that cannot be resumed.
   */
  async openAgent(opts: Omit<AgentOptions, "host"> = {}): Promise<Agent> {
    const agent = await Agent.open({ ...opts, host: this });
    this.#agents.add(agent);
    agent.onClose(() => this.#agents.delete(agent));
    return agent;
  }

  /** Closes every agent (firing `sessionEnd`) and unloads every plugin, newest first. */
  async dispose(reason = "exit"): Promise<void> {
    for (const a of [...this.#agents]) await a.close(reason);
    for (const name of [...this.#loaded.keys()].reverse()) await this.unload(name);
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (typeof v === "object" || typeof v === "function") && v !== null && typeof (v as { then?: unknown }).then === "function";
}

/** A short description of a value that should have been a plugin, for a notice. */
function describeValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (typeof v !== "object" && typeof v !== "function") return `${typeof v} ${String(v)}`;
  if (Array.isArray(v)) return `a list of ${v.length} (spread a preset into plugins: ...preset)`;
  const o = v as { name?: unknown; setup?: unknown };
  if (typeof o.name === "string") return `an object named "${o.name}" without a setup function`;
  return typeof o.setup === "function" ? "an object with setup but no string name" : "an object without name and setup";
}
