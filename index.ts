/**
 * The `larik` package entry for embedders: the kernel's public API plus `createHost`, which
 * builds a host from a preset (default: the CLI's) or a list of plugins, with no front end.
 *
 * ```ts
 * import { createHost } from "larik";
 * const host = await createHost({ cwd: "/path/to/project" });
 * const agent = await host.openAgent({ model: "anthropic/claude-sonnet-4-5", mode: "yolo" });
 * for await (const ev of agent.run("list the files")) console.log(ev.type);
 * ```
 */
export * from "./kernel/index.js";
import { ConfigError, Host, loadConfig, type Plugin, type Settings } from "./kernel/index.js";
import type { ServerHandle, StartOptions } from "./plugins/server/server.js";

export type { ServerHandle, StartOptions as ServerOptions };

export interface CreateHostOptions {
  /** Plugins in load order. Default: the default preset (`presets/default.ts`). */
  plugins?: Plugin[];
  /** Extra plugins loaded after `plugins`. */
  extraPlugins?: Plugin[];
  /** Plugin names to leave out. */
  disable?: string[];
  /** Project directory (default `process.cwd()`). */
  cwd?: string;
  /** Settings to use instead of loading the layered JSON settings of `cwd`. */
  settings?: Settings;
  env?: NodeJS.ProcessEnv;
}

/**
 * Builds a host with no front end. Unless `settings` is given, loads the layered settings of
 * `cwd` and its config files (`larik.config.ts`: preset, plugins, disable) the way the CLI does.
 * Never throws for a bad plugin: see `host.notices` and `host.failed`.
 * @throws ConfigError when a personal settings or config file is invalid.
 */
export async function createHost(opts: CreateHostOptions = {}): Promise<Host> {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  let settings = opts.settings;
  const notices: string[] = [];
  let configPlugins: Plugin[] = [];
  let preset: Plugin[] | undefined;
  const disable = [...(opts.disable ?? [])];
  if (!settings) {
    const loaded = await loadConfig(cwd, env);
    settings = loaded.settings;
    notices.push(...loaded.notices);
    configPlugins = loaded.plugins;
    preset = loaded.preset;
    disable.push(...loaded.disable);
  }
  const plugins = opts.plugins ?? preset ?? (await import("./presets/default.js")).default;
  return Host.create({ plugins: [...plugins, ...configPlugins, ...(opts.extraPlugins ?? [])], disable, cwd, settings, env, notices });
}

/**
 * Serves `host` over the HTTP + SSE API of `larik serve` (docs/server.md), for an application that
 * builds its own host: `opts.port` 0 picks a free port; `opts.token` is the bearer token clients
 * send. The server's code (h3) loads at this call, not with the package.
 * @throws ConfigError for a non-loopback `opts.hostname` without `allowRemote: true`, as
 *   `larik serve --addr` without `--allow-remote`.
 * @throws Error naming the address when it cannot be bound (port in use, no permission).
 */
export async function startServer(host: Host, opts: StartOptions): Promise<ServerHandle> {
  const [{ startServer: start }, { isLoopbackHost }] = await Promise.all([import("./plugins/server/server.js"), import("./plugins/server/host-check.js")]);
  const hostname = opts.hostname ?? "127.0.0.1";
  if (!opts.allowRemote && !isLoopbackHost(hostname)) {
    throw new ConfigError(`hostname ${hostname} is not a loopback address: pass allowRemote: true to listen there (anyone who can reach it and has the token controls this machine)`);
  }
  return start(host, opts);
}
