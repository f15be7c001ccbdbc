/**
 * Sandbox selection at start-up (LARIK-REFERENCE §19 "Startup probe"): with `sandbox.enabled`
 * (default true), probe the registered backends in order and use the first that starts; when
 * none does, bash runs unconfined (`none`: every command asks in `default` mode) and the user
 * gets one line saying why and how to fix it. `none` is not a plugin: it is the absence of a
 * backend (`sandbox` undefined).
 *
 * Also what every backend plugin shares, since plugins share code only through the kernel: the
 * start-up probe by running `true` ({@link probeByRunning}) and the private `$TMPDIR`
 * ({@link SandboxTmpDir}).
 */
import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pidAlive } from "./kit/pid.js";
import type { ProbeResult, Sandbox, SandboxedCommand } from "./registries.js";

/** How long a successful probe stays trusted (ms). Failures are never cached. */
const PROBE_CACHE_MS = 24 * 60 * 60 * 1000;

type ProbeCache = Record<string, { key: string; at: number }>;

function readCache(file: string | undefined): ProbeCache {
  if (!file) return {};
  try {
    return JSON.parse(readFileSync(file, "utf8")) as ProbeCache;
  } catch {
    return {};
  }
}

function writeCache(file: string, cache: ProbeCache): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(cache), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // a cache that cannot be written only costs the next start-up a probe
  }
}

/** The name shown for "no sandbox" (`/sandbox`, footer `⚠ no sandbox`). */
export const NO_SANDBOX = "none";

/** What {@link selectSandbox} chose. */
export interface SandboxSelection {
  /** The backend bash runs in; undefined means `none` (unconfined, commands ask). */
  sandbox?: Sandbox;
  /** One line for the start-up notices when the sandbox is off for a reason the user may fix. */
  notice?: string;
}

/** How long one probe may take before it counts as failed (ms). */
const PROBE_TIMEOUT_MS = 15_000;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
    timer.unref?.();
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/**
 * Picks the sandbox for bash. `settings.sandbox.enabled === false` turns it off without a notice.
 * Backends named `none` are skipped. Each other backend is probed in registration order (a probe
 * that throws or times out counts as failed); the first that passes wins. When every probe fails
 * the notice names the first failure: `no sandbox: bubblewrap: <reason>; fix: <fix>. Bash
 * commands will ask before running.` Never throws.
 */
export async function selectSandbox(
  sandboxes: Sandbox[],
  settings: { sandbox?: { enabled?: boolean } } | Record<string, unknown>,
  opts: { platform?: NodeJS.Platform; timeoutMs?: number; cacheFile?: string; now?: number } = {},
): Promise<SandboxSelection> {
  const cfg = (settings as { sandbox?: { enabled?: unknown } }).sandbox;
  if (cfg?.enabled === false) return {};
  const platform = opts.platform ?? process.platform;
  const candidates = sandboxes.filter((s) => s.name !== NO_SANDBOX);
  const tail = "Bash commands will ask before running.";
  if (!candidates.length) {
    const hint =
      platform === "linux"
        ? "no sandbox plugin is loaded (add sandbox-bubblewrap)"
        : platform === "darwin"
          ? "no sandbox plugin is loaded (add sandbox-seatbelt)"
          : `no OS sandbox exists for ${platform}`;
    return { notice: `no sandbox: ${hint}. ${tail}` };
  }
  let first: string | undefined;
  const cache = readCache(opts.cacheFile);
  const now = opts.now ?? Date.now();
  for (const sandbox of candidates) {
    let key: string | undefined;
    try {
      key = sandbox.probeKey?.();
    } catch {
      key = undefined;
    }
    const hit = key ? cache[sandbox.name] : undefined;
    if (hit && hit.key === key && now - hit.at < PROBE_CACHE_MS) return { sandbox };
    let r: ProbeResult;
    try {
      r = await withTimeout(sandbox.probe(), opts.timeoutMs ?? PROBE_TIMEOUT_MS, `the ${sandbox.name} probe`);
    } catch (err) {
      r = { ok: false, reason: err instanceof Error ? err.message : String(err) };
    }
    if (r.ok) {
      if (key && opts.cacheFile) writeCache(opts.cacheFile, { ...cache, [sandbox.name]: { key, at: now } });
      return { sandbox };
    }
    const line = `${sandbox.name}: ${asClause(r.reason) || "the probe failed"}${r.fix ? `; fix: ${asClause(r.fix)}` : ""}`;
    first ??= line;
  }
  return { notice: `no sandbox: ${first}. ${tail}` };
}

/** `s` on one line without its final period, to go inside the notice's sentence. */
function asClause(s: string | undefined): string {
  return (s ?? "").replace(/\s+/g, " ").trim().replace(/\.$/, "");
}

/**
 * The start-up probe every backend shares (LARIK-REFERENCE §19): runs `true` exactly the way
 * commands run (through the backend's `wrap`) and turns a failure into a reason and fix with the
 * backend's `diagnose(stderr, spawnErrorCode?)`. Never throws.
 */
export function probeByRunning(
  wrap: Sandbox["wrap"],
  projectRoot: string,
  env: Record<string, string>,
  diagnose: (stderr: string, spawnError?: string) => { reason: string; fix: string },
): Promise<ProbeResult> {
  let cmd: SandboxedCommand;
  try {
    cmd = wrap("true", { cwd: projectRoot, projectRoot, env });
  } catch (err) {
    return Promise.resolve({ ok: false, reason: `cannot prepare the sandbox: ${(err as Error).message}`, fix: "check that the temp folder is writable" });
  }
  return new Promise((done) => {
    let stderr = "";
    const child = spawn(cmd.file, cmd.args, { cwd: projectRoot, env: cmd.env, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    child.once("error", (err) => done({ ok: false, ...diagnose(stderr, (err as NodeJS.ErrnoException).code ?? err.message) }));
    child.once("close", (code, signal) => {
      if (code === 0) done({ ok: true });
      else done({ ok: false, ...diagnose(stderr || (signal ? `killed by ${signal}` : `exit status ${code}`)) });
    });
  });
}

/** Private temp folders of live sandboxes, removed at process exit if still there. */
const exitCleanup = new Set<string>();
let exitHooked = false;
/** The temp folders already searched for {@link removeStaleTmpDirs}, once per process each. */
const sweptTmp = new Set<string>();

/**
 * Removes, in the OS temp folder `tmp`, the sandbox temp folders (`larik-sandbox-<pid>-…`) of
 * processes that are gone: one killed outright (SIGKILL, a crash) never ran its exit cleanup.
 * Only folders of this user. Like the session locks, it takes a pid that does not run here to be
 * gone, so it assumes the processes sharing `tmp` share one pid namespace.
 */
function removeStaleTmpDirs(tmp: string): void {
  if (sweptTmp.has(tmp)) return;
  sweptTmp.add(tmp);
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = Number(/^larik-sandbox-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || pidAlive(pid)) continue;
    const dir = join(tmp, name);
    try {
      const st = lstatSync(dir);
      if (st.isDirectory() && (uid === undefined || st.uid === uid)) rmSync(dir, { recursive: true, force: true });
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}

/**
 * A sandbox backend's private `$TMPDIR` (literal `/tmp` stays read-only in every backend, §19):
 * created on first use under the OS temp folder as `larik-sandbox-<pid>-<random>`, and again if
 * something deleted it, given as its real path (macOS's `/var` is `/private/var`, which profiles
 * must name), removed by `dispose()` or, failing that, when the process exits. The first one a
 * process makes also removes those of processes killed before they could
 * ({@link removeStaleTmpDirs}).
 */
export class SandboxTmpDir {
  #dir: string | undefined;

  /** The folder's absolute real path, creating it when absent. @throws the mkdtemp error. */
  get(): string {
    if (!this.#dir || !existsSync(this.#dir)) {
      const tmp = tmpdir();
      removeStaleTmpDirs(tmp);
      this.#dir = realpathSync(mkdtempSync(join(tmp, `larik-sandbox-${process.pid}-`)));
      exitCleanup.add(this.#dir);
      if (!exitHooked) {
        exitHooked = true;
        process.once("exit", () => {
          for (const d of exitCleanup) {
            try {
              rmSync(d, { recursive: true, force: true });
            } catch {
              // best effort at exit
            }
          }
        });
      }
    }
    return this.#dir;
  }

  /** Removes the folder now (the next `get` makes a new one). */
  dispose(): void {
    if (!this.#dir) return;
    rmSync(this.#dir, { recursive: true, force: true });
    exitCleanup.delete(this.#dir);
    this.#dir = undefined;
  }
}
