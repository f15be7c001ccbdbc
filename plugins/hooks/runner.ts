/**
 * Runs one shell hook (LARIK-REFERENCE §14): `bash -c <command>` in the project's cwd, the JSON
 * payload on stdin, in its own process group so a timeout kills the hook and everything it
 * started. A hook that exits while a background child still holds stdout/stderr open is not
 * waited for: reading stops {@link PIPE_GRACE_MS} after the hook process itself exits.
 */
import type { ChildProcess } from "node:child_process";

/** How long output is still read after the hook process exits (ms). */
const PIPE_GRACE_MS = 2_000;
/** Output kept per stream; the rest is dropped (bytes). */
const MAX_OUTPUT_BYTES = 1_000_000;

/** What one hook run produced. `code` is null when the process was killed or never started. */
export interface HookRun {
  command: string;
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Set when bash could not be started (missing cwd, no bash). */
  spawnError?: string;
  /** The signal that ended the process, if any. */
  signal?: string;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Kill the process group after this many ms. */
  timeoutMs: number;
  /** Override of {@link PIPE_GRACE_MS} (ms). */
  graceMs?: number;
  /** Receives the child while it runs, so the owner can kill it on dispose. */
  track?: (child: ChildProcess, done: Promise<unknown>) => void;
}

/** Kills the whole process group of `child`; harmless when it is already gone. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Runs `command` with `payload` as JSON on stdin. Never throws: failures come back in the
 * returned {@link HookRun} (`spawnError`, `timedOut`, a non-zero `code`).
 */
export async function runHookCommand(command: string, payload: unknown, opts: RunOptions): Promise<HookRun> {
  const { spawn } = await import("node:child_process");
  const grace = opts.graceMs ?? PIPE_GRACE_MS;
  let child: ChildProcess;
  try {
    child = spawn("bash", ["-c", command], {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
  } catch (err) {
    return { command, code: null, stdout: "", stderr: "", timedOut: false, spawnError: (err as Error).message };
  }
  const out: Buffer[] = [];
  const errOut: Buffer[] = [];
  let outBytes = 0;
  let errBytes = 0;
  child.stdout!.on("data", (b: Buffer) => {
    if (outBytes < MAX_OUTPUT_BYTES) out.push(b);
    outBytes += b.length;
  });
  child.stderr!.on("data", (b: Buffer) => {
    if (errBytes < MAX_OUTPUT_BYTES) errOut.push(b);
    errBytes += b.length;
  });
  // A hook that never reads stdin gets EPIPE on our write; that is its choice, not an error.
  child.stdin!.on("error", () => {});
  child.stdin!.end(JSON.stringify(payload));

  let timedOut = false;
  let spawnError: string | undefined;
  let code: number | null = null;
  let signal: string | undefined;
  const done = new Promise<void>((resolve) => {
    let graceTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(killTimer);
      clearTimeout(graceTimer);
      child.stdout!.destroy();
      child.stderr!.destroy();
      child.unref();
      resolve();
    };
    const killTimer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, opts.timeoutMs);
    child.once("error", (err) => {
      spawnError = err.message;
      finish();
    });
    child.once("exit", (c, s) => {
      code = c;
      signal = s ?? undefined;
      // Stop waiting for pipes a leftover grandchild keeps open.
      graceTimer = setTimeout(finish, grace);
    });
    // `close` fires once the process exited and every stdio stream closed.
    child.once("close", finish);
  });
  opts.track?.(child, done);
  await done;
  return {
    command,
    code,
    stdout: Buffer.concat(out).toString("utf8"),
    stderr: Buffer.concat(errOut).toString("utf8"),
    timedOut,
    spawnError,
    signal,
  };
}
