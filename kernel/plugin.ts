/**
 * The plugin contract: a plugin is a value with a name, optional `requires` and a cheap
 * `setup(ctx)` that registers factories and taps. Heavy modules are imported lazily on first use.
 */
import type { PluginHooks } from "./hooks.js";
import type { Disposer } from "./registry.js";
import type { AnyTool } from "./tools.js";
import type { Command, Frontend, ProviderFactory, Sandbox, Skill } from "./registries.js";
import type { SessionStore } from "./session.js";
import type { Settings } from "./config.js";

/** A registry as one plugin sees it: registrations are owned by the plugin and undoable. */
export interface PluginRegistry<T> {
  register(value: T): Disposer;
}

/** What `setup` receives. Everything registered through it is undone when the plugin unloads. */
export interface PluginContext {
  /** This plugin's name. */
  readonly name: string;
  readonly hooks: PluginHooks;
  readonly providers: PluginRegistry<ProviderFactory>;
  readonly tools: PluginRegistry<AnyTool>;
  readonly frontends: PluginRegistry<Frontend>;
  readonly sandboxes: PluginRegistry<Sandbox>;
  readonly commands: PluginRegistry<Command>;
  readonly skills: PluginRegistry<Skill>;
  readonly sessionStores: PluginRegistry<SessionStore>;
  /** Merged settings of this project (read-only view). */
  readonly settings: Readonly<Settings>;
  /** The directory Larik runs in. */
  readonly cwd: string;
  /** The host itself, for plugins that drive agents (front ends, the server). */
  readonly host: import("./host.js").Host;
  /**
   * A one-line start-up notice (shown as `! …` by headless, a notice row by the TUI). It goes to
   * the host, so one made later reaches every open agent at its next turn (every session of a
   * server); in a hook or a tool use the payload's `notice` (`call.notice`, `tool.notice`), which
   * shows the line in the running turn only.
   */
  notice(text: string): void;
  /** Runs `fn` when the plugin is unloaded or the host disposed. */
  onDispose(fn: () => void | Promise<void>): void;
}

/**
 * A plugin (DESIGN.md "The plugin contract"): `name` is unique in a host; `setup` registers
 * through `ctx` and should be cheap. A throw in `setup` skips the plugin with a notice, and so
 * does a `setup` still unfinished after the host's time limit (10 s, `LARIK_SETUP_TIMEOUT_MS`;
 * `0` for none).
 */
export interface Plugin {
  name: string;
  /** One line on what it contributes; `larik --version` shows it. */
  description?: string;
  /**
   * Names of plugins that must be loaded before this one (earlier in the list, not disabled, set
   * up without error). When one is not, this plugin is skipped with a notice that says why
   * (`requires "b", which comes after it in the plugin list: …`). The host does not reorder the
   * list, and unloading a required plugin later leaves this one loaded.
   */
  requires?: string[];
  setup(ctx: PluginContext): void | Promise<void>;
}

/** Identity helper that types a plugin value. */
export function definePlugin(plugin: Plugin): Plugin {
  return plugin;
}

/** True for a value shaped like a plugin (`{ name, setup }`). */
export function isPlugin(value: unknown): value is Plugin {
  return (
    !!value &&
    typeof value === "object" &&
    typeof (value as Plugin).name === "string" &&
    typeof (value as Plugin).setup === "function"
  );
}
