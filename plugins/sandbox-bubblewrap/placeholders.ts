/**
 * Placeholders for missing protected paths (LARIK-REFERENCE §19 "Linux placeholders"): made
 * when a sandboxed command starts, bound read-only for its lifetime, ref-counted across
 * concurrent commands, removed only if unchanged once the last command using them has ended.
 *
 * `wrap()` returns an argv and never sees the process, so each run carries a marker
 * (`--setenv LARIK_SANDBOX_RUN <id>` in bwrap's own argv) and a sweep reads `/proc/<pid>/cmdline`
 * to see which runs are alive. bwrap lives as long as anything in the sandbox does
 * (`--unshare-pid`: the namespace dies with its first process), so background children keep the
 * placeholders too. The sweep runs every {@link SWEEP_MS} only while runs are live.
 *
 * A process killed outright (SIGKILL, a crash) cannot remove its placeholders, so each one keeps
 * a ledger of them ({@link useLedger}); the next run that sandboxes a command removes what a gone
 * process listed, under the same rule: only when still unchanged.
 */
import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { pidAlive } from "../../kernel/index.js";
import type { PlaceholderSpec } from "./protected.js";

/** The marker variable naming a run in bwrap's argv. */
export const RUN_MARKER = "LARIK_SANDBOX_RUN";
/** How often live runs are checked (ms). */
const SWEEP_MS = 1000;
/** A run never seen alive is released after this long: it ended before a sweep saw it, or never started (ms). `wrap` is followed by `spawn` at once. */
const START_GRACE_MS = 2000;

interface Made {
  spec: PlaceholderSpec;
  ino: number;
  refs: Set<string>;
}

interface Run {
  started: number;
  seen: boolean;
}

const made = new Map<string, Made>();
const runs = new Map<string, Run>();
let timer: NodeJS.Timeout | undefined;

/** Ids of runs whose bwrap is alive, from `/proc/*\/cmdline`. */
function liveRuns(): Set<string> {
  const live = new Set<string>();
  const tag = `${RUN_MARKER}\0`;
  let pids: string[];
  try {
    pids = readdirSync("/proc");
  } catch {
    return live;
  }
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "latin1");
    } catch {
      continue;
    }
    const at = cmd.indexOf(tag);
    if (at < 0) continue;
    const end = cmd.indexOf("\0", at + tag.length);
    live.add(cmd.slice(at + tag.length, end < 0 ? undefined : end));
  }
  return live;
}

/** Creates one placeholder; returns false when the path appeared meanwhile or cannot be made. */
function create(spec: PlaceholderSpec): Made | "exists" | undefined {
  try {
    if (spec.kind === "dir") mkdirSync(spec.path, { mode: 0o755 });
    else {
      const fd = openSync(spec.path, "wx", 0o644);
      try {
        if (spec.content) writeSync(fd, spec.content);
      } finally {
        closeSync(fd);
      }
    }
    return { spec, ino: lstatSync(spec.path).ino, refs: new Set() };
  } catch (err) {
    // EEXIST: it appeared meanwhile, so bind what is there. Anything else (EACCES, EROFS): this
    // process cannot create the path, and the sandboxed command runs as the same user.
    return (err as NodeJS.ErrnoException).code === "EEXIST" ? "exists" : undefined;
  }
}

/** Removes a placeholder when it is still ours and unchanged. */
function removeIfUnchanged(m: Made): void {
  try {
    const st = lstatSync(m.spec.path);
    if (st.ino !== m.ino) return;
    if (m.spec.kind === "dir") {
      if (st.isDirectory()) rmdirSync(m.spec.path); // fails when not empty: kept
      return;
    }
    if (!st.isFile()) return;
    const want = m.spec.content ?? "";
    if (st.size !== Buffer.byteLength(want) || readFileSync(m.spec.path, "utf8") !== want) return;
    unlinkSync(m.spec.path);
  } catch {
    // gone or changed: leave it
  }
}

function release(id: string): void {
  runs.delete(id);
  let changed = false;
  // newest first: a placeholder made inside another goes before the folder that holds it
  for (const [path, m] of [...made].reverse()) {
    if (!m.refs.delete(id) || m.refs.size) continue;
    made.delete(path);
    removeIfUnchanged(m);
    changed = true;
  }
  if (changed) saveLedger();
}

/** Checks which runs ended and releases their placeholders. */
export function sweep(now = Date.now()): void {
  if (!runs.size) return stop();
  const live = liveRuns();
  for (const [id, run] of runs) {
    if (live.has(id)) run.seen = true;
    else if (run.seen || now - run.started > START_GRACE_MS) release(id);
  }
  if (!runs.size) stop();
}

function stop(): void {
  if (timer) clearInterval(timer);
  timer = undefined;
}

/**
 * Takes a reference for `runId` on every placeholder among `binds` (making missing ones) and
 * returns the paths to bind: all of `binds` except placeholders that could not be made.
 */
export function acquire(runId: string, binds: { path: string; placeholder?: PlaceholderSpec }[]): Set<string> {
  sweep();
  const bound = new Set<string>();
  runs.set(runId, { started: Date.now(), seen: false });
  let changed = false;
  for (const b of binds) {
    let m = made.get(b.path);
    if (!m && b.placeholder) {
      const r = create(b.placeholder);
      if (r === undefined) continue;
      if (r !== "exists") {
        m = r;
        made.set(b.path, m);
        changed = true;
      }
    }
    m?.refs.add(runId);
    bound.add(b.path);
  }
  if (changed) saveLedger();
  if (!timer) {
    timer = setInterval(() => sweep(), SWEEP_MS);
    timer.unref();
  }
  return bound;
}

/** Releases the given runs (a sandbox being disposed) and removes placeholders no run uses. */
export function releaseRuns(ids: Iterable<string>): void {
  for (const id of ids) release(id);
  if (!runs.size) stop();
}

/** Releases every run and removes unchanged placeholders (process exit). */
export function releaseAll(): void {
  for (const id of [...runs.keys()]) release(id);
  for (const [path, m] of [...made].reverse()) {
    made.delete(path);
    removeIfUnchanged(m);
  }
  saveLedger();
  stop();
}

/** This process's ledger file, once {@link useLedger} named its folder. */
let ledger: string | undefined;

/**
 * Keeps this process's list of placeholders in `dir` (`placeholders-<pid>.json`, written whenever
 * the list changes, removed when it empties), and first removes the placeholders listed there by
 * processes that are gone. A ledger that cannot be written costs only that after-crash cleanup.
 */
export function useLedger(dir: string): void {
  if (ledger) return;
  ledger = join(dir, `placeholders-${process.pid}.json`);
  removeStale(dir);
}

function saveLedger(): void {
  if (!ledger) return;
  try {
    if (!made.size) return rmSync(ledger, { force: true });
    mkdirSync(join(ledger, ".."), { recursive: true, mode: 0o700 });
    writeFileSync(ledger, JSON.stringify([...made.values()].map((m) => ({ ...m.spec, ino: m.ino }))), { mode: 0o600 });
  } catch {
    // see useLedger
  }
}

/** Removes, newest first and only when unchanged, the placeholders that gone processes listed in `dir`. */
function removeStale(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^placeholders-(\d+)\.json$/.exec(name)?.[1]);
    if (!pid || pid === process.pid || pidAlive(pid)) continue;
    const file = join(dir, name);
    try {
      const list = JSON.parse(readFileSync(file, "utf8")) as unknown;
      if (Array.isArray(list)) {
        for (const e of list.reverse()) {
          const ok = e && typeof e.path === "string" && isAbsolute(e.path) && (e.kind === "dir" || e.kind === "file") && typeof e.ino === "number";
          if (ok) removeIfUnchanged({ spec: { path: e.path, kind: e.kind, content: typeof e.content === "string" ? e.content : undefined }, ino: e.ino, refs: new Set() });
        }
      }
    } catch {
      // unreadable: only the file goes
    }
    rmSync(file, { force: true });
  }
}

/** True when `path` is a placeholder this process made and has not removed. */
export function isPlaceholder(path: string): boolean {
  return made.has(path);
}

/** Paths of placeholders currently made (tests, `/sandbox`). */
export function placeholderPaths(): string[] {
  return [...made.keys()];
}
