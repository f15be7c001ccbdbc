/**
 * What every sandbox backend plugin shares, since plugins share code only through the kernel:
 * the start-up probe by running `true` ({@link probeByRunning}) and the private `$TMPDIR`
 * ({@link SandboxTmpDir}). Choosing the backend at start-up is the kernel's (kernel/sandbox.ts).
 */
import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { existsSync, lstatSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pidAlive } from "./pid.js";
import type { ProbeResult, Sandbox, SandboxedCommand } from "../registries.js";

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
    const child = spawn(cmd.file, cmd.args, { cwd: projectRoot, env: cmd.env, stdio: sandboxStdio(cmd, ["ignore", "ignore", "pipe"]) });
    // nothing reads them: drained, so a wrapper that writes never blocks
    for (const fd of [cmd.infoFd, cmd.statusFd, cmd.outputFd]) if (fd !== undefined) (child.stdio[fd] as Readable | null)?.resume();
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    child.once("error", (err) => done({ ok: false, ...diagnose(stderr, (err as NodeJS.ErrnoException).code ?? err.message) }));
    child.once("close", (code, signal) => {
      if (code === 0) done({ ok: true });
      else done({ ok: false, ...diagnose(stderr || (signal ? `killed by ${signal}` : `exit status ${code}`)) });
    });
  });
}

type Stdio = "ignore" | "pipe" | "inherit";

/**
 * The `stdio` option for spawning `cmd`: `base` (stdin, stdout, stderr), then a pipe at
 * `cmd.infoFd`, `cmd.statusFd` and `cmd.outputFd` when set, the descriptors between them closed
 * (`"ignore"`). The runner's ends are `child.stdio[fd]`.
 */
export function sandboxStdio(cmd: SandboxedCommand, base: [Stdio, Stdio, Stdio]): Stdio[] {
  const stdio: Stdio[] = [...base];
  for (const fd of [cmd.infoFd, cmd.statusFd, cmd.outputFd]) {
    if (fd === undefined) continue;
    while (stdio.length <= fd) stdio.push("ignore");
    stdio[fd] = "pipe";
  }
  return stdio;
}

/** Reads `stream` until `parse` finds a value in what arrived, or the stream ends (undefined). */
function readUntil<T>(stream: Readable | null | undefined, parse: (text: string) => T | undefined): Promise<T | undefined> {
  if (!stream) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let text = "";
    const done = (v: T | undefined) => {
      stream.off("data", onData);
      stream.resume(); // the rest, if any, is not wanted but must not block the writer
      resolve(v);
    };
    const onData = (c: Buffer) => {
      text += c.toString("utf8");
      const v = parse(text);
      if (v !== undefined) done(v);
    };
    stream.on("data", onData);
    stream.once("end", () => done(parse(text)));
    stream.once("close", () => done(parse(text)));
    stream.once("error", () => done(undefined));
  });
}

/**
 * The sandbox's first process, from the wrapper's info pipe (`SandboxedCommand.infoFd`,
 * bubblewrap's `--info-fd` JSON `{"child-pid": N, …}`): resolves as soon as the pid has
 * arrived, or with undefined when the pipe closes without one (the wrapper failed, or was killed,
 * before it started the sandbox). Never rejects.
 */
export function readChildPid(stream: Readable | null | undefined): Promise<number | undefined> {
  return readUntil(stream, (text) => {
    const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
    return m ? Number(m[1]) : undefined;
  });
}

/**
 * The command's exit status from the wrapper's status pipe (`SandboxedCommand.statusFd`): one
 * decimal line (a shell's status, 128+n for a command killed by signal n). Resolves with
 * undefined when the pipe closes without a whole line (the wrapper died first). Never rejects.
 */
export function readExitStatus(stream: Readable | null | undefined): Promise<number | undefined> {
  return readUntil(stream, (text) => {
    const m = /^(\d+)\n/.exec(text);
    return m ? Number(m[1]) : undefined;
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
