/**
 * The Seatbelt backend (LARIK-REFERENCE §19, invariant 21). A command runs as
 * `/usr/bin/sandbox-exec -p <profile> bash -c <command>` (`profile.ts` builds the profile):
 *  - read everything except `chatgpt-auth.json` and `mcp-auth/` in the config folder;
 *  - write the project root, a private per-sandbox temp folder exported as `TMPDIR`/`TMP`/`TEMP`
 *    (literal `/tmp` never), build caches (npm, `~/.cache`, `~/Library/Caches`, the per-user
 *    cache folder, Go, Cargo) and personal `sandbox.writable`;
 *  - protected paths (§4) read-only even inside the project, `.git` itself cannot be moved;
 *  - loopback network only unless `sandbox.network`; LaunchServices and Apple Events blocked;
 *  - credentials scrubbed from the environment (`env.ts`).
 * Seatbelt denies by path, so missing protected paths need no placeholders (unlike Linux).
 */
import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir, release, tmpdir } from "node:os";
import { basename, delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { configDir, configuredKeyVars, expandHome, probeByRunning, SandboxTmpDir, scrubEnv, type Sandbox, type SandboxedCommand } from "../../kernel/index.js";

import { buildProfile, NEVER_WRITABLE } from "./profile.js";

/** Where macOS ships sandbox-exec; an absolute path so a `PATH` entry cannot replace it. */
export const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

export interface SeatbeltOptions {
  /** The project root the probe runs in (the host's). */
  projectRoot: string;
  /** Merged settings: `sandbox.{network, writable, env_passthrough}`, `providers.*.api_key_env`. */
  settings: Record<string, unknown>;
  /** The host's environment (home, caches, config folder). */
  env?: NodeJS.ProcessEnv;
  /** The sandbox-exec executable (tests). */
  sandboxExec?: string;
  /** The platform (tests); defaults to `process.platform`. */
  platform?: NodeJS.Platform;
  /** Receives one-line warnings about ignored settings. */
  notice?(text: string): void;
}

/** A Seatbelt sandbox; `dispose()` removes its temp folder. */
export interface SeatbeltSandbox extends Sandbox {
  dispose(): void;
  /** The private temp folder (created on first use). */
  tmpDir(): string;
}

/** Entries inside a git directory that could redirect git (§4 "Protected paths"). */
const GIT_ENTRIES = ["hooks", "config", "config.worktree", "commondir", "info", "modules", "worktrees"];
/** Protected entries at the project root besides `.git`. */
const PROJECT_ENTRIES = [".larik", ".claude", ".mcp.json"];

/** `p` with its longest existing prefix resolved: Seatbelt matches real paths (`/var` → `/private/var`). */
function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = dirname(p);
    return parent === p ? p : join(realPath(parent), basename(p));
  }
}

/** Build caches made writable (LARIK-REFERENCE §19), unresolved. */
function buildCaches(env: NodeJS.ProcessEnv, home: string): string[] {
  const gopath = (env.GOPATH || join(home, "go")).split(delimiter)[0]!;
  const cargo = env.CARGO_HOME || join(home, ".cargo");
  const list = [
    env.npm_config_cache || join(home, ".npm"),
    env.XDG_CACHE_HOME || join(home, ".cache"),
    join(home, "Library", "Caches"),
    env.GOMODCACHE || join(gopath, "pkg", "mod"),
    ...(env.GOCACHE ? [env.GOCACHE] : []), // default GOCACHE is under ~/Library/Caches
    join(cargo, "registry"),
    join(cargo, "git"),
  ];
  return [...new Set(list.filter((p) => isAbsolute(p)))];
}

/**
 * Protected paths of `root` (resolved): `deny` stay read-only with all beneath them, `pin`
 * cannot be moved or replaced, `writable` are a worktree's git folders outside the project.
 */
export function protectedPaths(root: string): { deny: string[]; pin: string[]; writable: string[] } {
  const git = join(root, ".git");
  const deny = PROJECT_ENTRIES.map((e) => join(root, e));
  const pin: string[] = [];
  const writable: string[] = [];
  let st;
  try {
    st = lstatSync(git);
  } catch {
    // no repository: nobody may create one that redirects git
    return { deny: [git, ...deny], pin, writable };
  }
  if (st.isDirectory()) {
    pin.push(git);
    deny.push(...GIT_ENTRIES.map((e) => join(git, e)));
    return { deny, pin, writable };
  }
  deny.push(git);
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(git, "utf8"));
    if (!m) return { deny, pin, writable };
    const target = realPath(resolve(root, m[1]!));
    let common = target;
    try {
      common = realPath(resolve(target, readFileSync(join(target, "commondir"), "utf8").trim()));
    } catch {
      // no commondir: the git folder is its own common folder
    }
    for (const dir of new Set([target, common])) {
      writable.push(dir);
      // the worktree's own folder lives in worktrees/, so that one stays writable
      deny.push(...GIT_ENTRIES.filter((e) => e !== "worktrees").map((e) => join(dir, e)));
    }
  } catch {
    // unreadable .git file: only the file itself is protected
  }
  return { deny, pin, writable };
}

/** The system-prompt line (byte-stable: `$TMPDIR` by name, no paths). */
function summaryLine(network: boolean, extraWritable: boolean): string {
  return [
    `Bash commands run in a macOS Seatbelt sandbox: the project folder, $TMPDIR and build caches (npm, ~/.cache, ~/Library/Caches, Go, Cargo)${extraWritable ? ", plus the folders in sandbox.writable," : ""} are writable; everything else is read-only, including /tmp (use $TMPDIR).`,
    ".git/config, .git/hooks, .larik/, .claude/ and .mcp.json are read-only.",
    network ? "Network access is allowed." : "Only loopback (localhost) network is allowed.",
    "Opening apps and sending Apple Events are blocked. API keys and tokens are removed from the environment.",
  ].join(" ");
}

/** Turns a failed probe's stderr into a reason and a fix (§19: nested Seatbelt). */
function diagnose(stderr: string, spawnError?: string): { reason: string; fix: string } {
  if (spawnError === "ENOENT") return { reason: `${SANDBOX_EXEC} is missing`, fix: "sandbox-exec ships with macOS; check the system install, or set sandbox.enabled to false" };
  if (spawnError) return { reason: `sandbox-exec could not start (${spawnError})`, fix: "check that /usr/bin/sandbox-exec is executable" };
  const first = stderr.trim().split("\n").find((l) => l.trim()) ?? "sandbox-exec failed without a message";
  if (/sandbox_apply|Operation not permitted/i.test(first)) {
    return { reason: `sandbox-exec failed: ${first}`, fix: "Larik already runs inside a sandbox and Seatbelt cannot nest: run Larik outside it, or set sandbox.enabled to false" };
  }
  return { reason: `sandbox-exec failed: ${first}`, fix: "report the profile error, or set sandbox.enabled to false" };
}

/**
 * Builds the Seatbelt sandbox. Nothing touches the disk until `wrap` or `probe` runs. Bad
 * `sandbox.writable` entries (relative, or `/`, `/tmp`) are skipped with a notice.
 */
export function createSeatbeltSandbox(opts: SeatbeltOptions): SeatbeltSandbox {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const home = env.HOME || homedir();
  const sb = (opts.settings.sandbox ?? {}) as { network?: boolean; writable?: string[]; env_passthrough?: string[] };
  const network = sb.network === true;
  const writable: string[] = [];
  for (const w of sb.writable ?? []) {
    const p = expandHome(w, home);
    if (!isAbsolute(p)) opts.notice?.(`sandbox.writable "${w}" ignored: use an absolute path or ~/…`);
    else if (NEVER_WRITABLE.has(realPath(resolve(p)))) opts.notice?.(`sandbox.writable "${w}" ignored: ${resolve(p)} is never writable in the sandbox`);
    else writable.push(resolve(p));
  }
  const keyVars = configuredKeyVars(opts.settings);
  const passthrough = sb.env_passthrough ?? [];
  const exe = opts.sandboxExec ?? SANDBOX_EXEC;
  const cfg = configDir(env);
  const tmp = new SandboxTmpDir();
  const tmpDir = (): string => tmp.get();

  const wrap = (command: string, w: { cwd: string; projectRoot: string; env: Record<string, string> }): SandboxedCommand => {
    const t = tmpDir();
    const root = realPath(resolve(w.projectRoot));
    const prot = protectedPaths(root);
    const caches = buildCaches(env, home).map(realPath);
    // the per-user cache folder (clang, swift) sits next to the per-user temp folder …/T
    const userTmp = realPath(tmpdir());
    if (/\/T\/?$/.test(userTmp)) caches.push(userTmp.replace(/T\/?$/, "C"));
    const profile = buildProfile({
      projectRoot: root,
      tmpDir: t,
      writable: [...writable.map(realPath), ...prot.writable],
      caches,
      protectedPaths: prot.deny,
      pinnedPaths: prot.pin,
      hiddenPaths: [join(cfg, "chatgpt-auth.json"), join(cfg, "mcp-auth")].map(realPath),
      network,
    });
    const out = scrubEnv(w.env, { passthrough, extra: keyVars });
    out.TMPDIR = t;
    out.TMP = t;
    out.TEMP = t;
    return { file: exe, args: ["-p", profile, "bash", "-c", command], env: out };
  };

  const probe = async (): Promise<{ ok: boolean; reason?: string; fix?: string }> => {
    if (platform !== "darwin") return { ok: false, reason: "seatbelt runs on macOS only", fix: "use the bubblewrap sandbox on Linux" };
    return probeByRunning(wrap, opts.projectRoot, env as Record<string, string>, diagnose);
  };

  // the probe's outcome depends on the sandbox-exec binary and the OS release
  const probeKey = (): string | undefined => {
    try {
      return `${exe}:${statSync(exe).mtimeMs}:${release()}`;
    } catch {
      return undefined;
    }
  };

  return {
    name: "seatbelt",
    summary: summaryLine(network, writable.length > 0),
    probe,
    probeKey,
    wrap,
    tmpDir,
    dispose() {
      tmp.dispose();
    },
  };
}
