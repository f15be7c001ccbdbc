/**
 * One writer per session (LARIK-REFERENCE §7): `<id>.jsonl.lock` is created with O_EXCL and
 * holds the owner's pid. A lock whose pid is no longer running is stale (the owner crashed or was
 * killed) and is taken over, under a guard file so that racing openers cannot both win. Locks
 * held by this process are released on close and on `exit`.
 *
 * Not covered: SIGKILL or a power loss leaves the lock behind (the next opener takes it over
 * because the pid is dead), and a dead pid reused by an unrelated process makes the lock look
 * held; the error names the lock file so the user can delete it.
 */
import { closeSync, fstatSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { pidAlive } from "../../kernel/index.js";

/** Lock files held by this process (absolute paths). */
const held = new Set<string>();
let exitHookInstalled = false;

function releaseAllOnExit(): void {
  for (const path of held) {
    try {
      unlinkSync(path);
    } catch {
      // already gone: nothing to release
    }
  }
  held.clear();
}

/**
 * Takes the writer lock `lockPath` for session `id`.
 * @returns a release function (idempotent; removes the file only while it still names this pid).
 * @throws Error "session <id> is already open for writing in another process (pid N)…" when a
 *   live process holds it, or "…in this process" when this process already has it open.
 */
export function acquireLock(lockPath: string, id: string): () => void {
  if (held.has(lockPath)) throw new Error(`session ${id} is already open for writing in this process: close it first`);
  // Each pass follows the removal of a stale lock, or a wait for another opener's takeover.
  const deadline = Date.now() + TAKEOVER_WAIT_MS;
  for (;;) {
    let fd: number;
    try {
      fd = openSync(lockPath, "wx", 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || Date.now() > deadline) throw lockError(err, lockPath, id);
      const seen = readLock(lockPath);
      if (!seen) continue; // released meanwhile
      assertStale(seen, lockPath, id);
      removeStale(lockPath, seen, id, deadline);
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    held.add(lockPath);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on("exit", releaseAllOnExit);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.delete(lockPath);
      if (readLock(lockPath)?.pid !== process.pid) return;
      try {
        unlinkSync(lockPath);
      } catch {
        // removed by someone else: nothing to release
      }
    };
  }
}

/** How long opening a session may wait on other openers taking over a stale lock (ms). */
const TAKEOVER_WAIT_MS = 2_000;
/** A takeover guard older than this (ms) was left by an opener that died holding it. */
const GUARD_STALE_MS = 2_000;

/** A lock file as read once: its pid (undefined when empty or not a number) and which file it is. */
export interface LockSnapshot {
  pid: number | undefined;
  /** Device, inode and change times: another lock created in its place differs. */
  identity: string;
  ageMs: number;
}

/** Reads `path` through one descriptor, so the pid and the identity belong to the same file; undefined when it is gone. */
export function readLock(path: string): LockSnapshot | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    const text = readFileSync(fd, "utf8").trim();
    const n = Number.parseInt(text, 10);
    return {
      pid: Number.isSafeInteger(n) && n > 0 ? n : undefined,
      identity: `${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}`,
      ageMs: Date.now() - Number(st.mtimeMs),
    };
  } finally {
    closeSync(fd);
  }
}

/** @throws the "already open" error unless the lock `seen` is stale. */
function assertStale(seen: LockSnapshot, lockPath: string, id: string): void {
  const { pid } = seen;
  // Our own pid here is a leftover of an earlier process that had the same pid (containers
  // restart at pid 1), because locks this process holds are in `held`.
  if (pid !== undefined && pid !== process.pid && pidAlive(pid)) {
    // a second terminal on a busy session usually wants a copy to work in, which --fork gives
    throw new Error(`session ${id} is already open for writing in another process (pid ${pid}): wait for it, or branch it with --fork; if no Larik runs as pid ${pid}, delete ${lockPath}`);
  }
  if (pid === undefined && seen.ageMs < 5_000) {
    // An empty lock file may be one another process has just created and not yet filled.
    throw new Error(`session ${id} is already open for writing in another process (pid unknown); if none is, delete ${lockPath}`);
  }
}

/**
 * Removes the stale lock `seen`, under `<lock>.takeover` (O_EXCL). Unguarded, two openers that
 * both judged the same lock stale raced: the slower one's unlink removed the lock the faster
 * one had just created, and both wrote the session. Under the guard the file is removed only if
 * it is still the very file judged stale (same inode and change times), so a lock made since,
 * even an empty one, is left alone.
 * @throws the "already open" error when another opener holds the guard past `deadline`.
 */
export function removeStale(lockPath: string, seen: LockSnapshot, id: string, deadline: number): void {
  const guard = `${lockPath}.takeover`;
  for (;;) {
    try {
      closeSync(openSync(guard, "wx", 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw lockError(err, lockPath, id);
      // The guard is held for microseconds; an old one was left by an opener that died holding it.
      // (A guard gone by now was released: try again, and never remove one we have not seen.)
      const age = readLock(guard)?.ageMs;
      if (age === undefined) continue;
      if (age > GUARD_STALE_MS) {
        unlinkQuietly(guard);
        continue;
      }
      if (Date.now() > deadline) throw new Error(`session ${id} is being opened by another process; if none is, delete ${guard}`);
      sleepSync(5);
    }
  }
  try {
    if (readLock(lockPath)?.identity === seen.identity) unlinkQuietly(lockPath);
  } finally {
    unlinkQuietly(guard);
  }
}

/** Removes `path`; one already gone is fine (another opener removed it). */
const unlinkQuietly = (path: string) => rmSync(path, { force: true });

/** Blocks the thread for `ms` (opening a session is synchronous, and this wait is rare and short). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function lockError(err: unknown, lockPath: string, id: string): Error {
  const e = err as NodeJS.ErrnoException;
  if (e.code === "EEXIST") return new Error(`session ${id} is already open for writing in another process: ${lockPath} appeared while opening`);
  return new Error(`cannot lock session ${id} (${lockPath}): ${e.message}`);
}
