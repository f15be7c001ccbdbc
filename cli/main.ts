/**
 * The CLI driver: load config, build the host from the preset, parse the flags that the loaded
 * front ends contribute, then hand off to the front end that claims the run (a subcommand such
 * as `serve`, a flag such as `-p`, or the interactive TUI).
 */
import { parseArgs } from "node:util";
import {
  COMMON_OPTIONS,
  ConfigError,
  Host,
  PipeWriter,
  printAll,
  errorText,
  nearestName,
  startupMark,
  folderRootError,
  sessionLine,
  trapStopSignals,
  type CliArgs,
  type CliOption,
  type LoadedConfig,
  type Frontend,
  type Plugin,
  type StopSignalTrap,
} from "../kernel/index.js";
import { loadConfig, approveProjectConfig, displayPath } from "../kernel/index.js";
import { VERSION, versionText } from "./version.js";
import { helpText } from "./help.js";
import { asksHelpOrVersion, isInfoRun } from "./info-flags.js";
import { isPrintRun } from "./print-flag.js";

/**
 * Runs `larik` with `argv` (without node and script); resolves to the exit status.
 * @param early a stop-signal trap set before this code loaded (`cli.ts` sets one first thing), so
 *   that a signal while it loads counts too; `main` owns it from here and disposes it. Without
 *   one, `main` sets its own.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), early?: StopSignalTrap): Promise<number> {
  // A stop signal before a front end takes over (the code and config loading, plugins setting
  // up) stops larik there, said once, with the status a front end gives (130 for ctrl+c), rather
  // than killing it silently; a second SIGINT or SIGTERM still kills at once.
  const trap = early ?? trapStopSignals(() => {});
  try {
    return await run(argv, env, cwd, trap);
  } catch (err) {
    // a data, config or cache folder under a file is the environment's problem, said as such
    const folder = folderRootError(err, env);
    stderr.write(`larik: ${folder ?? errorText(err)}\n`);
    await stderr.flush();
    return err instanceof ConfigError || folder ? 2 : 1;
  } finally {
    trap.dispose();
  }
}

/** Notices and errors given here: a reader that has gone (`2>&1 | head -0`) must not turn a usage error's 2 into a crash. */
const stderr = new PipeWriter(() => process.stderr);

function isatty(fd: number): boolean {
  return process.getBuiltinModule("node:tty").isatty(fd);
}

/** The import of Ink that an interactive start begins early (see `run`), while it loads. */
let inkPreload: Promise<unknown> | undefined;

/**
 * Whether the early import of Ink (~0.5 s) is still loading. A run that ended without the TUI
 * (a mistyped flag in a terminal, an unknown session id) has no use for it, and the process would
 * otherwise stay until it had loaded: the launcher exits at once instead.
 */
export function inkStillLoading(): boolean {
  return inkPreload !== undefined;
}

async function run(argv: string[], env: NodeJS.ProcessEnv, cwd: string, early: StopSignalTrap): Promise<number> {
  if (early.signal) return stoppedEarly(early);
  if (argv[0] === "config") return configCommand(argv.slice(1), env, cwd);
  // An interactive run will need ink (~0.5 s to import): start loading it while config and
  // plugins load. Headless and server runs never import it.
  // isatty, not process.stdin.isTTY: touching process.stdin builds a stream (~3 ms) -p never reads
  // (-p first: tty loads net and stream, which a -p run needs only when it sends its request)
  const interactive = !isPrintRun(argv) && !isInfoRun(argv) && isatty(0) && isatty(1);
  if (interactive && !(argv[0] && !argv[0].startsWith("-"))) {
    inkPreload = import("ink").then(
      () => (inkPreload = undefined),
      () => (inkPreload = undefined),
    );
  }
  const cfg: LoadedConfig = await loadConfig(cwd, env).catch((err: unknown) => {
    // the help and the version describe the default preset then, with the error as a notice
    if (!(err instanceof ConfigError) || !asksHelpOrVersion(argv)) throw err;
    return { settings: {}, notices: [errorText(err)], plugins: [], pluginSources: [], disable: [], configFiles: [] };
  });
  startupMark("config");
  const preset: Plugin[] = cfg.preset ?? (await import("../presets/default.js")).default;
  const presetSource = cfg.preset ? "the config's preset" : "the default preset";
  const host = await Host.create({
    plugins: [...preset, ...cfg.plugins],
    sources: [...preset.map(() => presetSource), ...cfg.plugins.map((_, i) => cfg.pluginSources[i] ?? "the config's plugins")],
    disable: cfg.disable,
    cwd,
    settings: cfg.settings,
    env,
    notices: cfg.notices,
  });
  startupMark("plugins");
  try {
    // A signal is delivered by the event loop, which may not have turned since it came (code and
    // config load mostly synchronously); the trap's disposal would then drop it. One turn first.
    await new Promise((turned) => setImmediate(turned));
    startupMark("signal turn");
    if (early.signal) return stoppedEarly(early);
    return await dispatch(host, argv, early);
  } finally {
    await host.dispose();
  }
}

/** The end of a run a stop signal stopped before its front end began. */
async function stoppedEarly(early: StopSignalTrap): Promise<number> {
  stderr.write(`! stopped by ${early.signal}\n`);
  await stderr.flush();
  return early.exitStatus(0);
}

/**
 * A front end shows the host's notices itself; an answer or a refusal given here, without one,
 * shows them first on stderr. The notice is often the cause of a usage error (a config whose
 * preset did not load leaves no front end to take `-p`).
 */
function showNotices(host: Host): void {
  for (const n of host.notices) stderr.write(`! ${n}\n`);
}

async function dispatch(host: Host, argv: string[], early: StopSignalTrap): Promise<number> {
  const frontends = host.frontends.list();
  const sub = argv[0] && !argv[0].startsWith("-") ? frontends.find((f) => f.subcommand === argv[0]) : undefined;
  const typo = sub ? undefined : subcommandTypo(argv, ["config", ...frontends.flatMap((f) => (f.subcommand ? [f.subcommand] : []))]);
  if (typo) {
    showNotices(host);
    throw new ConfigError(typo);
  }
  const rest = sub ? argv.slice(1) : argv;
  const options: Record<string, CliOption> = { ...COMMON_OPTIONS };
  for (const f of sub ? [sub] : frontends.filter((f) => !f.subcommand)) Object.assign(options, f.options ?? {});
  let args: CliArgs;
  try {
    const parsed = parseArgs({
      args: rest,
      options: Object.fromEntries(
        Object.entries(options).map(([k, o]) => [k, { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) }]),
      ),
      allowPositionals: true,
      strict: true,
    });
    args = { values: parsed.values as CliArgs["values"], positionals: parsed.positionals };
  } catch (err) {
    showNotices(host);
    const text = argsProblem(err as Error & { code?: string }, rest, options);
    // the flag exists, but the plugin that brings it is not loaded: say so rather than "unknown"
    if (/'(-p|--print)'/.test(text) && !frontends.some((f) => f.flag === "print")) {
      throw new ConfigError(`${text}: -p comes from the headless plugin, which is not loaded (larik --version lists the loaded plugins)`);
    }
    throw new ConfigError(`${text} (see larik --help)`);
  }
  if (args.values.help || args.values.version || args.values.sessions) showNotices(host);
  if (args.values.help) return printAll(helpText(host, options));
  if (args.values.version) return printAll(versionText(host.pluginDescriptions));
  if (args.values.sessions) {
    if (args.positionals.length) throw new ConfigError(`--sessions takes no prompt (got "${args.positionals.join(" ")}"): run larik --sessions alone`);
    const output = args.values.output;
    if (output !== undefined && output !== "text" && output !== "json") throw new ConfigError(`--output must be text or json (got "${output}")`);
    return listSessions(host, output === "json");
  }
  const frontend = sub ?? pickFrontend(frontends, args);
  // without a terminal, the run that was meant is still the interactive one, or a forgotten -p
  const meant = frontend ?? frontends.find((f) => f.interactive);
  if (!sub && meant) assertOptionsFor(meant, frontends, args);
  if (!frontend) {
    showNotices(host);
    throw new ConfigError(
      process.stdin.isTTY
        ? "no interactive front end is loaded: use -p \"prompt\" for headless mode"
        : "not a terminal: use -p \"prompt\" (or pipe a prompt into larik -p) for headless mode",
    );
  }
  // the front end traps the signals itself from here (nothing above waited since the last look,
  // so the loop has delivered no signal since)
  startupMark("flags");
  early.dispose();
  return frontend.run(host, args);
}

/**
 * Every front end's options are parsed together, since which one runs is known only after
 * parsing; an option of another front end (`--output` without `-p`) would be ignored silently.
 * @throws ConfigError naming the option and the front end it belongs to.
 */
function assertOptionsFor(frontend: Frontend, frontends: Frontend[], args: CliArgs): void {
  for (const [key, value] of Object.entries(args.values)) {
    if (value === undefined || key in COMMON_OPTIONS || frontend.options?.[key]) continue;
    const owner = frontends.find((f) => f.options?.[key]);
    if (!owner) continue;
    const flag = owner.flag ? owner.options?.[owner.flag] : undefined;
    if (!flag) throw new ConfigError(`--${key} belongs to another front end (${owner.description}): drop --${key}`);
    const name = flag.short ? `-${flag.short}` : `--${owner.flag}`;
    throw new ConfigError(`--${key} works only with ${name}: add ${name}, or drop --${key}`);
  }
}

/**
 * One line for a `parseArgs` error, with the fix for the two cases whose Node messages run to
 * three lines: a flag's value that starts with a dash, and a prompt that starts with one. A value
 * that starts with a dash and that the option's `check` refuses (`--timeout -5s`) gets the check's
 * message, which says what a valid value is: `--timeout=-5s` would only be refused next.
 * @throws ConfigError from that check.
 */
function argsProblem(err: Error & { code?: string }, argv: string[], options: Record<string, CliOption>): string {
  // Node's wording, in the lower case of Larik's other messages
  const first = errorText(err)
    .split("\n")[0]!
    .replace(/\. To specify.*$/, "")
    .replace(/^Unknown option/, "unknown option")
    .replace(/^Option '(-[\w-]+)(?: <value>)?' argument missing$/, "$1 needs a value")
    .replace(/^Option '(-[\w-]+)' does not take an argument$/, "$1 takes no value");
  // the same code also says "does not take an argument" (--fork=yes) and "argument missing"
  if (err.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && first.includes("is ambiguous")) {
    const flag = /'(--?[\w-]+)'/.exec(first)?.[1];
    const at = flag ? argv.indexOf(flag) : -1;
    const value = at >= 0 ? argv[at + 1] : undefined;
    if (flag && value?.startsWith("-")) {
      const option = flag.startsWith("--") ? options[flag.slice(2)] : Object.values(options).find((o) => o.short === flag.slice(1));
      // throws its own line, which already says what to write; a value that is one of the flags
      // (`--timeout --mode yolo`) is a value forgotten, not a bad one
      const isFlag = value.startsWith("--") ? value.slice(2).split("=")[0]! in options : Object.values(options).some((o) => o.short === value.slice(1));
      if (!isFlag) option?.check?.(value);
      return `${flag} needs a value, and "${value}" looks like a flag: write ${flag}=${value} if it is the value`;
    }
  }
  if (err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const opt = /'(-[^']*)'/.exec(first)?.[1];
    const word = opt ? argv.find((a) => a === opt || (opt.length === 2 && a.startsWith(opt))) : undefined;
    // a word with spaces is a prompt, not a mistyped flag
    if (word && /\s/.test(word)) return `${first}: a prompt that starts with "-" goes after --, as in larik -p -- "${word}"`;
    const near = opt?.startsWith("--") ? nearestName(opt.slice(2), Object.keys(options)) : undefined;
    if (near) return `${first}: did you mean --${near}?`;
  }
  return first;
}

/**
 * The line for a first word that is a subcommand mistyped (`larik serv`, one edit from
 * `serve`), which would otherwise start a session with it as the prompt; undefined for anything
 * else. Only a word alone or followed by flags counts (`larik fix the bug` is a prompt, as is
 * anything with `-p`, a space or punctuation in it), and the line says how to send it as a
 * prompt after all.
 */
function subcommandTypo(argv: string[], names: string[]): string | undefined {
  const word = argv[0];
  if (!word || !/^[a-z][a-z-]*$/i.test(word) || names.includes(word) || isPrintRun(argv)) return undefined;
  if (argv[1] !== undefined && !argv[1].startsWith("-")) return undefined;
  // one edit (`serv`, `confg`, `sevre`): two would take real one-word prompts (`solve`, `save`)
  const near = nearestName(word, names, 1);
  if (!near) return undefined;
  return `unknown command '${word}': did you mean larik ${near}? (to send "${word}" as a prompt, write larik -- ${word}, or larik -p ${word} for a headless run)`;
}

function pickFrontend(frontends: Frontend[], args: CliArgs): Frontend | undefined {
  const byFlag = frontends.find((f) => f.flag && args.values[f.flag] === true);
  if (byFlag) return byFlag;
  if (!process.stdin.isTTY || !process.stdout.isTTY) return undefined;
  return frontends.find((f) => f.interactive);
}

/**
 * `larik --sessions`: this folder's sessions, newest first, one `sessionLine` each; with
 * `--output json`, one object per line instead (`{"id","updated","title","fork_of"?}`, `updated`
 * an ISO 8601 UTC time), and nothing when there are none, for scripts (`| head -1 | jq -r .id`).
 */
async function listSessions(host: Host, json: boolean): Promise<number> {
  const store = host.sessionStore;
  if (!store) throw new ConfigError("no session store plugin is loaded");
  const list = await store.list(host.cwd);
  if (json) {
    return printAll(
      ...list.map((s) => `${JSON.stringify({ id: s.id, updated: new Date(s.updated).toISOString(), title: s.title, ...(s.fork_of ? { fork_of: s.fork_of } : {}) })}\n`),
    );
  }
  if (!list.length) {
    // sessions belong to the folder they ran in, as -c says too
    const atRoot = host.projectRoot !== host.cwd && (await store.list(host.projectRoot)).length > 0;
    return printAll(`no sessions in ${host.cwd}${atRoot ? ` (the project root ${host.projectRoot} has some: run larik --sessions there)` : ""}\n`);
  }
  return printAll(...list.map((s) => `${sessionLine(s)}\n`));
}

/** `larik config approve`: trusts the project's `larik.config.ts` and the files it loads, as they are now. */
async function configCommand(argv: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  if (argv[0] !== "approve" || argv.length > 1) {
    const usage = "usage: larik config approve   (trust this project's larik.config.ts and the files it loads, as they are now)";
    const near = argv[0] !== undefined && argv[0] !== "approve" && argv.length === 1 ? nearestName(argv[0], ["approve"]) : undefined;
    throw new ConfigError(near ? `unknown config command '${argv[0]}': did you mean larik config approve?` : usage);
  }
  const approved = await approveProjectConfig(cwd, env);
  if (!approved) return printAll("no larik.config.ts in this project\n");
  const n = approved.files.length;
  const shown = approved.files.slice(0, 5).map((f) => displayPath(f, cwd, env)).join(", ");
  const files = n ? `, with the ${n === 1 ? "file" : `${n} files`} it loads: ${shown}${n > 5 ? ` and ${n - 5} more` : ""}` : "";
  const d = approved.dirs.length;
  // said here, so that a notice about a file the config never loaded is no surprise later
  const dirs = d ? `; a module file added, removed or relinked in ${d === 1 ? "its folder" : `its ${d} folders`} needs approving again` : "";
  // run from a TUI's `!` prompt, the approval would seem not to work until the next start
  return printAll(`approved ${approved.path} (sha256 ${approved.hash.slice(0, 16)})${files}${dirs}\nit runs from the next start of larik (a session already open keeps what it loaded)\n`);
}

export { VERSION };
