/**
 * Background shells (`bash` with `run_in_background`, read with `bash_output`, stopped with
 * `kill_bash`; the tools are bash.ts and background.ts, and this module loads at the first call
 * of one), modelled on Claude Code's background shells: each gets an id `bg-N`, its output
 * accumulates until read, and every shell still running is killed when the plugin is disposed
 * or the process exits.
 */
import { StringDecoder } from "node:string_decoder";
import { OUTPUT_CAP_BYTES, capOutput, pidsWithEnv, toSafeText, type ToolResult } from "../../kernel/index.js";
import { KILL_GRACE_MS, RUN_MARKER, cleanOutput, killPid, newRunMarker, startShell, type ShellOptions, type ShellProcess } from "./shell.js";

/** Unread bytes kept per shell; older unread output is dropped (the sidecar keeps it all). */
const MAX_UNREAD_BYTES = 1024 * 1024;

/** One background shell. */
export interface BackgroundShell {
  id: string;
  command: string;
  toolUseId: string;
  startedAt: number;
  proc: ShellProcess;
  /** `running` until bash exits. */
  status: "running" | "exited" | "killed" | "failed";
  code: number | null;
  signal: NodeJS.Signals | null;
  unread: Buffer[];
  unreadBytes: number;
  /** Unread bytes dropped since the last read. */
  dropped: number;
  /** Holds a character split across two reads until its last byte arrives. */
  decoder: StringDecoder;
}

/** How often commands that left processes running are checked for having ended (ms). */
const LEFTOVER_CHECK_MS = 5_000;

/**
 * The background shells of one plugin instance, and the commands (foreground `bash` calls) whose
 * bash exited while processes they started keep running (`server &`). Those run on until
 * `killAll` (the plugin's dispose: `larik -p` ending, the TUI quitting) or the process exits, as
 * inside the sandbox, where they live in the command's sandbox.
 */
export class BackgroundShells {
  readonly #shells = new Map<string, BackgroundShell>();
  readonly #leftovers = new Set<ShellProcess>();
  #seq = 0;
  #exitHook?: () => void;
  #leftoverTimer?: NodeJS.Timeout;
  /**
   * Starts the {@link RUN_MARKER} of every command run through these shells; made at the first
   * command, not at start-up, since its random part loads node:crypto (milliseconds of every
   * `larik -p` start that runs no command).
   */
  #markerPrefix?: string;

  /** A {@link RUN_MARKER} value for one command (`ShellOptions.marker`), found again by `killAll`. */
  marker(): string {
    this.#watchExit(); // what such a command leaves outside its group is found only by marker
    this.#markerPrefix ??= `${newRunMarker()}-`;
    return newRunMarker(this.#markerPrefix);
  }

  /** Processes of these shells' commands that left their process group (`setsid`), Linux only. */
  #strays(): number[] {
    return this.#markerPrefix === undefined ? [] : pidsWithEnv(RUN_MARKER, this.#markerPrefix, true);
  }

  /** Starts a command in the background and returns its record at once. */
  start(opts: Omit<ShellOptions, "onData">): BackgroundShell {
    const id = `bg-${++this.#seq}`;
    const shell: BackgroundShell = {
      id,
      command: opts.command,
      toolUseId: opts.toolUseId,
      startedAt: Date.now(),
      proc: undefined as unknown as ShellProcess,
      status: "running",
      code: null,
      signal: null,
      unread: [],
      unreadBytes: 0,
      dropped: 0,
      decoder: new StringDecoder("utf8"),
    };
    shell.proc = startShell({
      marker: this.marker(),
      ...opts,
      onData: (chunk) => {
        shell.unread.push(chunk);
        shell.unreadBytes += chunk.length;
        while (shell.unreadBytes > MAX_UNREAD_BYTES && shell.unread.length > 1) {
          const old = shell.unread.shift()!;
          shell.unreadBytes -= old.length;
          shell.dropped += old.length;
        }
      },
    });
    void shell.proc.exited.then(({ code, signal }) => {
      shell.code = code;
      shell.signal = signal;
      shell.status = shell.proc.error ? "failed" : shell.proc.killed ? "killed" : "exited";
    });
    // The output is read until every writer is gone, then the sidecar is closed.
    void shell.proc.closed.then(() => shell.proc.finishSidecar());
    this.#shells.set(id, shell);
    this.#watchExit();
    return shell;
  }

  get(id: string): BackgroundShell | undefined {
    return this.#shells.get(id);
  }

  ids(): string[] {
    return [...this.#shells.keys()];
  }

  /** Takes the output not yet read. */
  takeUnread(shell: BackgroundShell): { text: string; dropped: number } {
    let text = shell.decoder.write(Buffer.concat(shell.unread));
    if (shell.status !== "running") text += shell.decoder.end();
    const dropped = shell.dropped;
    shell.unread = [];
    shell.unreadBytes = 0;
    shell.dropped = 0;
    return { text, dropped };
  }

  /**
   * Keeps a finished command whose processes may still run (`proc.lingering()`), to be killed
   * with the background shells. Dropped once they have all ended (checked every
   * {@link LEFTOVER_CHECK_MS}), so a process group id the system reuses later is not killed.
   */
  adopt(proc: ShellProcess): void {
    if (!proc.lingering()) return;
    this.#leftovers.add(proc);
    this.#watchExit();
    this.#leftoverTimer ??= setInterval(() => this.#prune(), LEFTOVER_CHECK_MS);
    this.#leftoverTimer.unref();
  }

  /** How many adopted commands still have processes running. */
  leftoverCount(): number {
    this.#prune();
    return this.#leftovers.size;
  }

  #prune(): void {
    for (const p of this.#leftovers) if (!p.lingering()) this.#leftovers.delete(p);
    if (!this.#leftovers.size && this.#leftoverTimer) {
      clearInterval(this.#leftoverTimer);
      this.#leftoverTimer = undefined;
    }
  }

  /**
   * Kills every shell still running, and what finished shells and adopted commands left running
   * (SIGTERM, SIGKILL after the grace), and stops reading them.
   */
  async killAll(): Promise<void> {
    this.#prune();
    const leftovers = [...this.#leftovers];
    this.#leftovers.clear();
    this.#prune();
    await Promise.all([
      ...[...this.#shells.values()].map(async (s) => {
        if (s.status === "running" || s.proc.lingering()) await s.proc.kill();
        s.proc.stopReading();
        await s.proc.finishSidecar();
      }),
      ...leftovers.map((p) => p.kill()),
    ]);
    // what left its group (`setsid server &`): SIGTERM, SIGKILL after the grace
    let strays = this.#strays();
    if (strays.length) {
      for (const pid of strays) killPid(pid, "SIGTERM");
      for (const end = Date.now() + KILL_GRACE_MS; strays.length && Date.now() < end; strays = this.#strays()) await new Promise((r) => setTimeout(r, 100));
      for (const pid of strays) killPid(pid, "SIGKILL");
    }
    if (this.#exitHook) process.off("exit", this.#exitHook);
    this.#exitHook = undefined;
  }

  /** Detached groups outlive Larik unless killed; a synchronous exit hook kills them. */
  #watchExit(): void {
    if (this.#exitHook) return;
    this.#exitHook = () => {
      for (const s of this.#shells.values()) if (s.status === "running" || s.proc.lingering()) s.proc.killNowSync();
      for (const p of this.#leftovers) if (p.lingering()) p.killNowSync();
      for (const pid of this.#strays()) killPid(pid, "SIGKILL");
    };
    process.on("exit", this.#exitHook);
  }
}

/** One line describing a shell's state. */
function statusLine(s: BackgroundShell): string {
  const secs = Math.round((Date.now() - s.startedAt) / 1000);
  switch (s.status) {
    case "running":
      return `status: running (pid ${s.proc.pid}, ${secs} s)`;
    case "exited":
      return s.signal ? `status: exited (killed by ${s.signal})` : `status: exited (exit code ${s.code})`;
    case "killed":
      return "status: killed";
    case "failed":
      return `status: failed to start (${s.proc.error?.message ?? "unknown error"})`;
  }
}

function unknownShell(shells: BackgroundShells, id: string): ToolResult {
  const ids = shells.ids();
  return {
    content: `no background shell ${id}${ids.length ? `; known: ${ids.join(", ")}` : "; none was started"}`,
    is_error: true,
  };
}

/** Runs `bash_output` (see background.ts): the shell's new output and whether it still runs. */
export async function runBashOutput(shells: BackgroundShells, id: string): Promise<ToolResult> {
  const s = shells.get(id);
  if (!s) return unknownShell(shells, id);
  // Let output written right before exit arrive before reporting "exited".
  if (s.status !== "running") await Promise.race([s.proc.closed, new Promise((r) => setTimeout(r, 100))]);
  const { text, dropped } = shells.takeUnread(s);
  let body = cleanOutput(toSafeText(text).text);
  const hint = `full output: raw_output tool_call_id="${s.toolUseId}"`;
  body = capOutput(body, OUTPUT_CAP_BYTES - 1_000, hint).text;
  const parts = [statusLine(s)];
  if (dropped) parts.push(`[${dropped} older unread bytes dropped; ${hint}]`);
  parts.push(body ? body : "(no new output)");
  return { content: parts.join("\n") };
}

/** Runs `kill_bash` (see background.ts). */
export async function runKillBash(shells: BackgroundShells, id: string): Promise<ToolResult> {
  const s = shells.get(id);
  if (!s) return unknownShell(shells, id);
  if (s.status !== "running") return { content: `${id} is not running (${statusLine(s)})` };
  await s.proc.kill();
  s.status = "killed";
  return { content: `${id} killed` };
}
