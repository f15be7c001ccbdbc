/**
 * Whether a process id names a running process, for files that record the pid of their writer
 * (a session's lock, the sandbox's placeholder ledger) and are stale once it is gone; and whether
 * a process group still has members, for the shells a command left running.
 */

import { readdirSync, readFileSync } from "node:fs";

/**
 * True when `pid` runs: `kill(pid, 0)` sends nothing and only checks (POSIX kill(2)); EPERM means
 * it runs under another user. A recycled pid reads as alive, which errs on the safe side for
 * callers that only clean up after the dead.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True while the process group `pgid` has a running member: `kill(-pgid, 0)` per POSIX kill(2),
 * and on Linux, where that also counts zombies (which an init that reaps slowly keeps for a
 * second or more), a member in /proc that is not one. Used to tell whether a command's shell
 * left processes running after it exited (`sleep 300 &` stays in the shell's group).
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((n) => n.charCodeAt(0) <= 57);
  } catch {
    return true;
  }
  for (const pid of pids) {
    const f = statFields("/proc", pid); // undefined: gone meanwhile
    if (f && Number(f[2]) === pgid && f[0] !== "Z") return true;
  }
  return false;
}

/**
 * The fields of `<proc>/<pid>/stat` after the command name (proc(5)): [0] state (field 3),
 * [1] ppid, [2] pgrp, … [6] flags (field 9). The name itself may hold spaces and parentheses,
 * so the fields start after its last `)`. Undefined when the process is gone (or not readable).
 */
function statFields(proc: string, pid: string): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`${proc}/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** proc(5) `stat` flags: a kernel thread, whose environ is always empty. */
const PF_KTHREAD = 0x00200000;

/**
 * How long a user process whose environ reads empty is read again (ms). During execve(2) the
 * kernel shows an empty `/proc/<pid>/environ` for a moment, while the new program's stack is set
 * up: a scan at that moment missed a `setsid cmd` whose shell was just `exec`ing it.
 */
const EXEC_WINDOW_MS = 100;

function environ(proc: string, pid: string): Buffer | undefined {
  try {
    return readFileSync(`${proc}/${pid}/environ`);
  } catch {
    return undefined; // gone meanwhile, or another user's
  }
}

/** True for a live user process (not a kernel thread, not a zombie), from `/proc/<pid>/stat`. */
function liveUserProcess(proc: string, pid: string): boolean {
  const f = statFields(proc, pid);
  return f !== undefined && f[0] !== "Z" && f[0] !== "X" && (Number(f[6]) & PF_KTHREAD) === 0;
}

/** The length of `/proc/<pid>/cmdline`: 0 for a process in execve, which has no arguments yet. */
function cmdlineLength(proc: string, pid: string): number {
  try {
    return readFileSync(`${proc}/${pid}/cmdline`).length;
  } catch {
    return 0;
  }
}

/**
 * The environ of a live user process that read empty, read again until it is not, or until
 * {@link EXEC_WINDOW_MS} passed: a program that cleared its environment (`env -i cmd`) has its
 * arguments, and is answered at once; one in execve has neither yet, and both a moment later
 * (the kernel sets them up together).
 */
function environAfterExec(proc: string, pid: string, deadline: number): Buffer | undefined {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const args = cmdlineLength(proc, pid); // first: environ read after it is at least as new
    const env = environ(proc, pid);
    if (!env || env.length || args > 0 || Date.now() >= deadline || !liveUserProcess(proc, pid)) return env;
    Atomics.wait(pause, 0, 0, 1); // a synchronous 1 ms sleep: the callers are synchronous
  }
}

/**
 * The processes (not this one) whose environment holds `name=value`, found through
 * `/proc/<pid>/environ` (the environment they started with); only those this user may read.
 * Linux only: elsewhere, and when /proc cannot be read, an empty list. A marker variable set on a
 * command finds what it started even after they left its process group (`setsid`, a daemon's
 * double fork) and their parents are gone, unless they cleared their environment. With `prefix`,
 * any value that starts with `value` matches. A process caught in execve(2), whose environ reads
 * empty for a moment, is read again for up to {@link EXEC_WINDOW_MS} (this call blocks that long
 * at most, and only then); kernel threads and zombies, always empty, are not.
 */
export function pidsWithEnv(name: string, value: string, prefix = false): number[] {
  return process.platform === "linux" ? pidsWithEnvIn("/proc", name, value, prefix) : [];
}

/**
 * {@link pidsWithEnv} over the proc(5) file system mounted at `proc` (a test's copy elsewhere),
 * reading a process caught in execve again for up to `windowMs`.
 */
export function pidsWithEnvIn(proc: string, name: string, value: string, prefix = false, windowMs = EXEC_WINDOW_MS): number[] {
  let names: string[];
  try {
    names = readdirSync(proc).filter((n) => n.charCodeAt(0) <= 57);
  } catch {
    return [];
  }
  const entry = Buffer.from(`${name}=${value}${prefix ? "" : "\0"}`);
  const found: number[] = [];
  const deadline = Date.now() + windowMs;
  for (const n of names) {
    const pid = Number(n);
    if (pid === process.pid) continue;
    let env = environ(proc, n);
    if (env?.length === 0 && liveUserProcess(proc, n)) env = environAfterExec(proc, n, deadline);
    if (!env) continue;
    const at = env.indexOf(entry);
    if (at === 0 || (at > 0 && env[at - 1] === 0)) found.push(pid);
  }
  return found;
}
