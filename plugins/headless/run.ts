/**
 * The headless run: prompt from arguments or piped stdin, one turn, events rendered by
 * `print.ts`, permission requests denied with a reason that says how to allow them.
 */
import {
  agentOptionsFromArgs,
  commandErrorText,
  ConfigError,
  expandMentions,
  hasMentions,
  nearestCommand,
  parseCommandLine,
  parseDuration,
  type Agent,
  type AgentEvent,
  type Block,
  type CliArgs,
  type CommandPrompt,
  type Host,
  type AnyTool,
  permissionCall,
  type PermissionChecker,
  type PermissionMode,
  PipeWriter,
  SIGPIPE_STATUS,
  slashCommand,
  stopSignalReason,
  toolInputSummary,
  trapStopSignals,
} from "../../kernel/index.js";
import { outputFormat } from "./output-format.js";
import { JsonPrinter, TextPrinter, type Printer } from "./print.js";

/**
 * Reads stdin to its end, or until `firstByteMs` passes with nothing (not even its end) arrived,
 * or until `signal` aborts; in those two cases stdin is let go (its open handle would keep the
 * process alive after the turn) and what was read so far is dropped.
 */
function readStdin(signal: AbortSignal, firstByteMs?: number): Promise<{ text: string; timedOut?: boolean }> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const off = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      stdin.off("data", onData).off("end", onEnd).off("error", onError);
    };
    const letGo = (result: { text: string; timedOut?: boolean }) => {
      off();
      stdin.destroy();
      resolve(result);
    };
    const timer = firstByteMs === undefined ? undefined : setTimeout(() => letGo({ text: "", timedOut: true }), firstByteMs);
    const onAbort = () => letGo({ text: "" });
    const onData = (c: Buffer) => {
      clearTimeout(timer);
      chunks.push(c);
    };
    const onEnd = () => {
      off();
      resolve({ text: Buffer.concat(chunks).toString("utf8") });
    };
    const onError = (err: Error) => {
      off();
      reject(err);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort);
    stdin.on("data", onData).on("end", onEnd).on("error", onError);
  });
}

/**
 * How long `-p "prompt"` waits for the first byte of a piped stdin before going on without it
 * (ms): Claude Code waits 3 s too. A pipe nobody writes to and nobody closes (a script's inherited
 * stdin, a CI runner's) must not hang the run.
 */
const STDIN_FIRST_BYTE_MS = 3000;

/** What `-p` says when it went on without a silent stdin pipe: the wait, and how to skip it. */
const STDIN_SILENT_NOTICE = `stdin: nothing arrived within ${STDIN_FIRST_BYTE_MS / 1000} s, going on without it (redirect it, < /dev/null, to skip the wait)`;

/**
 * What stdin holds for `-p "prompt"` (text appended to the prompt), by what fd 0 is: a regular
 * file (`< log.txt`) is read whole; a pipe or socket (`cat log.txt | larik -p …`) is read to its
 * end once its first byte (or its end) has come within `firstByteMs`, else `{ timedOut: true }`
 * and stdin is let go; anything else (a terminal, `< /dev/null`, a closed fd) is not read.
 * `fstat`, not `process.stdin`, decides: building that stream costs a run that never reads it.
 * `signal` (a stop signal, the reader of the output gone) ends the wait with nothing read.
 */
async function pipedStdin(firstByteMs = STDIN_FIRST_BYTE_MS, signal?: AbortSignal): Promise<{ text: string; timedOut?: boolean }> {
  const fs = process.getBuiltinModule("node:fs");
  let st: import("node:fs").Stats;
  try {
    st = fs.fstatSync(0);
  } catch {
    return { text: "" };
  }
  const until = signal ?? new AbortController().signal;
  if (st.isFile()) return readStdin(until);
  if (!st.isFIFO() && !st.isSocket()) return { text: "" };
  return readStdin(until, firstByteMs);
}

/**
 * Why a headless ask was denied; names the ways to allow it: `modes` (the `--mode` values that
 * would allow the call, see {@link modesThatAllow}) and an allow rule, `suggested` when the
 * checker offered one.
 */
export function denialReason(suggested: string | undefined, modes: readonly PermissionMode[]): string {
  const rule = suggested ? `an allow rule such as "${suggested}"` : "an allow rule";
  const ways = modes.length ? `${modes.map((m) => `--mode ${m}`).join(" or ")}, or ${rule}` : rule;
  return `headless mode cannot ask for permission: rerun with ${ways} in permissions.allow`;
}

/**
 * The `--mode` values besides the run's own that would allow a call of `tool` with `input`, as a
 * copy of the run's checker in that mode decides it: `accept-edits` allows only file writes
 * inside the working directory (not `../README.md` from a subfolder, not bash), `yolo` all that
 * no deny rule or the project boundary refuses. An unknown tool gets `yolo`.
 */
export function modesThatAllow(checker: PermissionChecker, tool: AnyTool | undefined, input: unknown): PermissionMode[] {
  if (!tool) return ["yolo"];
  const call = permissionCall(tool, input);
  return (["accept-edits", "yolo"] as const).filter((m) => m !== checker.mode && checker.withMode(m).decide(call).decision === "allow");
}

/**
 * stdout and stderr, built at the first write: Node makes each a stream on first access (a
 * socket for a pipe, which loads net and stream), and a run with nothing to say before its
 * first model request should not pay for that before sending it. Each goes quiet when its reader
 * goes away (`larik -p … | head -1`), which ends the turn (see {@link runHeadless}).
 */
function lazyStdio(): { out: PipeWriter; err: PipeWriter } {
  return { out: new PipeWriter(() => process.stdout), err: new PipeWriter(() => process.stderr) };
}

/**
 * Runs `larik -p`; resolves to the exit status. When the reader of stdout or stderr goes away,
 * the turn ends as a stop signal would end it (cancelled, every tool_use answered, the session
 * written and closed) and the status is 141, what the shell reports for a command killed by
 * SIGPIPE. Nothing is printed about it: the reader left on purpose, as `head` does. A stop signal
 * that comes before the turn (while stdin is read or the session opens) ends the run there, with
 * the same notice and status as one during the turn. With `--output json` the first line is an
 * `init` event (the session's id, model, cwd and mode), printed once the session is open.
 */
export async function runHeadless(host: Host, args: CliArgs, io = lazyStdio()): Promise<number> {
  const format = outputFormat(args.values.output as string | undefined);
  const timeoutMs = typeof args.values.timeout === "string" ? parseDuration(args.values.timeout) : 0;
  let agent: Agent | undefined;
  // set by a stop signal or the reader going away: what has not started yet does not start
  const stop = new AbortController();
  // trapped first: a signal while stdin is read or the session opens is no different for the user
  // ctrl+c is the user's; a kill or a closed terminal is named, as --timeout is, in the session
  // and in what the model reads next (`[interrupted: stopped by SIGTERM]`)
  const signals = trapStopSignals((signal) => {
    stop.abort();
    agent?.cancel(signal === "SIGINT" ? undefined : stopSignalReason(signal));
  });
  const printer: Printer = format === "json" ? new JsonPrinter(io.out) : new TextPrinter(io.out, io.err, (name, input) => toolInputSummary(host.tools.get(name), input));
  let readerGone = false;
  const onReaderGone = () => {
    readerGone = true;
    stop.abort();
    agent?.cancel("interrupted: the reader of the output went away");
  };
  io.out.onGone(onReaderGone);
  io.err.onGone(onReaderGone);
  let failed = false;
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unwatch: (() => void) | undefined;
  // the turn's `done` is printed last, after what is said about why it stopped (a signal, the
  // timeout): a reader of --output json stops at `done` (LARIK-REFERENCE §22)
  let done: AgentEvent | undefined;
  try {
    let prompt = args.positionals.join(" ");
    const fromArgs = prompt.trim() !== "";
    if (!fromArgs && !process.stdin.isTTY) prompt = (await readStdin(stop.signal)).text;
    if (!stop.signal.aborted) {
      if (!prompt.trim()) throw new ConfigError('-p needs a prompt: larik -p "fix the failing test", or pipe one: echo "..." | larik -p');
      // `/name` not registered: a near miss of a command is a typo, refused before a session is made
      const unknown = unknownCommand(host, prompt);
      if (unknown !== undefined && nearestCommand(host.commands, unknown)) throw unknownCommandError(host, unknown);
      const line = parseCommandLine(prompt);
      const command = line !== undefined && (unknown !== undefined || host.commands.get(line.name) !== undefined);
      // Piped stdin joins the prompt that goes to the model (`cat log.txt | larik -p "explain
      // this"`: the argument, a blank line, then what was piped), never a command's arguments: a
      // command's is read only once it has returned a prompt, and one that returns none (`/cost`)
      // leaves stdin unread, as `ls` does, with no wait on a silent pipe.
      const piped = async (): Promise<string | undefined> => {
        if (!fromArgs) return undefined; // stdin was the prompt
        const r = await pipedStdin(STDIN_FIRST_BYTE_MS, stop.signal);
        if (r.timedOut) printer.notice(STDIN_SILENT_NOTICE);
        return r.text.trim() ? r.text.replace(/\s+$/, "") : undefined;
      };
      // the host's notices come first in text; with --output json, after init, the first line
      const notices = [...host.notices];
      const showNotices = () => {
        for (const n of notices.splice(0)) printer.notice(n);
      };
      if (format === "text") showNotices();
      // a turn nobody can watch is not started (a C program would have died at that write)
      if (!stop.signal.aborted) {
        // a registered command may need no model (`/cost`, `/help`): it runs without one, and the
        // model's problem (none configured, no key) is raised only when a prompt is to go to it
        const modelOptional = line !== undefined && host.commands.get(line.name) !== undefined;
        try {
          agent = await host.openAgent({ ...agentOptionsFromArgs(args), modelOptional });
        } finally {
          if (!agent) showNotices(); // a notice may say why it failed
        }
        // a script learns the session at once, not only from `done`, which a killed run never
        // prints; before stdin is waited for
        if (format === "json") printer.event(initEvent(host, agent));
        showNotices();
        // a reader that leaves while the model is silent is noticed now, not at the next write
        // (a socket says so; a pipe's writer learns it only by writing, as with any program)
        unwatch = stdoutIsSocket() ? io.out.watchReader() : undefined;
        if (!command) {
          const extra = await piped();
          if (extra) prompt = `${prompt}\n\n${extra}`;
        }
        timer = timeoutMs > 0 ? setTimeout(() => ((timedOut = true), agent!.cancel(`interrupted: --timeout ${String(args.values.timeout)} reached`)), timeoutMs) : undefined;
        if (!stop.signal.aborted) done = await runPrompt(host, agent, prompt, { printer, unknown, command, piped, stop: stop.signal, onError: () => (failed = true) });
      }
    }
    if (signals.signal) printer.notice(`stopped by ${signals.signal}`);
    if (timedOut) {
      failed = true;
      printer.event({ type: "error", text: `stopped: --timeout ${String(args.values.timeout)} reached` } as AgentEvent);
    }
    // a reader of --output json stops at `done`, also when the run stopped before its turn
    done ??= signals.signal ? { type: "done", stop_reason: "interrupted", ...sessionId(agent) } : undefined;
    if (done) printer.event(done);
  } finally {
    if (timer) clearTimeout(timer);
    unwatch?.();
    signals.dispose();
    printer.end();
    await agent?.close("exit");
  }
  // output still queued in the pipe may yet find its reader gone
  await Promise.all([io.out.flush(), io.err.flush()]);
  return signals.exitStatus(readerGone ? SIGPIPE_STATUS : failed ? 1 : 0);
}

/** `{ session_id }` of a stored session; a session kept in memory (no model could be opened) has no id to resume. */
function sessionId(agent: Agent | undefined): { session_id?: string } {
  return agent && !agent.modelError ? { session_id: agent.session.id } : {};
}

/**
 * The first line of `--output json` (Claude Code's stream-json starts with its `system`/`init`):
 * the session to `--resume`, absent when none is stored; the model as `provider/model`, absent
 * when none could be opened; the working directory; the permission mode.
 */
function initEvent(host: Host, agent: Agent): AgentEvent {
  const model = agent.modelError ? undefined : `${agent.providerName}/${agent.model}`;
  return { type: "init", ...sessionId(agent), ...(model ? { model } : {}), cwd: host.cwd, mode: agent.checker.mode };
}

/** Whether fd 1 is a socket (a parent such as Node's child_process gives one), which {@link PipeWriter.watchReader} can watch. */
function stdoutIsSocket(): boolean {
  try {
    return process.getBuiltinModule("node:fs").fstatSync(1).isSocket();
  } catch {
    return false;
  }
}

/**
 * Runs the prompt: its command, if it is one, then the turn its text makes, rendering events and
 * denying permission requests. Resolves to the `done` to print last: the turn's, or one for a
 * command that made no prompt; undefined when nothing ran (`stop` aborted first).
 */
async function runPrompt(
  host: Host,
  agent: Agent,
  prompt: string,
  o: {
    printer: Printer;
    /** A `/name` no command had when the run began (an MCP prompt registers later). */
    unknown: string | undefined;
    command: boolean;
    /** Piped stdin to append to a command's prompt, read on demand. */
    piped: () => Promise<string | undefined>;
    stop: AbortSignal;
    onError: () => void;
  },
): Promise<AgentEvent | undefined> {
  const { printer } = o;
  if (o.unknown !== undefined) {
    // Some commands come with the context: an MCP server's prompts are registered once it has
    // connected, which building the context waits for (as the turn would).
    await agent.context();
    if (!host.commands.get(o.unknown)) throw unknownCommandError(host, o.unknown);
  }
  // stdin is read once, by the command (`/review` fences it as data) or after it, below
  let pipedText: Promise<string | undefined> | undefined;
  const readPiped = () => (pipedText ??= o.piped());
  let taken = false;
  const stdin = () => ((taken = true), readPiped());
  const expanded = await expandCommand(host, agent, prompt, printer, stdin);
  let text = expanded?.prompt;
  // a command that made no prompt ran no turn; a reader of --output json still gets its end
  if (text === undefined) return { type: "done", stop_reason: "end_turn", ...sessionId(agent) };
  if (agent.modelError) throw agent.modelError;
  if (o.command && !taken) {
    const extra = await readPiped();
    if (extra) text = `${text}\n\n${extra}`;
  }
  if (o.stop.aborted) return undefined;
  // `@path` mentions attach files (LARIK-REFERENCE §2, §22), after a command has made its
  // prompt: a skill's text may mention files too
  let turn: string | Block[] = text;
  let notes: string[] = [];
  // a command's data (a review's diff) is sent as it is: its `@` tokens attach nothing
  if (expanded?.mentions !== false && hasMentions(text)) {
    const x = await expandMentions(text, agent);
    for (const n of x.notices) printer.notice(n);
    if (x.blocks.length > 1) turn = x.blocks;
    notes = x.notes;
  }
  if (o.stop.aborted) return undefined;
  let done: AgentEvent | undefined;
  // a command's prompt is titled in session lists by what was typed (`/review main..HEAD`)
  for await (const ev of agent.run(turn, { notes, ...(o.command ? { typed: prompt.trim() } : {}) })) {
    if (ev.type === "permission_request") {
      const reason = denialReason(ev.suggested_rule, modesThatAllow(agent.checker, host.tools.get(ev.tool_name), ev.input));
      agent.respond(ev.request_id, { allow: false, reason, automatic: true });
      printer.denied(ev, reason);
      continue;
    }
    if (ev.type === "error") o.onError();
    if (ev.type === "done" && !ev.agent) done = ev;
    else printer.event(ev);
  }
  return done;
}

/**
 * The name of a `/name …` prompt that names no registered command (yet), else undefined; a
 * first word with a dot is a path, sent as it is (the kernel's {@link slashCommand} rule, which
 * the TUI follows too).
 */
function unknownCommand(host: Host, prompt: string): string | undefined {
  const line = slashCommand(host.commands, prompt);
  return line && !line.command ? line.name : undefined;
}

/**
 * A prompt that is `/name …` must name a command, as in the TUI: sent to the model instead, a
 * mistyped `/cots` would cost a request and answer something else. A leading space sends it as
 * it is. The usage error names the nearest command.
 */
function unknownCommandError(host: Host, name: string): ConfigError {
  const near = nearestCommand(host.commands, name);
  const hint = near ? ` (did you mean /${near}?)` : "";
  return new ConfigError(`unknown command /${name}${hint}: larik --help lists them; to send the text to the model as it is, start it with a space`);
}

/**
 * A prompt that starts with `/name` runs that slash command (skills, custom commands, MCP
 * prompts); a command that returns a prompt is sent as the turn. Returns the prompt to run, or
 * undefined when the command produced no prompt.
 */
async function expandCommand(host: Host, agent: Agent, prompt: string, printer: Printer, stdin: () => Promise<string | undefined>): Promise<CommandPrompt | undefined> {
  const line = parseCommandLine(prompt);
  const cmd = line && host.commands.get(line.name);
  if (!cmd) return { prompt: prompt.trim() };
  try {
    // what a command prints is this run's answer (`larik -c -p /cost > cost.txt`)
    const r = await cmd.run({ host, agent, args: line.args, print: (t) => printer.output(t), stdin });
    return r ? r : undefined;
  } catch (err) {
    const named = commandErrorText(cmd, err);
    // a usage problem stays one (exit 2): `/compact` with no model configured
    throw err instanceof ConfigError ? new ConfigError(named) : new Error(named);
  }
}
