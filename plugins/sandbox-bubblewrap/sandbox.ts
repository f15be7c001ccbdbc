/**
 * The bubblewrap backend (LARIK-REFERENCE §19, invariant 21). A command runs as
 * `bwrap <binds> -- bash -c <command>` with:
 *  - `/` read-only (`--ro-bind / /`), a fresh `/dev` and `/proc` (`/proc/sys` read-only);
 *  - writable: the project root, a private per-sandbox temp folder exported as
 *    `TMPDIR`/`TMP`/`TEMP` (literal `/tmp` stays read-only), build caches that exist (npm,
 *    `~/.cache`, Go module/build caches, Cargo registry and git), personal `sandbox.writable`;
 *  - protected paths re-bound read-only after the project bind (`protected.ts`), with
 *    placeholders for missing ones (`placeholders.ts`), which git inside does not see
 *    (`git-exclude.ts`);
 *  - `chatgpt-auth.json` and `mcp-auth/` under the config folder hidden;
 *  - `--unshare-net` (unless `sandbox.network` is true): the namespace has only its own
 *    loopback, so servers started inside are reachable from inside, the host's are not;
 *  - `--unshare-pid`, `--die-with-parent`, `--new-session` (no TIOCSTI into a terminal),
 *    `--cap-drop ALL` (when Larik runs as root bwrap would otherwise keep every capability);
 *  - `--info-fd 3`: the sandbox's init pid, which a kill must name (it is in bwrap's new
 *    session, out of reach of a kill of the runner's process group);
 *  - a keeper as the first process inside ({@link KEEPER}): the command's output on fd 5, its
 *    status on fd 4, and the sandbox kept while processes the command left running (`cmd &`) do;
 *  - credentials scrubbed from the environment (`env.ts`).
 */
import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { homedir, release } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { configDir, configuredKeyVars, dataDir, expandHome, probeByRunning, SandboxTmpDir, scrubEnv, type Sandbox, type SandboxedCommand } from "../../kernel/index.js";

import { acquire, isPlaceholder, releaseAll, releaseRuns, RUN_MARKER, useLedger } from "./placeholders.js";
import { excludeOverlay } from "./git-exclude.js";
import { diagnose } from "./probe.js";
import { protectedBinds } from "./protected.js";

export interface BubblewrapOptions {
  /** The project root the probe runs in (the host's). */
  projectRoot: string;
  /** Merged settings: `sandbox.{network, writable, env_passthrough}`, `providers.*.api_key_env`. */
  settings: Record<string, unknown>;
  /** The host's environment (home, caches, config folder). */
  env?: NodeJS.ProcessEnv;
  /** The bwrap executable (tests point it at a missing file). */
  bwrap?: string;
  /** Receives one-line warnings about ignored settings. */
  notice?(text: string): void;
}

/** A bubblewrap sandbox; `dispose()` removes its temp folder and unchanged placeholders. */
export interface BubblewrapSandbox extends Sandbox {
  dispose(): void;
  /** The private temp folder (created on first use). */
  tmpDir(): string;
}

/** Where bwrap writes `{"child-pid": N}` (`--info-fd`): the sandbox's init, outside the runner's group. */
const INFO_FD = 3;
/** Where the keeper writes the command's exit status. */
const STATUS_FD = 4;
/** The command's stdout and stderr: bwrap's own (held by its init for the sandbox's life) carry only its messages. */
const OUTPUT_FD = 5;

/**
 * The sandbox's first process inside (pid 2; bwrap's init is pid 1). bwrap ends the whole sandbox
 * as soon as its first process exits, which would take `server &` with it at the end of the call
 * while outside the sandbox it runs on until Larik exits. So the command runs as a child, writing
 * to the output pipe (without the status pipe); its status goes to the status pipe; then, with its
 * own copies of both closed, the keeper waits while any other process is left in the sandbox's
 * pid namespace (`kill -0 -1` reaches every process there but init and the caller), polling once
 * a second (stopping, rather than spinning, if `sleep` cannot run), and exits with the status.
 */
const KEEPER = `bash -c "$1" >&${OUTPUT_FD} 2>&${OUTPUT_FD} ${STATUS_FD}>&- ${OUTPUT_FD}>&-; s=$?; exec ${OUTPUT_FD}>&- >/dev/null 2>&1; echo $s >&${STATUS_FD}; exec ${STATUS_FD}>&-; while kill -0 -1 && sleep 1; do :; done; exit $s`;

/** Paths never made writable through `sandbox.writable` (invariant 21: literal /tmp). */
const NEVER_WRITABLE = new Set(["/", "/tmp", "/proc", "/dev", "/sys"]);

/** Build caches that may be made writable (bound only when they exist). */
function buildCaches(env: NodeJS.ProcessEnv, home: string): string[] {
  const gopath = (env.GOPATH || join(home, "go")).split(delimiter)[0]!;
  const cargo = env.CARGO_HOME || join(home, ".cargo");
  const list = [
    env.npm_config_cache || join(home, ".npm"),
    env.XDG_CACHE_HOME || join(home, ".cache"),
    env.GOMODCACHE || join(gopath, "pkg", "mod"),
    env.GOCACHE || join(home, ".cache", "go-build"),
    join(cargo, "registry"),
    join(cargo, "git"),
  ];
  return [...new Set(list.filter((p) => isAbsolute(p)))];
}

/** The system-prompt line (byte-stable: no paths that vary between runs, `$TMPDIR` by name). */
function summaryLine(network: boolean, extraWritable: boolean): string {
  const net = network
    ? "Network access is allowed."
    : "There is no network except loopback inside the sandbox: servers a command starts are reachable from it, services on the host's localhost are not.";
  return [
    `Bash commands run in a bubblewrap sandbox: the project folder, $TMPDIR and build caches (npm, ~/.cache, Go, Cargo)${extraWritable ? ", plus the folders in sandbox.writable," : ""} are writable; everything else is read-only, including /tmp (use $TMPDIR).`,
    ".git/config, .git/hooks, .larik/, .claude/ and .mcp.json are read-only.",
    net,
    "API keys and tokens are removed from the environment.",
  ].join(" ");
}

/**
 * Builds the bubblewrap sandbox. Nothing touches the disk until `wrap` or `probe` runs.
 * Bad `sandbox.writable` entries (relative, or `/`, `/tmp`) are skipped with a notice.
 */
export function createBubblewrapSandbox(opts: BubblewrapOptions): BubblewrapSandbox {
  const env = opts.env ?? process.env;
  const home = env.HOME || homedir();
  const sb = (opts.settings.sandbox ?? {}) as { network?: boolean; writable?: string[]; env_passthrough?: string[] };
  const network = sb.network === true;
  const writable: string[] = [];
  for (const w of sb.writable ?? []) {
    const p = expandHome(w, home);
    if (!isAbsolute(p)) opts.notice?.(`sandbox.writable "${w}" ignored: use an absolute path or ~/…`);
    else if (NEVER_WRITABLE.has(resolve(p))) opts.notice?.(`sandbox.writable "${w}" ignored: ${resolve(p)} is never writable in the sandbox`);
    else writable.push(resolve(p));
  }
  const keyVars = configuredKeyVars(opts.settings);
  const passthrough = sb.env_passthrough ?? [];
  const bwrap = opts.bwrap ?? "bwrap";
  const cfg = configDir(env);
  const tmp = new SandboxTmpDir();
  // not bound into any sandbox: the copies of .git/info that hide placeholders from git
  const gitInfo = new SandboxTmpDir();
  const myRuns = new Set<string>();

  const tmpDir = (): string => tmp.get();

  const wrap = (command: string, w: { cwd: string; projectRoot: string; env: Record<string, string> }): SandboxedCommand => {
    const t = tmpDir();
    const root = resolve(w.projectRoot);
    const runId = randomBytes(6).toString("hex");
    useLedger(join(dataDir(env), "sandbox"));
    const prot = protectedBinds(root, isPlaceholder);
    const bound = acquire(runId, prot.binds);
    myRuns.add(runId);
    const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind-try", "/proc/sys", "/proc/sys"];
    args.push("--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger");
    args.push("--bind", t, t);
    for (const c of buildCaches(env, home)) args.push("--bind-try", c, c);
    for (const p of writable) args.push("--bind-try", p, p);
    args.push("--bind", root, root);
    for (const p of prot.writable) args.push("--bind-try", p, p);
    const info = excludeOverlay(root, prot.binds, bound, prot.infoDir, () => gitInfo.get());
    for (const b of prot.binds) {
      if (!bound.has(b.path)) continue;
      if (info && b.path === prot.infoDir) args.push("--ro-bind", info, b.path);
      else if (b.how === "pin") args.push("--bind", b.path, b.path);
      else args.push(b.how === "ro-try" ? "--ro-bind-try" : "--ro-bind", b.path, b.path);
    }
    // binds need an existing target (bwrap would try to create it in the read-only /)
    const chatgpt = join(cfg, "chatgpt-auth.json");
    if (existsSync(chatgpt)) args.push("--ro-bind", "/dev/null", chatgpt);
    const mcpAuth = join(cfg, "mcp-auth");
    if (existsSync(mcpAuth)) args.push("--tmpfs", mcpAuth, "--remount-ro", mcpAuth);
    if (!network) args.push("--unshare-net");
    args.push("--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--info-fd", String(INFO_FD));
    args.push("--setenv", RUN_MARKER, runId, "--chdir", w.cwd, "--", "bash", "-c", KEEPER, "larik-sandbox", command);
    const out = scrubEnv(w.env, { passthrough, extra: keyVars });
    out.TMPDIR = t;
    out.TMP = t;
    out.TEMP = t;
    return { file: bwrap, args, env: out, infoFd: INFO_FD, statusFd: STATUS_FD, outputFd: OUTPUT_FD };
  };

  const probe = async (): Promise<{ ok: boolean; reason?: string; fix?: string }> => {
    if (process.platform !== "linux") return { ok: false, reason: "bubblewrap runs on Linux only", fix: "use the seatbelt sandbox on macOS" };
    // The probe's bwrap has exited when probeByRunning resolves, so its placeholders go at once:
    // left to the sweep they stayed a second or two, in which a `git status` or `/review` run
    // outside the sandbox saw an untracked `.mcp.json` the project does not have.
    const probeRuns: string[] = [];
    const probeWrap: typeof wrap = (command, w) => {
      const before = new Set(myRuns);
      const cmd = wrap(command, w);
      for (const id of myRuns) if (!before.has(id)) probeRuns.push(id);
      return cmd;
    };
    try {
      return await probeByRunning(probeWrap, opts.projectRoot, env as Record<string, string>, diagnose);
    } finally {
      releaseRuns(probeRuns);
      for (const id of probeRuns) myRuns.delete(id);
    }
  };

  // the probe's outcome depends on the bwrap binary, the kernel and who runs it
  const probeKey = (): string | undefined => {
    const file = bwrap.includes("/") ? bwrap : findOnPath(bwrap, env.PATH);
    if (!file) return undefined;
    try {
      return `${file}:${statSync(file).mtimeMs}:${release()}:${process.getuid?.() ?? ""}`;
    } catch {
      return undefined;
    }
  };

  return {
    name: "bubblewrap",
    summary: summaryLine(network, writable.length > 0),
    probe,
    probeKey,
    wrap,
    tmpDir,
    dispose() {
      releaseRuns(myRuns);
      myRuns.clear();
      tmp.dispose();
      gitInfo.dispose();
    },
  };
}

// Run folders outlive nothing: sandboxed processes die with Larik (`--die-with-parent`).
process.once("exit", () => releaseAll());

/** The first executable named `name` in `PATH`, or undefined. */
function findOnPath(name: string, path = ""): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const file = `${dir}/${name}`;
    if (!existsSync(file)) continue; // most PATH folders lack it; a check is cheaper than a thrown error
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}
