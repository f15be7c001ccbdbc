/**
 * The interactive run: checks for a terminal, runs first-run setup when no model is configured
 * (LARIK-REFERENCE §1), opens the agent (new, `-c`, `--resume`, `--fork`), renders the app and,
 * on exit, prints the session id for `larik --resume <id>`.
 */
import {
  ConfigError,
  stopSignalReason,
  trapStopSignals,
  type CliArgs,
  type Host,
} from "../../kernel/index.js";
import { App } from "./app.js";
import { copyText } from "./clipboard.js";
import { TuiController } from "./controller.js";
import { previewDiff } from "./diff-view.js";
import { editExternally } from "./external-editor.js";
import { INK_OPTIONS, syncOutput } from "./frame.js";
import { loadMarkdown } from "./markdown.js";
import { expandMentions, listProjectFiles } from "./mentions.js";
import { needsSetup, openSession, showNoticesBeforeFailure, type OpenedSession } from "./session-open.js";
import { Setup } from "./setup.js";
import type { DetectOptions } from "./setup-detect.js";
import { runShell } from "./shell.js";

/** The terminal the TUI runs on. */
export interface TuiIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/** Bracketed paste on/off: pasted newlines then arrive marked and never submit (keys.ts). */
const PASTE_ON = "\x1b[?2004h";
const PASTE_OFF = "\x1b[?2004l";

/**
 * Runs the TUI until the user quits; resolves to the exit status (0, or 2 when setup was
 * aborted).
 * @throws ConfigError when stdin or stdout is not a terminal, or for bad flags.
 */
export async function runTui(
  host: Host,
  args: CliArgs,
  io: TuiIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
  opts: {
    detect?: DetectOptions;
    /** The session, already opening (index.ts starts it while this module loads); else opened here. */
    opening?: Promise<OpenedSession>;
  } = {},
): Promise<number> {
  const { stdin, stdout, stderr } = io;
  // erase the "starting…" line index.ts wrote while this module loaded
  if (stdout.isTTY) stdout.write("\r\x1b[2K");
  if (!stdin.isTTY || !stdout.isTTY) {
    throw new ConfigError('the interactive UI needs a terminal: use -p "prompt" (or pipe a prompt into larik -p) for headless mode');
  }
  // Ink (≈0.5 s to import, most of it es-toolkit's compat barrel) loads while the session opens
  const inkLoading = import("ink");
  const open = async () => {
    let model: string | undefined;
    if (!opts.opening && needsSetup(host, args)) {
      const { render } = await inkLoading;
      const setup = render(<Setup host={host} detect={opts.detect} onDone={(s) => (model = s)} />, { stdin, stdout, stderr, exitOnCtrlC: false, ...INK_OPTIONS });
      await setup.waitUntilExit();
      if (!model) return undefined;
    }
    return Promise.all([opts.opening ?? openSession(host, args, model), inkLoading]);
  };
  let opened: Awaited<ReturnType<typeof open>>;
  try {
    opened = await open();
  } catch (err) {
    showNoticesBeforeFailure(host, stderr);
    throw err;
  }
  if (!opened) {
    stderr.write("setup aborted: no model is configured. Run larik again, or pass --model provider/model (e.g. --model anthropic/claude-sonnet-4-5)\n");
    return 2;
  }
  const [[agent, history], { render }] = opened;
  // Markdown (marked-terminal with highlight.js) is only needed once a reply arrives, so it loads
  // after the first paint; a resumed session prints its history at once and waits for it.
  if (agent.history().length) await loadMarkdown();
  else setImmediate(() => void loadMarkdown());
  const write = (s: string) => void stdout.write(s);
  const controller = new TuiController(host, agent, {
    history,
    write,
    listFiles: listProjectFiles,
    runShell,
    expand: expandMentions,
    preview: previewDiff,
    editExternally: (text) => editExternally(text, { env: host.env, setRawMode: (on) => stdin.setRawMode?.(on) }),
    copy: (text) => copyText(text, write, host.env),
  });
  stdout.write(PASTE_ON);
  const app = render(<App controller={controller} />, { stdin, stdout, stderr, exitOnCtrlC: false, patchConsole: true, ...INK_OPTIONS });
  // `larik "fix the test"` (the help's `larik [flags] [prompt]`) starts with that prompt, as if
  // typed and submitted, as `claude "query"` does
  if (args.positionals.length) void controller.submit(args.positionals.join(" "));
  // A closed terminal (SIGHUP) or a kill (SIGTERM, an outside SIGINT: in raw mode ctrl+c is a key)
  // ends the session as quitting does. A closed terminal also fails writes (EIO), often before
  // the signal is handled: an unhandled stream error would end the process first, so they are
  // ignored. (Node 20 then trips its own assertion restoring the gone terminal's modes at exit,
  // nodejs/node#51519, fixed in later Node; by then everything is written.) stdin fails too:
  // Ink's unmount turns raw mode off, and on a gone terminal that emits `setRawMode EIO` as an
  // error event, which unhandled ended the process before the cancelled turn wrote its results.
  for (const s of [stdout, stderr, stdin]) s.on("error", () => {});
  // the session and the model read what stopped the turn (`[interrupted: stopped by SIGTERM]`),
  // as in `larik -p`; here every signal comes from outside: the user's ctrl+c is a key
  const signals = trapStopSignals((signal) => controller.quit(stopSignalReason(signal)));
  // A gone terminal whose hangup never reaches us (the shell that started us traps HUP) shows
  // only as the end of stdin, which a terminal otherwise never gives (ctrl+d is a key in raw
  // mode): it is a hangup, also for a SIGHUP that may still come after it.
  const onEnd = () => signals.raise("SIGHUP");
  stdin.once("end", onEnd);
  try {
    await app.waitUntilExit();
  } finally {
    stdin.off("end", onEnd);
    signals.dispose();
    stdout.write(PASTE_OFF);
    controller.quit();
    await history.flush();
  }
  const id = controller.agent.session.id;
  // a session without a prompt holds nothing to resume
  const said = controller.agent.session.entries().some((e) => e.type === "message");
  if (signals.signal !== "SIGHUP" && said) stdout.write(syncOutput(`\nresume this session with: larik --resume ${id}\n`, stdout, host.env));
  return signals.exitStatus(0);
}
