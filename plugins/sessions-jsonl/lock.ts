/**
 * One writer per session (LARIK-REFERENCE §7): `<id>.jsonl.lock` is created with O_EXCL and
 * holds the owner's pid. A lock whose pid is no longer running is stale (the owner crashed or was
 * killed) and is taken over. Locks held by this process are released on close and on `exit`.
 *
 * Not covered: SIGKILL or a power loss leaves the lock behind (the next opener takes it over
 * because the pid is dead), and a dead pid reused by an unrelated process makes the lock look
 * held; the error names the lock file so the user can delete it.
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
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

function readPid(path: string): number | undefined {
  try {
    const n = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the writer lock `lockPath` for session `id`.
 * @returns a release function (idempotent; removes the file only while it still names this pid).
 * @throws Error "session <id> is already open for writing in another process (pid N)…" when a
 *   live process holds it, or "…in this process" when this process already has it open.
 */
export function acquireLock(lockPath: string, id: string): () => void {
  if (held.has(lockPath)) throw new Error(`session ${id} is already open for writing in this process: close it first`);
  // Two attempts: the second follows the removal of a stale lock.
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(lockPath, "wx", 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw lockError(err, lockPath, id);
      const pid = readPid(lockPath);
      // Our own pid here is a leftover of an earlier process that had the same pid (containers
      // restart at pid 1), because locks this process holds are in `held`.
      if (pid !== undefined && pid !== process.pid && pidAlive(pid)) {
        throw new Error(
          `session ${id} is already open for writing in another process (pid ${pid}); if no Larik runs as pid ${pid}, delete ${lockPath}`,
        );
      }
      if (pid === undefined && recentlyCreated(lockPath)) {
        // An empty lock file may be one another process has just created and not yet filled.
        throw new Error(`session ${id} is already open for writing in another process (pid unknown); if none is, delete ${lockPath}`);
      }
      try {
        unlinkSync(lockPath);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw lockError(e, lockPath, id);
      }
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
      if (readPid(lockPath) !== process.pid) return;
      try {
        unlinkSync(lockPath);
      } catch {
        // removed by someone else: nothing to release
      }
    };
  }
}

function recentlyCreated(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < 5_000;
  } catch {
    return false;
  }
}

function lockError(err: unknown, lockPath: string, id: string): Error {
  const e = err as NodeJS.ErrnoException;
  if (e.code === "EEXIST") return new Error(`session ${id} is already open for writing in another process: ${lockPath} appeared while opening`);
  return new Error(`cannot lock session ${id} (${lockPath}): ${e.message}`);
}
