/**
 * Whether a process id names a running process, for files that record the pid of their writer
 * (a session's lock, the sandbox's placeholder ledger) and are stale once it is gone.
 */

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
