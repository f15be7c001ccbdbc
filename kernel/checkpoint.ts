/**
 * Checkpoints behind `/undo` (LARIK-REFERENCE §8, invariant 15). A turn begins a unit; the first
 * write to a path in a turn captures the file's bytes and mode (or that it did not exist); bash
 * in a git repository records what the command changed; undo restores the newest unit that
 * changed files, in reverse order, confined to the project.
 *
 * On disk (private: folders 0700, files 0600):
 * ```
 * <dataDir>/checkpoints/<session id>/<turn n>/manifest.json   written atomically (tmp + rename)
 * <dataDir>/checkpoints/<session id>/<turn n>/0.bin, 1.bin…   captured bytes
 * ```
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import * as z from "zod/mini";
import { lazySchema } from "./kit/lazy-schema.js";
import { gitAfter, gitBefore, lstatOrUndefined, readNoFollow, type FileState } from "./kit/checkpoint-git.js";
import { protectedPathReason } from "./permission.js";
import { canonicalDir, toPosix } from "./paths.js";
import { writeAtomic } from "./kit/write-atomic.js";

/**
 * The checkpoint interface behind `/undo` (LARIK-REFERENCE §8). A turn begins a unit; the first
 * write to a path in a turn captures the file's bytes and mode (or that it did not exist);
 * undo restores the newest unit that changed files, in reverse order, inside the project.
 */
export interface CheckpointStore {
  /** Starts a new unit for the turn about to run. */
  beginTurn(): Promise<void>;
  /**
   * Captures `absPath` before its first write in this turn; later calls in the same turn are
   * no-ops. Throws when the capture fails (the write must not happen).
   */
  capture(absPath: string): Promise<void>;
  /**
   * Records what a shell command changed (git repos); optional. Runs `run` and returns or throws
   * what it does; tracking problems never fail the command, they go to `opts.warn` as one line.
   */
  trackCommand?<T>(cwd: string, run: () => Promise<T>, opts?: { warn?(text: string): void }): Promise<T>;
  /** Restores the newest unit that changed files; returns the project-relative paths restored. */
  undo(): Promise<string[]>;
  /** Restores every unit from turn `turn` on, newest first (`/rewind n files`); optional. */
  undoSince?(turn: number): Promise<string[]>;
  /** The number of the current turn's unit, recorded on prompts so `/rewind` can map them; optional. */
  currentTurn?(): number | undefined;
  /**
   * The project-relative paths of the units undone after `since` (an ISO 8601 UTC time, as
   * session entries carry), oldest unit first, each path once; optional. A resumed session asks
   * it with its last prompt's time: an undo another process ran after that prompt (`larik -c -p
   * /undo`) has not been told to the model yet.
   */
  undoneAfter?(since: string): Promise<string[]>;
}

/**
 * The `<system-note>` text queued after an undo, so the model re-reads what changed under it
 * (LARIK-REFERENCE §8).
 */
export function undoNote(files: readonly string[]): string {
  return `The user ran /undo: the file changes of the last file-changing turn were reverted. These files are back to their earlier content (or removed if they were new): ${files.join(", ")}. Re-read them before relying on or editing their content.`;
}

/** A store that keeps nothing (embedding without undo, or tests). */
export const noCheckpoints: CheckpointStore = {
  async beginTurn() {},
  async capture() {},
  async undo() {
    return [];
  },
};

/** Default `checkpoint_retention_days` (§8). */
export const DEFAULT_CHECKPOINT_RETENTION_DAYS = 7;

// lazySchema: built at the first manifest read (an undo), not at every start-up
const ManifestEntrySchema = lazySchema(() =>
  z.discriminatedUnion("kind", [
    z.object({
      kind: z.literal("file"),
      /** Project-relative, `/`-separated. */
      path: z.string(),
      /** Permission bits (`st_mode & 0o7777`). */
      mode: z.int(),
      /** Blob file name inside the turn folder. */
      blob: z.string().check(z.regex(/^\d+\.bin$/)),
      /** Bytes. */
      size: z.int(),
    }),
    z.object({
      kind: z.literal("absent"),
      path: z.string(),
      /** The first folder on the way that did not exist either (removed again by undo if empty). */
      missing_dir: z.optional(z.string()),
    }),
  ]),
);
/** One path a turn touched: its bytes were saved (`file`), or it did not exist before (`absent`). */
export type CheckpointEntry = z.infer<typeof ManifestEntrySchema>;

const ManifestSchema = lazySchema(() =>
  z.object({
    version: z.literal(1),
    turn: z.int(),
    project_root: z.string(),
    /** Entries in capture order; undo restores them last first. */
    entries: z.array(ManifestEntrySchema),
    /** ISO time the unit was undone; undone units are kept (numbering continues) without blobs. */
    undone: z.optional(z.string()),
  }),
);
/** A turn's `manifest.json` (docs/undo.md "On disk"). */
export type CheckpointManifest = z.infer<typeof ManifestSchema>;

/** What {@link createCheckpointStore} takes. */
export interface CheckpointStoreOptions {
  /** The data root (`dataDir()` from kernel/paths.ts). */
  dataDir: string;
  /** The session id; one folder per session (a fork starts with no undo history). */
  sessionId: string;
  /** The restore boundary (the host's project root). */
  projectRoot: string;
  /**
   * When set, session folders older than this many days (negative: never) are pruned once per
   * process at the first `beginTurn`, this session excepted (`checkpoint_retention_days`).
   */
  retentionDays?: number;
  /**
   * Receives one-line warnings (bash tracking skipped or failed) when `trackCommand` gets no
   * `warn` of its own; the command still runs.
   */
  warn?(text: string): void;
}

const SAFE_SEGMENT = /^[\w.-]+$/;

/** `p` relative to `root` (`/`-separated), or undefined when outside it or the root itself. */
function inside(root: string, p: string): string | undefined {
  const rel = relative(root, p);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return toPosix(rel);
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const prunedDirs = new Set<string>();

/**
 * The file-backed store (§8). Operations are serialized, so concurrent captures keep one
 * consistent manifest. Capture and undo never follow a symlink: a captured symlink or directory
 * is refused (file tools never write through them), paths outside the project or protected
 * (§4) are not captured (nothing may restore them), and restores replace directory entries.
 */
class FileCheckpointStore implements CheckpointStore {
  readonly #root: string;
  readonly #dir: string;
  readonly #opts: CheckpointStoreOptions;
  #queue: Promise<unknown> = Promise.resolve();
  #lastTurn: number | undefined;
  #turn: number | undefined;
  #manifest: CheckpointManifest | undefined;
  #captured = new Set<string>();
  #blobs = 0;
  #turnError: string | undefined;

  constructor(opts: CheckpointStoreOptions) {
    if (!SAFE_SEGMENT.test(opts.sessionId) || opts.sessionId === "." || opts.sessionId === "..") {
      throw new Error(`checkpoint session id "${opts.sessionId}" must be letters, digits, "_", "-" or "."`);
    }
    this.#opts = opts;
    this.#root = canonicalDir(opts.projectRoot);
    this.#dir = join(opts.dataDir, "checkpoints", opts.sessionId);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#queue.then(fn, fn);
    this.#queue = p.catch(() => {});
    return p;
  }

  /**
   * The highest turn number on disk (0 when none), read once. This and the turn folder are made
   * synchronously: they run before every turn's first model request, and two trips through the
   * thread pool cost more than the two system calls.
   */
  #highestTurn(): number {
    if (this.#lastTurn !== undefined) return this.#lastTurn;
    let max = 0;
    try {
      // a new session has no folder yet: checking first saves a thrown error before its first request
      if (existsSync(this.#dir)) for (const name of readdirSync(this.#dir)) if (/^\d+$/.test(name)) max = Math.max(max, Number(name));
    } catch {
      // no folder yet
    }
    this.#lastTurn = max;
    return max;
  }

  #startTurn(): void {
    const n = this.#highestTurn() + 1;
    this.#lastTurn = n;
    this.#turn = n;
    this.#manifest = { version: 1, turn: n, project_root: this.#root, entries: [] };
    this.#captured = new Set();
    this.#blobs = 0;
    this.#turnError = undefined;
    try {
      mkdirSync(join(this.#dir, String(n)), { recursive: true, mode: 0o700 });
    } catch (err) {
      this.#turnError = `cannot create the checkpoint folder ${join(this.#dir, String(n))}: ${errText(err)}`;
    }
  }

  beginTurn(): Promise<void> {
    return this.#serial(async () => {
      this.#startTurn();
      const days = this.#opts.retentionDays;
      if (days !== undefined && !prunedDirs.has(this.#opts.dataDir)) {
        prunedDirs.add(this.#opts.dataDir);
        // Pruning is housekeeping: it must not delay or fail the turn. setImmediate runs after
        // the event loop's next poll, so the turn's model request is on its way first.
        const { dataDir, sessionId } = this.#opts;
        setImmediate(() => void pruneCheckpointsDaily(dataDir, days, { keep: [sessionId] }).catch(() => {}));
      }
    });
  }

  /** Adds one entry to the current unit (blob first, then the manifest, atomically). */
  async #record(rel: string, state: FileState | { kind: "absent"; missing_dir?: string }): Promise<void> {
    if (this.#turn === undefined) this.#startTurn();
    if (this.#captured.has(rel)) return;
    if (this.#turnError) throw new Error(this.#turnError);
    const turnDir = join(this.#dir, String(this.#turn));
    const manifest = this.#manifest!;
    let entry: CheckpointEntry;
    if (state.kind === "file") {
      const blob = `${this.#blobs}.bin`;
      await writeFile(join(turnDir, blob), state.bytes, { mode: 0o600 });
      this.#blobs++;
      entry = { kind: "file", path: rel, mode: state.mode, blob, size: state.bytes.length };
    } else {
      entry = { kind: "absent", path: rel, ...("missing_dir" in state && state.missing_dir ? { missing_dir: state.missing_dir } : {}) };
    }
    const next = { ...manifest, entries: [...manifest.entries, entry] };
    await writeAtomic(join(turnDir, "manifest.json"), JSON.stringify(next, null, 1));
    this.#manifest = next;
    this.#captured.add(rel);
  }

  /** The first folder of `rel`'s parents that does not exist, or undefined when all do. */
  async #firstMissingDir(rel: string): Promise<string | undefined> {
    const comps = rel.split("/");
    for (let i = 1; i < comps.length; i++) {
      const sub = comps.slice(0, i).join("/");
      if (!(await lstatOrUndefined(join(this.#root, sub)))) return sub;
    }
    return undefined;
  }

  capture(absPath: string): Promise<void> {
    return this.#serial(async () => {
      const abs = resolve(absPath);
      // the canonical parent, so a path through a symlinked folder counts where it really is
      const rel = inside(this.#root, join(canonicalDir(dirname(abs)), basename(abs)));
      // Outside the project or protected: undo could never restore it, so there is nothing to keep.
      if (rel === undefined || protectedPathReason(rel)) return;
      if (this.#turn !== undefined && this.#captured.has(rel)) return;
      const file = join(this.#root, rel);
      try {
        const st = await lstatOrUndefined(file);
        if (!st) {
          await this.#record(rel, { kind: "absent", missing_dir: await this.#firstMissingDir(rel) });
          return;
        }
        if (st.isSymbolicLink()) throw new Error("it is a symlink");
        if (!st.isFile()) throw new Error(st.isDirectory() ? "it is a directory" : "it is not a regular file");
        await this.#record(rel, { kind: "file", bytes: await readNoFollow(file), mode: st.mode & 0o7777 });
      } catch (err) {
        throw new Error(`could not save ${rel} for /undo: ${errText(err)}`);
      }
    });
  }

  /** Maps a repository-relative path to a capturable project-relative one, or undefined. */
  #projectRel(top: string, topRel: string): string | undefined {
    const rel = inside(this.#root, join(top, topRel));
    return rel === undefined || protectedPathReason(rel) ? undefined : rel;
  }

  async trackCommand<T>(cwd: string, run: () => Promise<T>, opts: { warn?(text: string): void } = {}): Promise<T> {
    const warn = (text: string) => (opts.warn ?? this.#opts.warn)?.(`/undo will not cover this command: ${text}`);
    let snap: Awaited<ReturnType<typeof gitBefore>> | undefined;
    try {
      // Copies are taken under the queue so a concurrent capture cannot interleave.
      snap = await this.#serial(() =>
        gitBefore(cwd, (p, top) => {
          const rel = this.#projectRel(top, p);
          return rel === undefined || (this.#turn !== undefined && this.#captured.has(rel));
        }),
      );
    } catch (err) {
      warn(errText(err));
      snap = undefined;
    }
    if (snap && "untracked" in snap) {
      if (snap.untracked !== "not a git repository") warn(snap.untracked);
      snap = undefined;
    }
    try {
      return await run();
    } finally {
      if (snap) {
        const s = snap;
        try {
          await this.#serial(async () => {
            const changes = await gitAfter(s, (p) => {
              const rel = this.#projectRel(s.top, p);
              return rel === undefined || (this.#turn !== undefined && this.#captured.has(rel));
            });
            for (const c of changes) {
              const rel = this.#projectRel(s.top, c.path);
              if (rel === undefined) continue;
              if (c.state.kind === "file") await this.#record(rel, c.state);
              else {
                const dir = (c.state as { missing_dir?: string }).missing_dir;
                await this.#record(rel, { kind: "absent", missing_dir: dir === undefined ? undefined : inside(this.#root, join(s.top, dir)) });
              }
            }
          });
        } catch (err) {
          warn(errText(err));
        }
      }
    }
  }

  undo(): Promise<string[]> {
    return this.#serial(async () => (await this.#undoNewest(0)) ?? []);
  }

  /**
   * Restores every unit from `turn` on, newest first (`/rewind n files`); returns the distinct
   * paths restored. Stops at the first restore that fails (its snapshot is kept).
   */
  undoSince(turn: number): Promise<string[]> {
    return this.#serial(async () => {
      const all = new Set<string>();
      for (;;) {
        const r = await this.#undoNewest(turn);
        if (r === undefined) return [...all];
        for (const p of r) all.add(p);
      }
    });
  }

  /** The turn number of the unit in progress (undefined before the first turn). */
  currentTurn(): number | undefined {
    return this.#turn ?? this.#lastTurn;
  }

  async undoneAfter(since: string): Promise<string[]> {
    let names: string[];
    try {
      names = (await readdir(this.#dir)).filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(a) - Number(b));
    } catch {
      return [];
    }
    const after = Date.parse(since);
    const paths = new Set<string>();
    for (const name of names) {
      try {
        // an undo rewrites the manifest (a rename into the folder): older folders need no read
        if ((await stat(join(this.#dir, name))).mtimeMs < after - 2000) continue; // 2 s: coarse file system clocks
        const m = ManifestSchema.parse(JSON.parse(await readFile(join(this.#dir, name, "manifest.json"), "utf8")));
        if (m.undone && Date.parse(m.undone) > after) for (const e of m.entries) paths.add(e.path);
      } catch {
        // no manifest (nothing captured) or an unreadable one: undo reports that one itself
      }
    }
    return [...paths];
  }

  /** Undoes the newest not-yet-undone unit numbered ≥ `minTurn`; undefined when none is left. */
  async #undoNewest(minTurn: number): Promise<string[] | undefined> {
    let names: string[];
    try {
      names = (await readdir(this.#dir)).filter((n) => /^\d+$/.test(n) && Number(n) >= minTurn);
    } catch {
      return undefined;
    }
    names.sort((a, b) => Number(b) - Number(a));
    for (const name of names) {
      const turnDir = join(this.#dir, name);
      let raw: string;
      try {
        raw = await readFile(join(turnDir, "manifest.json"), "utf8");
      } catch {
        continue; // a turn that captured nothing
      }
      let manifest: CheckpointManifest;
      try {
        manifest = ManifestSchema.parse(JSON.parse(raw));
      } catch (err) {
        throw new Error(`checkpoint ${join(turnDir, "manifest.json")} is unreadable (${errText(err).split("\n")[0]}): delete that folder to undo past it`);
      }
      if (manifest.undone || manifest.entries.length === 0) continue;
      const restored = await this.#restore(turnDir, manifest);
      const done = { ...manifest, undone: new Date().toISOString() };
      await writeAtomic(join(turnDir, "manifest.json"), JSON.stringify(done, null, 1));
      for (const e of manifest.entries) if (e.kind === "file") await rm(join(turnDir, e.blob), { force: true });
      if (Number(name) === this.#turn) {
        // later writes in this turn start a fresh unit instead of joining an undone one
        this.#turn = undefined;
        this.#captured = new Set();
      }
      return restored;
    }
    return undefined;
  }

  /**
   * Checks a manifest path and its parent folders before a restore.
   * @throws Error naming the path when it leaves the project, is protected, or a parent folder is
   * a symlink or not a folder.
   */
  async #checkPath(rel: string, createParents: boolean): Promise<{ abs: string; parentExists: boolean }> {
    const comps = rel.split("/");
    if (!rel || isAbsolute(rel) || rel.includes("\\") || comps.some((c) => c === "" || c === "." || c === "..")) {
      throw new Error(`${rel}: not a plain project-relative path`);
    }
    const why = protectedPathReason(rel);
    if (why) throw new Error(`${rel}: ${why}`);
    const abs = join(this.#root, ...comps);
    if (inside(this.#root, abs) === undefined) throw new Error(`${rel}: outside the project`);
    let cur = this.#root;
    for (const c of comps.slice(0, -1)) {
      cur = join(cur, c);
      const st = await lstatOrUndefined(cur);
      if (!st) {
        if (!createParents) return { abs, parentExists: false };
        await mkdir(cur, { mode: 0o755 });
        continue;
      }
      if (st.isSymbolicLink()) throw new Error(`${rel}: ${toPosix(relative(this.#root, cur))} is a symlink`);
      if (!st.isDirectory()) throw new Error(`${rel}: ${toPosix(relative(this.#root, cur))} is not a folder`);
    }
    return { abs, parentExists: true };
  }

  /** Restores one unit, last entry first. Returns the paths it changed. */
  async #restore(turnDir: string, manifest: CheckpointManifest): Promise<string[]> {
    const restored: string[] = [];
    const seen = new Set<string>();
    for (const e of [...manifest.entries].reverse()) {
      if (seen.has(e.path)) continue;
      seen.add(e.path);
      try {
        if (e.kind === "file") {
          const bytes = await readFile(join(turnDir, e.blob));
          if (bytes.length !== e.size) throw new Error(`its saved copy ${e.blob} is damaged`);
          const { abs } = await this.#checkPath(e.path, true);
          if (await this.#replaceFile(abs, bytes, e.mode)) restored.push(e.path);
        } else {
          const { abs, parentExists } = await this.#checkPath(e.path, false);
          if (parentExists && (await this.#remove(abs))) restored.push(e.path);
          if (e.missing_dir) await this.#removeEmptyDirs(dirname(abs), e.missing_dir);
        }
      } catch (err) {
        const done = restored.length ? ` (already restored: ${restored.join(", ")})` : "";
        throw new Error(`undo stopped at ${e.path}: ${errText(err)}${done}; the snapshot is kept: fix that and run /undo again`);
      }
    }
    return restored;
  }

  /** Puts `bytes` at `abs` by renaming a temp file over the entry (a symlink there is replaced, not followed). */
  async #replaceFile(abs: string, bytes: Buffer, mode: number): Promise<boolean> {
    const st = await lstatOrUndefined(abs);
    if (st?.isDirectory()) throw new Error("a folder is there now");
    if (st?.isFile() && (st.mode & 0o7777) === mode && st.size === bytes.length) {
      const cur = await readFile(abs).catch(() => undefined);
      if (cur?.equals(bytes)) return false;
    }
    const tmp = join(dirname(abs), `.${basename(abs)}.larik-undo-${randomBytes(4).toString("hex")}`);
    try {
      await writeFile(tmp, bytes, { mode: 0o600, flag: "wx" });
      await chmod(tmp, mode); // the open mode is filtered by the umask; the saved one is exact
      await rename(tmp, abs);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return true;
  }

  /** Removes what is at `abs` (a file, symlink or empty folder). Returns false when nothing was there. */
  async #remove(abs: string): Promise<boolean> {
    const st = await lstatOrUndefined(abs);
    if (!st) return false;
    if (st.isDirectory()) {
      try {
        await rmdir(abs);
      } catch (err) {
        throw new Error(`a folder that is not empty is there now (${(err as NodeJS.ErrnoException).code ?? errText(err)})`);
      }
    } else await unlink(abs);
    return true;
  }

  /** Removes now-empty folders from `dir` up to and including `top` (project-relative). */
  async #removeEmptyDirs(dir: string, top: string): Promise<void> {
    const stop = join(this.#root, top);
    if (inside(this.#root, stop) === undefined || (dir !== stop && inside(stop, dir) === undefined)) return;
    for (let cur = dir; inside(this.#root, cur) !== undefined; cur = dirname(cur)) {
      const st = await lstatOrUndefined(cur);
      if (st && (!st.isDirectory() || st.isSymbolicLink())) return;
      if (st) {
        try {
          await rmdir(cur);
        } catch {
          return; // not empty: the user or a later turn put something there
        }
      }
      if (cur === stop) return;
    }
  }
}

/**
 * Creates the file-backed checkpoint store of one session (§8). Nothing is read or written
 * until the first call; turn numbers continue after the highest unit on disk.
 * @throws Error when `sessionId` is not a plain folder name.
 */
export function createCheckpointStore(opts: CheckpointStoreOptions): CheckpointStore {
  return new FileCheckpointStore(opts);
}

/** Options of {@link pruneCheckpoints} and {@link pruneCheckpointsDaily}. */
export interface PruneOptions {
  /** Session ids whose folders stay whatever their age (the sessions in use). */
  keep?: string[];
  /** The current time in ms since the epoch (default `Date.now()`; tests set it). */
  now?: number;
}

/** The file in the checkpoints folder whose mtime is the time of the last automatic prune. */
const PRUNE_STAMP = ".pruned";

/**
 * The prune a process runs at its first turn: {@link pruneCheckpoints}, unless the last one (the
 * mtime of `checkpoints/.pruned`) was less than a day ago, or less than `days` days ago when that
 * is shorter. A full pass costs a few system calls per session folder kept, which every
 * `larik -p` of a script would otherwise repeat, while the response it waits for streams in.
 * Returns the session ids removed.
 */
export async function pruneCheckpointsDaily(
  dataDir: string,
  days: number = DEFAULT_CHECKPOINT_RETENTION_DAYS,
  opts: PruneOptions = {},
): Promise<string[]> {
  if (!(days >= 0)) return [];
  const stamp = join(dataDir, "checkpoints", PRUNE_STAMP);
  const now = opts.now ?? Date.now();
  // sync: one system call, and node:fs/promises (which loads readline too) stays unloaded on the
  // days with nothing to do
  const last = statSync(stamp, { throwIfNoEntry: false })?.mtimeMs;
  // a stamp from the future (the clock was set back) counts as stale
  if (last !== undefined && now >= last && now - last < Math.min(1, days) * 86_400_000) return [];
  // stamped before the scan, and synchronously: another process starting now skips its own scan,
  // and no file appears on a worker thread while someone removes the folder
  try {
    writeFileSync(stamp, "", { mode: 0o600 });
  } catch {
    // no checkpoints folder yet: nothing to prune either
  }
  return pruneCheckpoints(dataDir, days, opts);
}

/**
 * Deletes session checkpoint folders whose newest change (the folder or any turn folder's mtime)
 * is older than `days` days (`checkpoint_retention_days`, §8: default 7, negative keeps
 * everything). Covers every project: the folders are per session. Returns the session ids removed.
 */
export async function pruneCheckpoints(
  dataDir: string,
  days: number = DEFAULT_CHECKPOINT_RETENTION_DAYS,
  opts: PruneOptions = {},
): Promise<string[]> {
  if (!(days >= 0)) return [];
  const root = join(dataDir, "checkpoints");
  const cutoff = (opts.now ?? Date.now()) - days * 86_400_000;
  const keep = new Set(opts.keep ?? []);
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (keep.has(name)) continue;
    const dir = join(root, name);
    try {
      const st = await lstat(dir);
      if (!st.isDirectory()) continue;
      let newest = st.mtimeMs;
      for (const sub of await readdir(dir)) {
        newest = Math.max(newest, (await stat(join(dir, sub)).catch(() => st)).mtimeMs);
      }
      if (newest >= cutoff) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // raced with another process or unreadable: leave it
    }
  }
  return removed;
}
