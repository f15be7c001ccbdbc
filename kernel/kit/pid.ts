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
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    } catch {
      continue; // gone meanwhile
    }
    // after "comm)": state ppid pgrp …; comm itself may hold spaces and parentheses
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(f[2]) === pgid && f[0] !== "Z") return true;
  }
  return false;
}

/**
 * The processes (not this one) whose environment holds `name=value`, found through
 * `/proc/<pid>/environ` (the environment they started with); only those this user may read.
 * Linux only: elsewhere, and when /proc cannot be read, an empty list. A marker variable set on a
 * command finds what it started even after they left its process group (`setsid`, a daemon's
 * double fork) and their parents are gone, unless they cleared their environment. With `prefix`,
 * any value that starts with `value` matches.
 */
export function pidsWithEnv(name: string, value: string, prefix = false): number[] {
  if (process.platform !== "linux") return [];
  let names: string[];
  try {
    names = readdirSync("/proc").filter((n) => n.charCodeAt(0) <= 57);
  } catch {
    return [];
  }
  const entry = Buffer.from(`${name}=${value}${prefix ? "" : "\0"}`);
  const found: number[] = [];
  for (const n of names) {
    const pid = Number(n);
    if (pid === process.pid) continue;
    let env: Buffer;
    try {
      env = readFileSync(`/proc/${n}/environ`);
    } catch {
      continue; // gone meanwhile, or another user's
    }
    const at = env.indexOf(entry);
    if (at === 0 || (at > 0 && env[at - 1] === 0)) found.push(pid);
  }
  return found;
}
