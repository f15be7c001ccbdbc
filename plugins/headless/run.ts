/**
 * The headless run: prompt from arguments or piped stdin, one turn, events rendered by
 * `print.ts`, permission requests denied with a reason that says how to allow them.
 */
import {
  agentOptionsFromArgs,
  ConfigError,
  errorText,
  parseDuration,
  type Agent,
  type AgentEvent,
  type CliArgs,
  type Host,
  type PermissionMode,
} from "../../kernel/index.js";
import { JsonPrinter, TextPrinter, type Printer } from "./print.js";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Why a headless ask was denied; names the ways to allow it: the modes that allow more than
 * `mode` (the run's own is no way out) and an allow rule.
 */
export function denialReason(suggested?: string, mode: PermissionMode = "default"): string {
  const rule = suggested ? ` or an allow rule such as "${suggested}"` : " or an allow rule";
  const modes = mode === "default" || mode === "plan" ? "--mode accept-edits or --mode yolo" : "--mode yolo";
  return `headless mode cannot ask for permission: rerun with ${modes},${rule} in permissions.allow`;
}

/**
 * stdout and stderr, built at the first write: Node makes each a stream on first access (a
 * socket for a pipe, which loads net and stream), and a run with nothing to say before its
 * first model request should not pay for that before sending it.
 */
const LAZY_STDIO = {
  out: { write: (s: string) => process.stdout.write(s) },
  err: { write: (s: string) => process.stderr.write(s) },
};

/** Runs `larik -p`; resolves to the exit status. */
export async function runHeadless(host: Host, args: CliArgs, io = LAZY_STDIO): Promise<number> {
  const format = (args.values.output as string | undefined) ?? "text";
  if (format !== "text" && format !== "json") throw new ConfigError(`--output ${format}: use text or json`);
  const timeoutMs = typeof args.values.timeout === "string" ? parseDuration(args.values.timeout) : 0;
  let prompt = args.positionals.join(" ");
  if (!prompt.trim() && !process.stdin.isTTY) prompt = await readStdin();
  if (!prompt.trim()) throw new ConfigError('-p needs a prompt: larik -p "fix the failing test", or pipe one: echo "..." | larik -p');
  const printer: Printer = format === "json" ? new JsonPrinter(io.out) : new TextPrinter(io.out, io.err);
  for (const n of host.notices) printer.notice(n);

  const agent = await host.openAgent(agentOptionsFromArgs(args));
  let failed = false;
  let timedOut = false;
  // A signal ends the turn cleanly (every tool_use answered, the session written, sandbox
  // placeholders removed); the run then exits as the signal would have: 128 + its number. A
  // second one finds no handler and kills at once.
  let stoppedBy: StopSignal | undefined;
  const stop = (signal: StopSignal) => {
    stoppedBy ??= signal;
    agent.cancel();
  };
  for (const s of STOP_SIGNALS) process.once(s, stop);
  const timer = timeoutMs > 0 ? setTimeout(() => ((timedOut = true), agent.cancel()), timeoutMs) : undefined;
  try {
    const text = await expandCommand(host, agent, prompt.trim(), printer);
    if (text === undefined) return 0;
    for await (const ev of agent.run(text)) {
      if (ev.type === "permission_request") {
        const reason = denialReason(ev.suggested_rule, agent.checker.mode);
        agent.respond(ev.request_id, { allow: false, reason, automatic: true });
        printer.event(ev);
        continue;
      }
      if (ev.type === "error") failed = true;
      printer.event(ev);
    }
    if (stoppedBy) printer.notice(`stopped by ${stoppedBy}`);
    if (timedOut) {
      failed = true;
      printer.event({ type: "error", text: `stopped: --timeout ${String(args.values.timeout)} reached` } as AgentEvent);
    }
  } finally {
    if (timer) clearTimeout(timer);
    for (const s of STOP_SIGNALS) process.off(s, stop);
    printer.end();
    await agent.close("exit");
  }
  if (stoppedBy) return 128 + SIGNAL_NUMBERS[stoppedBy];
  return failed ? 1 : 0;
}

/** The signals that stop a run: ctrl+c, a polite kill, the terminal closing. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
type StopSignal = (typeof STOP_SIGNALS)[number];
/** Their numbers, the same on Linux and macOS (POSIX). */
const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * A prompt that starts with `/name` runs that slash command (skills, custom commands, MCP
 * prompts); a command that returns a prompt is sent as the turn. Returns the text to run, or
 * undefined when the command produced no prompt.
 */
async function expandCommand(host: Host, agent: Agent, prompt: string, printer: Printer): Promise<string | undefined> {
  const m = /^\/([\w:.-]+)(?:\s+([\s\S]*))?$/.exec(prompt);
  if (!m) return prompt;
  const cmd = host.commands.get(m[1]!);
  if (!cmd) return prompt;
  try {
    const r = await cmd.run({ host, agent, args: m[2] ?? "", print: (t) => printer.notice(t) });
    return r?.prompt;
  } catch (err) {
    throw new Error(`/${cmd.name}: ${errorText(err)}`);
  }
}
