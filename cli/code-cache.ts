/**
 * Runs a CommonJS bundle with V8's code cache, so that a run after the first skips compiling it.
 *
 * Node 20 keeps no compiled code between runs (Node >= 22.1 has `module.enableCompileCache`,
 * which covers ES modules too). `vm.Script` can produce and consume V8 code caches, so `larik -p`
 * runs one CommonJS bundle (dist/headless.cjs) through {@link loadWithCodeCache}. The cache is
 * written once the first model request is sent ({@link saveAfterFirstRequest}), so it holds every
 * function a start compiles, not just the top level; bench/startup.mjs measures the difference.
 *
 * V8 checks a cache only against the length of the source and its own flags, so a cache file
 * is trusted like code: it lives in a private folder (`$XDG_CACHE_HOME/larik/v8`, 0700, owned
 * by the user; any other folder is not used) and its name carries the bundle's size and mtime
 * and the Node version. `LARIK_NO_CODE_CACHE=1` turns it off.
 */
import { CJS_WRAPPER_HEAD, CJS_WRAPPER_TAIL, isWrapped } from "./cjs-wrapper.js";
import { startupMark } from "../kernel/kit/startup-probe.js";
// Built-ins through getBuiltinModule, not `import`: this file is on the path of every `larik -p`,
// and an ES import of a built-in first builds a facade of all its exports (~3 ms for these).
const { closeSync, fstatSync, mkdirSync, openSync, readSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } = process.getBuiltinModule("node:fs");
const { homedir } = process.getBuiltinModule("node:os");
const { basename, dirname, join } = process.getBuiltinModule("node:path");

/** A loaded bundle: its `module.exports`, whether the cache was used, and how to save one. */
export interface CachedLoad {
  exports: unknown;
  /** true when V8 accepted a cache file, so nothing was compiled from source up front. */
  hit: boolean;
  /**
   * Writes the cache when there was none or V8 rejected it, holding every function compiled so
   * far; a second call does nothing. Never throws: a cache that cannot be written only costs the
   * next run its compile time.
   */
  save(): void;
}

/** The private cache folder: `$XDG_CACHE_HOME/larik/v8`, default `~/.cache/larik/v8`. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache"), "larik", "v8");
}

/** Creates `dir` 0700 if needed; true only when it is a folder of ours that no one else can write. */
function privateDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    if (!st.isDirectory() || (st.mode & 0o022) !== 0) return false;
    return typeof process.getuid !== "function" || st.uid === process.getuid();
  } catch {
    return false;
  }
}

/** Reads all `size` bytes of `fd` into the start of `buf`; returns that view. */
function readInto(fd: number, buf: Buffer, size: number): Buffer {
  let n = 0;
  while (n < size) {
    const got = readSync(fd, buf, n, size - n, n);
    if (got === 0) throw new Error("file shrank while read");
    n += got;
  }
  return buf.subarray(0, size);
}

/**
 * The bundle's source and its cache file's bytes, read through one buffer: the source is copied
 * out into a string first, then the cache overwrites it. Fresh memory is what costs at start-up
 * (a first-touched page faults, ~15 µs each on a VM here), and a second buffer is ~140 more.
 */
function readSourceAndCache(file: string, size: number, cacheFile: string | undefined): { source: string; cachedData: Buffer | undefined } {
  let cacheFd: number | undefined;
  let cacheSize = 0;
  if (cacheFile) {
    try {
      cacheFd = openSync(cacheFile, "r");
      const st = fstatSync(cacheFd);
      if (typeof process.getuid === "function" && st.uid !== process.getuid()) throw new Error("not ours");
      cacheSize = st.size;
    } catch {
      if (cacheFd !== undefined) closeSync(cacheFd);
      cacheFd = undefined;
    }
  }
  const buf = Buffer.allocUnsafeSlow(Math.max(size, cacheSize));
  const fd = openSync(file, "r");
  let source: string;
  try {
    source = readInto(fd, buf, size).toString("latin1");
  } finally {
    closeSync(fd);
  }
  if (cacheFd === undefined) return { source, cachedData: undefined };
  try {
    return { source, cachedData: readInto(cacheFd, buf, cacheSize) };
  } catch {
    return { source, cachedData: undefined };
  } finally {
    closeSync(cacheFd);
  }
}

/**
 * Writes `load`'s cache (when it needs one) as soon as the run's first HTTP request has been sent,
 * seen on Node's `http.client.request.start` diagnostics channel. The cache then holds what a
 * start compiles, up to the first model request, and not what this particular run went on to
 * compile (tool code, a long answer's rendering): a cache written at exit made every later start
 * deserialize whatever the first run happened to use. A run that sends no request writes none:
 * its cache would lack the request's whole path (the provider, the tools' schemas, node:http's
 * callers), and every later start would compile that from source, for as long as the bundle is
 * the same (a first run that stops at "missing API key" is common). No-op when the cache was a
 * hit.
 */
export function saveAfterFirstRequest(load: CachedLoad): void {
  if (load.hit) return;
  const dc = process.getBuiltinModule("node:diagnostics_channel");
  const channel = "http.client.request.start";
  const onStart = (message: unknown) => {
    dc.unsubscribe(channel, onStart);
    (message as { request: { once(event: "finish", fn: () => void): void } }).request.once("finish", () => load.save());
  };
  dc.subscribe(channel, onStart);
}

/**
 * The `require` the bundle gets. `linked` answers the ids it knows (the other file of a split
 * build, cli/headless-files.ts) and undefined for others. Built-ins come from getBuiltinModule; `createRequire` (whose
 * node:module pulls in the ES module loader, ~2 ms) is made when the bundle first requires a
 * package, which a `-p` run does only for features it uses (MCP, jiti for a config file, ...).
 */
function requireFor(file: string, linked?: (id: string) => unknown): NodeJS.Require {
  let packages: NodeJS.Require | undefined;
  const req = (id: string): unknown => {
    const mod = linked?.(id);
    if (mod !== undefined) return mod;
    const builtin = process.getBuiltinModule(id);
    if (builtin) return builtin;
    packages ??= process.getBuiltinModule("node:module").createRequire(file);
    return packages(id);
  };
  return req as NodeJS.Require;
}

/**
 * Loads the CommonJS file `file` (ASCII only) like `require` would (`exports`, `require`, `module`,
 * `__filename`, `__dirname`), compiling it with the cache from `cacheDir` when there is a valid one.
 * A file that starts with the wrapper's head ({@link isWrapped}) is taken to be that function
 * already: it is compiled as read, which saves copying the source.
 * The bundle must not call `import()`: a script compiled by `vm.Script` needs an experimental
 * flag for that (the headless build turns dynamic imports into `require`).
 * @param cacheDir the cache folder, or false for none
 * @param linked answers the bundle's `require` of ids it knows first (undefined: not one of them)
 * @throws whatever the bundle throws while it loads; a missing, foreign or rejected cache is not an error
 */
export function loadWithCodeCache(file: string, cacheDir: string | false, linked?: (id: string) => unknown): CachedLoad {
  const st = statSync(file);
  const stem = basename(file).replace(/[^\w.-]/g, "_");
  const name = `${stem}-${st.size}-${Math.trunc(st.mtimeMs)}-${process.version}-${process.arch}.bin`;
  const usable = cacheDir !== false && privateDir(cacheDir);
  const cacheFile = usable ? join(cacheDir, name) : undefined;
  // latin1 is exact here (the build writes ASCII only) and skips UTF-8 decoding of ~0.6 MB
  const { source, cachedData } = readSourceAndCache(file, st.size, cacheFile);
  startupMark("bundle read");
  // A file written already wrapped (dist/headless.cjs) is compiled as read; wrapping another
  // copies it. The wrapper is Node's own, on the first line, so stack traces keep the file's lines.
  const wrapped = isWrapped(source) ? source : `${CJS_WRAPPER_HEAD} ${source}${CJS_WRAPPER_TAIL}`;
  const { Script } = process.getBuiltinModule("node:vm");
  const script = new Script(wrapped, { filename: file, cachedData });
  startupMark("bundle compiled");
  const hit = cachedData !== undefined && !script.cachedDataRejected;
  const mod = { exports: {} as unknown };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(mod.exports, mod.exports, requireFor(file, linked), mod, file, dirname(file));
  let saved = hit || !cacheFile;
  return {
    exports: mod.exports,
    hit,
    save() {
      if (saved || !cacheFile) return;
      saved = true;
      try {
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        renameSync(tmp, cacheFile);
        // caches of earlier builds of this bundle are dead weight
        for (const f of readdirSync(dirname(cacheFile))) {
          if (f !== name && f.startsWith(`${stem}-`) && f.endsWith(".bin")) unlinkSync(join(dirname(cacheFile), f));
        }
      } catch {
        // a read-only or full disk: the next run compiles from source again
      }
    },
  };
}
