/**
 * Sandbox selection at start-up (LARIK-REFERENCE §19 "Startup probe"): with `sandbox.enabled`
 * (default true), probe the registered backends in order and use the first that starts; when
 * none does, bash runs unconfined (`none`: every command asks in `default` mode) and the user
 * gets one line saying why and how to fix it. `none` is not a plugin: it is the absence of a
 * backend (`sandbox` undefined).
 *
 * What the backend plugins share (the probe by running `true`, the private `$TMPDIR`) is in
 * kernel/kit/sandbox-backend.ts.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ProbeResult, Sandbox } from "./registries.js";

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
