/**
 * Running one shell command the way `bash` and background shells do (LARIK-REFERENCE §3 `bash`):
 * `bash -c` in its own process group with stdin closed, a non-interactive environment, stdout and
 * stderr in one stream, the exact bytes teed into a sidecar file for `raw_output`, and a
 * group-wide kill (SIGTERM, then SIGKILL after a grace period).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { unlink } from "node:fs/promises";
import type { Sandbox } from "../../kernel/index.js";
import { sidecarFile } from "./sidecar.js";

/**
 * Variables that keep commands from waiting for a human: no pagers, no colours, no credential
 * or editor prompts. `CI` is deliberately not set: yarn and pnpm switch to frozen lockfiles
 * under CI, which would break ordinary installs; watch modes already stay off because stdin is
 * not a TTY.
 */
export const NONINTERACTIVE_ENV: Record<string, string> = {
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
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone
  }
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
  /** Called with every raw chunk, in order. */
  onData?(chunk: Buffer): void;
}

/** A running command. */
export interface ShellProcess {
  child: ChildProcess;
  pid: number | undefined;
  /** Resolves when bash exits (not when its leftover children do). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when the output pipes close (every writer gone) or reading was stopped. */
  closed: Promise<void>;
  /** Stops reading output (leftover background children then get EPIPE on write). */
  stopReading(): void;
  /** Flushes and closes the sidecar; removes it when nothing was written. */
  finishSidecar(): Promise<void>;
  /** SIGTERM to the group, SIGKILL after {@link KILL_GRACE_MS}; resolves when bash has exited. */
  kill(): Promise<void>;
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
  let env: Record<string, string> = { ...(process.env as Record<string, string>), ...NONINTERACTIVE_ENV };
  let file = "bash";
  let args = ["-c", script];
  if (opts.sandbox) {
    const wrapped = opts.sandbox.wrap(script, { cwd: opts.cwd, projectRoot: opts.projectRoot, env });
    file = wrapped.file;
    args = wrapped.args;
    env = wrapped.env;
  }
  const child = spawn(file, args, { cwd: opts.cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
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
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", (err) => {
      proc.error = err;
      resolve({ code: null, signal: null });
    });
  });
  let stopped = false;
  let markClosed!: () => void;
  const closed = new Promise<void>((r) => (markClosed = r));
  let open = 2;
  const onClose = () => {
    if (--open === 0) markClosed();
  };
  child.stdout!.once("close", onClose);
  child.stderr!.once("close", onClose);
  child.once("error", () => markClosed());

  const proc: ShellProcess = {
    child,
    pid: child.pid,
    exited,
    closed,
    killed: false,
    stopReading() {
      if (stopped) return;
      stopped = true;
      child.stdout!.destroy();
      child.stderr!.destroy();
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
  };
  let killing: Promise<void> | undefined;
  const killNow = async () => {
    proc.killed = true;
    // A sandboxed command runs in bwrap's new session, out of this group's reach: it dies only
    // through --die-with-parent, so a SIGTERM buys it no grace. And a SIGTERM in bwrap's first
    // ~10 ms left the sandbox running in 12 of 24 tries here; a SIGKILL, in 1 of 36.
    if (opts.sandbox) killGroup(child.pid, "SIGKILL");
    killGroup(child.pid, "SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((r) => (timer = setTimeout(r, KILL_GRACE_MS)));
    await Promise.race([exited.then(() => Promise.race([closed, grace])), grace]);
    clearTimeout(timer);
    // Whatever survived SIGTERM (bash itself, or children that ignore it) goes now.
    killGroup(child.pid, "SIGKILL");
    await exited;
  };
  return proc;
}
