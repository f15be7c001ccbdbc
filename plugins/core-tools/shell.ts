/**
 * Running one shell command the way `bash` and background shells do (LARIK-REFERENCE §3 `bash`):
 * `bash -c` in its own process group with stdin closed, a non-interactive environment, stdout and
 * stderr in one stream, the exact bytes teed into a sidecar file for `raw_output`, and a
 * group-wide kill (SIGTERM, then SIGKILL after a grace period).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { unlink } from "node:fs/promises";
import type { Readable } from "node:stream";
import { randomBytes } from "node:crypto";
import { groupAlive, pidsWithEnv, readChildPid, readExitStatus, sandboxStdio, type Sandbox, type SandboxedCommand } from "../../kernel/index.js";
import { sidecarFile } from "./sidecar.js";

/**
 * Variables that keep commands from waiting for a human: no pagers, no colours, no credential
 * or editor prompts. `CI` is deliberately not set: yarn and pnpm switch to frozen lockfiles
 * under CI, which would break ordinary installs; watch modes already stay off because stdin is
 * not a TTY.
 */
const NONINTERACTIVE_ENV: Record<string, string> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  MANPAGER: "cat",
  SYSTEMD_PAGER: "cat",
  TERM: "dumb",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
  CLICOLOR: "0",
  GIT_TERMINAL_PROMPT: "0",
  GCM_INTERACTIVE: "never",
  GIT_EDITOR: "true",
  GIT_SEQUENCE_EDITOR: "true",
  EDITOR: "true",
  VISUAL: "true",
  DEBIAN_FRONTEND: "noninteractive",
  PIP_NO_INPUT: "1",
  PYTHONUNBUFFERED: "1",
  HOMEBREW_NO_AUTO_UPDATE: "1",
};

/**
 * Set on every command (`<larik pid>-<random>`): what it started carries it, also a process
 * that left its process group (`setsid`), so a kill and Larik's exit find those too (Linux).
 */
export const RUN_MARKER = "LARIK_SHELL_RUN";

/** A fresh {@link RUN_MARKER} value, `<prefix><larik pid>-<random>`. */
export function newRunMarker(prefix = ""): string {
  return `${prefix}${process.pid}-${randomBytes(6).toString("hex")}`;
}

/** Time between SIGTERM and SIGKILL of a process group, in ms. */
export const KILL_GRACE_MS = 2_000;
/** How long output is still read after bash exits, in ms (a leftover background child may hold the pipe). */
export const EXIT_DRAIN_MS = 300;

/** Bytes of output kept in memory from the start and from the end. */
const KEEP_BYTES = 256 * 1024;

/**
 * Removes ANSI escape sequences (CSI, OSC, charset and two-byte escapes) and carriage-return
 * redraws: of a line rewritten with `\r` only the last version is kept. CRLF becomes LF.
 */
export function cleanOutput(text: string): string {
  const noAnsi = text
    .replace(/\x1b\][\s\S]*?(?:\x07|\x1b\\)/g, "")
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, "")
    .replace(/\x1b[()][0-9A-Za-z]/g, "")
    .replace(/\x1b[@-Z\\-_]/g, "")
    .replace(/\r+\n/g, "\n");
  if (!noAnsi.includes("\r")) return noAnsi;
  return noAnsi
    .split("\n")
    .map((line) => {
      const trimmed = line.replace(/\r+$/, "");
      const i = trimmed.lastIndexOf("\r");
      return i === -1 ? trimmed : trimmed.slice(i + 1);
    })
    .join("\n");
}

/** Sends `signal` to the whole process group led by `pid`; a vanished group is not an error. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone
  }
}

/** Sends `signal` to the process `pid`; a vanished process is not an error. */
export function killPid(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: already gone
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A wait of `ms` that `cancel()` ends early, so no timer outlives what it bounded. */
function timer(ms: number): { done: Promise<void>; cancel(): void } {
  let t: NodeJS.Timeout | undefined;
  let end!: () => void;
  const done = new Promise<void>((r) => {
    end = r;
    t = setTimeout(r, ms);
  });
  return {
    done,
    cancel() {
      clearTimeout(t);
      end();
    },
  };
}

/** Keeps the first and last {@link KEEP_BYTES} bytes of a stream and counts the total. */
export class OutputCapture {
  total = 0;
  #head: Buffer[] = [];
  #headLen = 0;
  #tail: Buffer[] = [];
  #tailLen = 0;

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.#headLen < KEEP_BYTES) {
      const take = rest.subarray(0, KEEP_BYTES - this.#headLen);
      this.#head.push(take);
      this.#headLen += take.length;
      rest = rest.subarray(take.length);
    }
    if (!rest.length) return;
    this.#tail.push(rest);
    this.#tailLen += rest.length;
    while (this.#tailLen - (this.#tail[0]?.length ?? 0) >= KEEP_BYTES) this.#tailLen -= this.#tail.shift()!.length;
  }

  /** The kept bytes as text, with a marker where the middle was dropped. */
  text(): string {
    const dropped = this.total - this.#headLen - this.#tailLen;
    // Decoded together when contiguous, so a character across the seam stays whole.
    if (dropped === 0) return Buffer.concat([...this.#head, ...this.#tail]).toString("utf8");
    const head = Buffer.concat(this.#head).toString("utf8");
    const tail = Buffer.concat(this.#tail).toString("utf8");
    return `${head}\n… [${dropped} bytes not kept in memory] …\n${tail}`;
  }
}

/** How to start a command. */
export interface ShellOptions {
  command: string;
  cwd: string;
  projectRoot: string;
  /** Wraps the command in the OS sandbox when set. */
  sandbox?: Sandbox;
  /** Sidecar directory; the exact output goes to `<dir>/<sha256(id)>.out`. */
  sidecarDir?: string;
  /** The tool_use id naming the sidecar. */
  toolUseId: string;
  /** The command's {@link RUN_MARKER} value (default: a fresh one). */
  marker?: string;
  /** Called with every raw chunk, in order. */
  onData?(chunk: Buffer): void;
}

/** A running command. */
export interface ShellProcess {
  child: ChildProcess;
  pid: number | undefined;
  /**
   * Resolves when the command's bash exits (not when its leftover children do; in a sandbox
   * with a status pipe, when the status arrives, while the sandbox may live on for them).
   */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when the output pipes close (every writer gone) or reading was stopped. */
  closed: Promise<void>;
  /**
   * Resolves when every process writing the command's output is gone (or reading was stopped):
   * {@link closed}, except in a sandbox with an output pipe, whose wrapper holds its own stdout
   * while the sandbox lives on for processes the command left running with their output elsewhere.
   */
  outputClosed: Promise<void>;
  /** Stops reading output (leftover background children then get EPIPE on write). */
  stopReading(): void;
  /** Flushes and closes the sidecar; removes it when nothing was written. */
  finishSidecar(): Promise<void>;
  /**
   * SIGTERM to the group, SIGKILL after {@link KILL_GRACE_MS} or as soon as the group is gone;
   * a sandbox gets SIGKILL at once, also to its init by pid. Resolves when the spawned process
   * has exited.
   */
  kill(): Promise<void>;
  /** SIGKILL to everything {@link kill} reaches, synchronously (for a process `exit` hook). */
  killNowSync(): void;
  /**
   * True while something the command started may still run after its bash exited: the process
   * group has members, or (sandbox with a status pipe) the sandbox still runs. Processes that
   * left the group are not counted (finding them reads every process's environment).
   */
  lingering(): boolean;
  /** True once {@link kill} was called. */
  killed: boolean;
  /** Set when the process could not be started. */
  error?: Error;
}

/**
 * Starts `bash -c <command>` detached (its own session and process group, so no controlling
 * terminal: programs opening /dev/tty fail at once instead of waiting) with stdin on /dev/null.
 * stderr is joined to stdout inside the shell so their order is kept.
 * @throws when the process cannot be spawned (missing bash, bad cwd).
 */
export function startShell(opts: ShellOptions): ShellProcess {
  const script = `exec 2>&1; ${opts.command}`;
  const marker = opts.marker ?? newRunMarker();
  let env: Record<string, string> = { ...(process.env as Record<string, string>), ...NONINTERACTIVE_ENV, [RUN_MARKER]: marker };
  let file = "bash";
  let args = ["-c", script];
  let wrapped: SandboxedCommand | undefined;
  if (opts.sandbox) {
    wrapped = opts.sandbox.wrap(script, { cwd: opts.cwd, projectRoot: opts.projectRoot, env });
    file = wrapped.file;
    args = wrapped.args;
    env = wrapped.env;
  }
  const stdio = wrapped ? sandboxStdio(wrapped, ["ignore", "pipe", "pipe"]) : (["ignore", "pipe", "pipe"] as const);
  const child = spawn(file, args, { cwd: opts.cwd, env, detached: true, stdio: stdio as ("ignore" | "pipe")[] });
  const extraPipe = (fd: number | undefined) => (fd === undefined ? undefined : (child.stdio[fd] as Readable | null));
  // The sandbox's init: known once bwrap has started it (info pipe), undefined without a sandbox.
  const childPid = readChildPid(extraPipe(wrapped?.infoFd));
  let sandboxPid: number | undefined;
  void childPid.then((p) => (sandboxPid = p));
  const statusPipe = extraPipe(wrapped?.statusFd);
  // Processes of the command outside its group. Not for a sandbox with its own init (infoFd):
  // killing that init ends all of them.
  const strays = (): number[] => (wrapped?.infoFd !== undefined ? [] : pidsWithEnv(RUN_MARKER, marker));
  const killStrays = (signal: NodeJS.Signals) => {
    for (const pid of strays()) killPid(pid, signal);
  };
  let sidecar: WriteStream | undefined;
  let sidecarPath: string | undefined;
  let wroteSidecar = false;
  if (opts.sidecarDir) {
    sidecarPath = sidecarFile(opts.sidecarDir, opts.toolUseId);
    sidecar = createWriteStream(sidecarPath, { mode: 0o600 });
    sidecar.on("error", () => {
      sidecar = undefined;
    });
  }
  const onData = (chunk: Buffer) => {
    if (sidecar) {
      sidecar.write(chunk);
      wroteSidecar = true;
    }
    opts.onData?.(chunk);
  };
  const outputPipe = extraPipe(wrapped?.outputFd);
  const pipes = [child.stdout!, child.stderr!, ...(outputPipe ? [outputPipe] : [])];
  for (const p of pipes) p.on("data", onData);

  type Exit = { code: number | null; signal: NodeJS.Signals | null };
  const childExit = new Promise<Exit>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", (err) => {
      proc.error = err;
      resolve({ code: null, signal: null });
    });
  });
  let exited = childExit;
  if (statusPipe) {
    const status = readExitStatus(statusPipe);
    const fromStatus = status.then((code) => (code === undefined ? undefined : { code, signal: null }));
    // The wrapper exiting first (killed, or failed before the command ran) ends the command too;
    // a status written just before still wins, read within the drain time.
    const fromChild = childExit.then(async (exit) => {
      const drain = timer(EXIT_DRAIN_MS);
      const s = await Promise.race([fromStatus, drain.done.then(() => undefined)]);
      drain.cancel();
      return s ?? exit;
    });
    exited = Promise.race([fromStatus.then((s) => s ?? fromChild), fromChild]);
  }
  let stopped = false;
  let markClosed!: () => void;
  const closed = new Promise<void>((r) => (markClosed = r));
  let open = pipes.length;
  const onClose = () => {
    if (--open === 0) markClosed();
  };
  for (const p of pipes) p.once("close", onClose);
  child.once("error", () => markClosed());
  // The wrapper's own stdout stays open while its sandbox lives: the command's output is done
  // when its own pipe closes, and, once the wrapper has exited, the wrapper's messages are read.
  const outputClosed = outputPipe
    ? new Promise<void>((r) => {
        outputPipe.once("close", r);
        child.once("error", () => r());
      }).then(() => (child.exitCode !== null || child.signalCode !== null ? closed : undefined))
    : closed;

  const proc: ShellProcess = {
    child,
    pid: child.pid,
    exited,
    closed,
    outputClosed: Promise.race([outputClosed, closed]),
    killed: false,
    stopReading() {
      if (stopped) return;
      stopped = true;
      for (const p of pipes) p.destroy();
      markClosed();
    },
    async finishSidecar() {
      const s = sidecar;
      sidecar = undefined;
      if (!s) return;
      await new Promise<void>((r) => s.end(r));
      if (!wroteSidecar && sidecarPath) await unlink(sidecarPath).catch(() => {});
    },
    kill() {
      killing ??= killNow();
      return killing;
    },
    killNowSync() {
      proc.killed = true;
      killPid(sandboxPid, "SIGKILL");
      killGroup(child.pid, "SIGKILL");
      killStrays("SIGKILL");
    },
    lingering() {
      if (!child.pid || proc.error) return false;
      if (statusPipe) return child.exitCode === null && child.signalCode === null;
      // strays are not looked for here (a scan of /proc per call); killAll finds them by marker
      return groupAlive(child.pid);
    },
  };
  let killing: Promise<void> | undefined;
  const killNow = async () => {
    proc.killed = true;
    if (wrapped) {
      // A sandboxed command runs in bwrap's new session, out of this group's reach, and the
      // sandbox's init holds everything inside: SIGKILL to it (by pid, from bwrap's info pipe)
      // ends the sandbox; a SIGTERM would buy nothing, init ignores it. Killed in bwrap's first
      // milliseconds, the pid may not have been read yet while the sandbox is already in its own
      // session, before its init set --die-with-parent: then the kill waits for the pid, which
      // bwrap writes before it lets the sandbox start (1 of ~36 sandboxes outlived a kill here
      // before this).
      const known = sandboxPid;
      killPid(known, "SIGKILL");
      killGroup(child.pid, "SIGKILL");
      if (known === undefined && wrapped.infoFd !== undefined) {
        const wait = timer(KILL_GRACE_MS);
        killPid(await Promise.race([childPid, wait.done.then(() => undefined)]), "SIGKILL");
        wait.cancel();
      }
    }
    killGroup(child.pid, "SIGTERM");
    killStrays("SIGTERM");
    // Wait for the whole group, not only bash: a child that ignores SIGTERM gets the grace too.
    const grace = timer(KILL_GRACE_MS);
    let graceOver = false;
    const gone = (async () => {
      await childExit;
      while (!graceOver && child.pid && groupAlive(child.pid)) await sleep(25);
      while (!graceOver && strays().length) await sleep(50);
    })();
    await Promise.race([gone, grace.done]);
    graceOver = true;
    grace.cancel();
    // Whatever survived SIGTERM (bash itself, or children that ignore it) goes now.
    killGroup(child.pid, "SIGKILL");
    killStrays("SIGKILL");
    await childExit;
  };
  return proc;
}
