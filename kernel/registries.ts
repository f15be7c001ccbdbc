/**
 * What each registry holds (DESIGN.md, "The plugin contract"). The kernel defines the shapes;
 * plugins fill them.
 */
import type { Provider } from "./types.js";
import type { Host } from "./host.js";
import type { Agent } from "./agent.js";
import { nearestName } from "./kit/nearest-name.js";
import { errorText } from "./kit/one-line.js";

/** A model's catalog entry. Prices in USD per million tokens; windows in tokens. */
export interface CatalogEntry {
  /** Provider name that owns the model (`anthropic`, `openai`, ...). */
  provider: string;
  /** Model id as the provider knows it. */
  id: string;
  context_window?: number;
  max_output?: number;
  input_price?: number;
  output_price?: number;
  cache_read_price?: number;
  cache_write_price?: number;
}

/** Resolved settings of one provider (`providers.<name>` merged with the factory's defaults). */
export interface ProviderConfig {
  /** The name users write in specs (`anthropic`, `openrouter`, `my-proxy`). */
  name: string;
  base_url?: string;
  /** The variables that move this endpoint (`OPENAI_BASE_URL`), for error messages; see {@link endpointHint}. */
  base_url_env?: string[];
  /** The key itself, already resolved from `api_key` or `api_key_env`. */
  api_key?: string;
  /** The variable the key was looked up in (for error messages). */
  api_key_env?: string;
  /** The context size to ask a local server for, in tokens (Ollama's `num_ctx`). */
  context_length?: number;
  /** Seconds of silence before a stream is abandoned; negative waits forever. */
  stall_timeout?: number;
  headers?: Record<string, string>;
}

/**
 * A provider factory: one per API family or preset. `create` should import the adapter code
 * lazily so that registering is free.
 */
export interface ProviderFactory {
  name: string;
  /** The API family for custom `providers.<name>.type` entries; defaults to `name`. */
  type?: string;
  /** Environment variables holding the key, first found wins. Empty when no key is needed. */
  keyEnv?: string[];
  /** Environment variable that moves the endpoint (`ANTHROPIC_BASE_URL`). */
  baseUrlEnv?: string[];
  defaultBaseUrl?: string;
  /**
   * Whether a base URL may leave out the scheme (`127.0.0.1:11434`, as `OLLAMA_HOST` is often
   * written); the adapter then adds `http://`. Otherwise a base URL must start with http(s)://.
   */
  schemelessBaseUrl?: boolean;
  /** Default stall timeout in seconds (300; local servers 900). */
  stallTimeout?: number;
  /** Known models of this provider. */
  models?: CatalogEntry[];
  create(config: ProviderConfig): Provider | Promise<Provider>;
}

/**
 * What is wrong with a value registered as a provider factory, as one line naming it, or
 * undefined. Checked at registration, so a plugin's slip (`keyEnv: "MY_KEY"` for a list, no
 * `create`) skips the plugin with its name rather than failing when the model is first used.
 */
export function providerFactoryProblem(factory: unknown): string | undefined {
  if (typeof factory !== "object" || factory === null) return `a provider is { name, create(config), … }, got ${factory === null ? "null" : typeof factory}`;
  const f = factory as Record<string, unknown>;
  if (typeof f.name !== "string" || !f.name) return `a provider needs a name, got ${JSON.stringify(f.name) ?? "undefined"}`;
  const who = `provider "${f.name}"`;
  if (typeof f.create !== "function") return `${who}: create(config) must be a function that returns the Provider`;
  for (const key of ["keyEnv", "baseUrlEnv"]) {
    const v = f[key];
    if (v !== undefined && !(Array.isArray(v) && v.every((x) => typeof x === "string"))) return `${who}: ${key} must be a list of variable names, got ${JSON.stringify(v)}`;
  }
  if (f.models !== undefined && !Array.isArray(f.models)) return `${who}: models must be a list of catalog entries`;
  return undefined;
}

/** One CLI option a front end or command contributes (node:util parseArgs shape). */
export interface CliOption {
  type: "boolean" | "string";
  short?: string;
  multiple?: boolean;
  description: string;
  /** Shown in `--help` after the flag, e.g. `<id-prefix>`. */
  value?: string;
  /**
   * Checks a string option's value: throws a ConfigError that says what a valid value is. The
   * CLI asks it about a value that starts with a dash (`--timeout -5s`), which the parser takes
   * for a flag: a value that would be refused anyway is refused with what is valid, rather than
   * with advice to write `--timeout=-5s`. The front end still validates the values it reads.
   */
  check?(value: string): void;
}

/** Parsed command line given to a front end. */
export interface CliArgs {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/**
 * A front end claims a CLI mode and consumes the agent's event stream: the TUI (`default`),
 * headless (`flag: "print"`, i.e. `-p`) or the server (`subcommand: "serve"`).
 */
export interface Frontend {
  name: string;
  description: string;
  /** Claims `larik <subcommand>`. */
  subcommand?: string;
  /** Claims the run when this boolean option is set (e.g. `print` for `-p`). */
  flag?: string;
  /** Claims a plain interactive run (no subcommand, no claiming flag). */
  interactive?: boolean;
  options?: Record<string, CliOption>;
  /** Runs the front end; resolves to the process exit status. */
  run(host: Host, args: CliArgs): Promise<number>;
}

/**
 * How a sandbox backend runs one shell command. A runner spawns `file args` with `env`, and
 * opens a pipe at each of `infoFd`, `statusFd` and `outputFd` it sets (`sandboxStdio` in
 * kernel/kit/sandbox-backend.ts builds that stdio array; without them the wrapper fails on its
 * first write).
 */
export interface SandboxedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  /**
   * A file descriptor (3 or more) on which the wrapper writes JSON with `"child-pid": N`
   * (bubblewrap's `--info-fd` format) once the sandbox's first process exists, then closes it.
   * That process is outside the runner's process group (bwrap starts it in a new session) and
   * is the sandbox's pid-namespace init, so a kill must name it: SIGKILL to it ends everything
   * inside. `readChildPid` in kernel/kit/sandbox-backend.ts reads it.
   */
  infoFd?: number;
  /**
   * A file descriptor (3 or more) on which the wrapper writes the command's exit status as one
   * decimal line when the command's shell exits. The wrapper itself lives on while processes the
   * command left running (`server &`) do, so the runner takes this line, not the wrapper's
   * exit, as the command's end. `readExitStatus` in kernel/kit/sandbox-backend.ts reads it.
   */
  statusFd?: number;
  /**
   * A file descriptor (3 or more) the command's stdout and stderr go to, the wrapper's own
   * stdout and stderr then carrying only its messages. Set it when the wrapper's own processes
   * hold their stdout for the sandbox's life (bwrap's init does): only a pipe of the command's own
   * closes once every process writing the command's output is gone.
   */
  outputFd?: number;
}

/** A sandbox probe's outcome, with the reason and fix when it failed. */
export interface ProbeResult {
  ok: boolean;
  reason?: string;
  fix?: string;
}

/** A sandbox backend for bash (`bubblewrap`, `seatbelt`, `none`). */
export interface Sandbox {
  name: string;
  /** Checks the backend can start here; a failed probe falls back to `none` with `reason`. */
  probe(): Promise<ProbeResult>;
  /**
   * A cheap fingerprint of what the probe depends on (the binary's path and mtime, the OS
   * release). When it matches a successful probe cached less than a day ago, start-up skips
   * the probe (it costs a process spawn before the first request).
   */
  probeKey?(): string | undefined;
  /** Wraps `bash -c <command>` run in `cwd`. */
  wrap(command: string, opts: { cwd: string; projectRoot: string; env: Record<string, string> }): SandboxedCommand;
  /** One-line summary for the system prompt and `/sandbox`. */
  summary?: string;
}

/**
 * What a front end lets commands do beyond printing. Every method is optional: a command that
 * needs one the front end lacks says so to the user.
 */
export interface CommandUi {
  /** Makes `agent` the front end's current agent (after `/new`, `/resume`, `/fork`, `/rewind`). */
  switchAgent?(agent: Agent): void;
  /** Puts text into the composer for editing (`/rewind` puts the prompt back). */
  setInput?(text: string): void;
  /** Copies text to the clipboard (`/copy`). */
  copy?(text: string): Promise<void>;
  /** Ends the interactive session (`/quit`). */
  quit?(): void;
}

/** What a slash command receives. */
export interface CommandContext {
  host: Host;
  agent: Agent;
  /** Text after the command name. */
  args: string;
  /** Shows a line to the user (rendered as a notice by every front end). */
  print(text: string): void;
  ui?: CommandUi;
  /**
   * Text piped to a headless run besides the prompt argument (`git log | larik -p /review`), read
   * at the first call and trimmed at its end; undefined when nothing was piped, and absent in
   * front ends without one (the TUI, the server). A command that calls it has taken the text:
   * the front end no longer appends it to the prompt the command returns (which it does, after a
   * blank line, for a command that does not call it). `/review` puts it inside its data block.
   */
  stdin?: () => Promise<string | undefined>;
}

/** A slash command (`/undo`, `/cost`, a skill, a custom command). */
export interface Command {
  name: string;
  description: string;
  /** Argument hint such as `[n] [files|keep]`. */
  args?: string;
  /** Palette section: `commands`, `skills`, `custom commands`, `MCP prompts`. */
  section?: string;
  /** Refused while a turn runs (it changes the model, the context or files). */
  idleOnly?: boolean;
  /**
   * Runs the command. Returning `{ prompt }` sends that text as the user's prompt
   * (skills and custom commands expand this way).
   */
  run(ctx: CommandContext): Promise<void | CommandPrompt>;
}

/** What a command that makes a prompt returns: the text sent as the user's turn. */
export interface CommandPrompt {
  prompt: string;
  /**
   * `false` when the prompt carries data gathered by the command (a diff, a pull request's text):
   * front ends then send it as it is, without attaching the files its `@` tokens name
   * (LARIK-REFERENCE "untrusted content is data"; `/review`, §13). Default true.
   */
  mentions?: boolean;
}

/**
 * What is wrong with a value registered as a slash command, as one line naming it, or undefined.
 * A name is what {@link parseCommandLine} can match (letters, digits, `_ : . -`): a command
 * registered as `/deploy` could never be typed, and one without `run` fails only when used.
 */
export function commandProblem(command: unknown): string | undefined {
  if (typeof command !== "object" || command === null) return `a command is { name, description, run(ctx) }, got ${command === null ? "null" : typeof command}`;
  const c = command as Record<string, unknown>;
  if (typeof c.name !== "string") return `a command needs a string name, got ${typeof c.name}`;
  const who = `command "${c.name}"`;
  if (!/^[\w:.-]+$/.test(c.name)) return `${who}: a name is letters, digits, _ : . or -${c.name.startsWith("/") ? `, without the slash ("${c.name.slice(1)}"): users type /${c.name.slice(1)}` : ""}`;
  if (typeof c.description !== "string") return `${who}: description must be a string (the palette and /help show it)`;
  if (typeof c.run !== "function") return `${who}: run(ctx) must be a function`;
  return undefined;
}

/**
 * A prompt that runs a slash command: `/name args`, the slash at the very start (a leading space
 * makes the text a plain prompt, and `/etc/hosts is wrong` is one too). `args` has no trailing
 * white space. Undefined for any other text. Shared by every front end that takes commands.
 */
export function parseCommandLine(text: string): { name: string; args: string } | undefined {
  const m = /^\/([\w:.-]+)(?:\s+([\s\S]*?))?\s*$/.exec(text);
  return m ? { name: m[1]!, args: m[2] ?? "" } : undefined;
}

/**
 * What a prompt that starts with `/` asks for, by the one rule every front end applies (the TUI,
 * `larik -p`): undefined when it is a plain prompt for the model, else the command line with the
 * registered command it names (`command` undefined: an unknown command, which a front end refuses
 * with {@link nearestCommand}'s hint rather than sending a typo to the model). Plain prompts are
 * text that {@link parseCommandLine} does not take (a leading space, `/api/users returns 500`)
 * and text whose first word has a dot and names no command: a path or a version
 * (`/README.md is stale`, `/v1.2 broke it`), not a mistyped command. Commands that register late,
 * MCP prompts, never have a dot in their names (`mcp__server__prompt`); skills and custom
 * commands, which may, are registered before a prompt is read.
 * @param commands the host's command registry (`host.commands`)
 */
export function slashCommand(
  commands: { get(name: string): Command | undefined },
  text: string,
): { name: string; args: string; command: Command | undefined } | undefined {
  const line = parseCommandLine(text);
  if (!line) return undefined;
  const command = commands.get(line.name);
  if (!command && line.name.includes(".")) return undefined;
  return { ...line, command };
}

/**
 * The one-line error of a command that threw, as every front end shows it: the message names the
 * command once (`/mode bogus: use one of …` stays as it is; `no model` becomes `/compact: no
 * model`), since many messages already start with the command line.
 */
export function commandErrorText(command: Pick<Command, "name">, err: unknown): string {
  const text = errorText(err);
  const name = `/${command.name}`;
  return text === name || text.startsWith(`${name} `) || text.startsWith(`${name}:`) ? text : `${name}: ${text}`;
}

/** The registered command nearest to a mistyped `name`, for "did you mean /compact?". */
export function nearestCommand(commands: { list(): Command[] }, name: string): string | undefined {
  return nearestName(name, commands.list().map((c) => c.name));
}

/** A discovered skill (`SKILL.md`), loaded on demand. */
export interface Skill {
  name: string;
  description: string;
  /** Where it was found (shown by `/skills`). */
  source: string;
  userInvocable?: boolean;
  modelInvocable?: boolean;
  body(): Promise<string>;
}

/**
 * What to check when a provider's endpoint cannot be reached, for `PostJsonOptions.hint`:
 * `check providers.<name>.base_url or <VARIABLE>`, naming the variables only for the vendor's own
 * provider (a custom `providers.<name>` entry is moved by its settings alone).
 */
export function endpointHint(config: ProviderConfig): string {
  const env = config.base_url_env?.length ? ` or ${config.base_url_env.join(" or ")}` : "";
  return `check providers.${config.name}.base_url${env}`;
}
