/**
 * What `bash` does (the tool itself is bash.ts; this module loads at its first call): runs
 * `bash -c` in the working directory, reports the exit code, returns stdout+stderr cleaned of
 * ANSI colours and `\r` redraws and capped head+tail, keeps the exact output for `raw_output`,
 * kills the whole process group on timeout or interrupt, and does not hang on background
 * children that keep the output pipe open.
 */
import { existsSync } from "node:fs";
import { OUTPUT_CAP_BYTES, capOutput, toSafeText, type ToolContext, type ToolResult } from "../../kernel/index.js";
import { DEFAULT_TIMEOUT_S, type BashInput } from "./bash.js";
import type { BackgroundShells } from "./shells.js";
import { ToolInputError, errorResult, resolveWritePath } from "./paths.js";
import { EXIT_DRAIN_MS, OutputCapture, cleanOutput, sleep, startShell } from "./shell.js";

/** Output text shapes that usually mean the OS sandbox refused something. */
const SANDBOX_FAILURE = /Read-only file system|Operation not permitted|Could not resolve host|Temporary failure in name resolution|Network is unreachable/i;

/**
 * Why a command could not start, in words: spawn reports a missing working directory as
 * "spawn bash ENOENT", which reads as if bash were missing.
 */
function startFailure(err: Error, cwd: string): string {
  if ((err as NodeJS.ErrnoException).code === "ENOENT" && !existsSync(cwd)) {
    return `could not start the command: the working directory ${cwd} no longer exists, so no command can start there; recreate it (write a file into it) or ask the user`;
  }
  return `could not start the command: ${err.message}`;
}

/** The turn's reason for stopping ("interrupted by user", "interrupted: --timeout 5m reached"). */
function stopReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name !== "AbortError" ? reason.message : "interrupted";
}

/** Runs `bash` (see bash.ts); background runs, and what a command leaves running, are kept in `shells`. */
export async function runBash(args: BashInput, ctx: ToolContext, shells: BackgroundShells): Promise<ToolResult> {
  if (!args.command.trim()) return { content: "command is empty: give a shell command to run", is_error: true };
  if (ctx.signal.aborted) return { content: `[${stopReason(ctx.signal)}; the command was not started]`, is_error: true };
  try {
    for (const p of args.checkpoint_paths ?? []) {
      const target = await resolveWritePath(ctx, p);
      try {
        await ctx.checkpoint(target.abs);
      } catch (err) {
        throw new ToolInputError(`not run: could not checkpoint ${target.rel} for undo (${(err as Error).message})`);
      }
    }
  } catch (err) {
    return errorResult(err);
  }
  const sandbox = args.sandbox === false ? undefined : ctx.sandbox;
  let sidecarDir: string | undefined;
  try {
    sidecarDir = await ctx.sidecarDir();
  } catch {
    sidecarDir = undefined; // raw output is a convenience; the command still runs
  }
  const base = { command: args.command, cwd: ctx.cwd, projectRoot: ctx.projectRoot, sandbox, sidecarDir, toolUseId: ctx.toolUseId, marker: shells.marker() };

  if (args.run_in_background) {
    let shell;
    try {
      shell = shells.start(base);
    } catch (err) {
      return { content: startFailure(err as Error, ctx.cwd), is_error: true };
    }
    // No pid: spawn failed, and says so in an "error" event right after.
    if (shell.proc.pid === undefined) {
      await shell.proc.exited;
      return { content: startFailure(shell.proc.error ?? new Error("unknown error"), ctx.cwd), is_error: true };
    }
    return {
      content: `Started background shell ${shell.id} (pid ${shell.proc.pid}). Read its output with bash_output {"id": "${shell.id}"}; stop it with kill_bash.`,
    };
  }

  const capture = new OutputCapture();
  let proc;
  try {
    proc = startShell({ ...base, onData: (c) => capture.push(c) });
  } catch (err) {
    return { content: startFailure(err as Error, ctx.cwd), is_error: true };
  }
  const timeoutS = args.timeout ?? DEFAULT_TIMEOUT_S;
  let ending: "timeout" | "abort" | undefined;
  const stop = (why: "timeout" | "abort") => {
    if (ending) return;
    ending = why;
    void proc.kill();
  };
  const timer = setTimeout(() => stop("timeout"), timeoutS * 1000);
  const onAbort = () => stop("abort");
  if (ctx.signal.aborted) onAbort();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  let exit;
  try {
    exit = await proc.exited;
    if (ending) await proc.kill(); // wait until the group is gone
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
  }
  // bash is gone; a child it left in the background may still hold the pipe open.
  const drained = await Promise.race([proc.outputClosed.then(() => true), sleep(EXIT_DRAIN_MS).then(() => false)]);
  proc.stopReading();
  await proc.finishSidecar();
  // `server &`: runs on until Larik ends, then goes with the background shells.
  shells.adopt(proc);

  if (proc.error) return { content: startFailure(proc.error, ctx.cwd), is_error: true };

  const safe = toSafeText(capture.text());
  let out = cleanOutput(safe.text).replace(/\n+$/, "");
  const hint = sidecarDir ? `full output (${capture.total} bytes): raw_output tool_call_id="${ctx.toolUseId}"` : "";
  out = capOutput(out, OUTPUT_CAP_BYTES - 1_000, hint).text;
  const lines: string[] = [out || "(no output)"];
  if (!drained && !ending) {
    lines.push("[a background process started by the command still holds its output; later output is not captured — redirect it to a file or use run_in_background]");
  }
  if (sandbox && SANDBOX_FAILURE.test(out)) {
    lines.push("[this ran in the OS sandbox: writes outside the project and network access are blocked; if the command needs them, retry with sandbox: false]");
  }
  if (ending === "timeout") {
    lines.push(`[timed out after ${timeoutS} s; the command and its child processes were killed]`);
    return { content: lines.join("\n"), is_error: true };
  }
  if (ending === "abort") {
    lines.push(`[${stopReason(ctx.signal)}; the command and its child processes were killed]`);
    return { content: lines.join("\n"), is_error: true };
  }
  lines.push(exit.signal ? `[killed by ${exit.signal}]` : `[exit code ${exit.code}]`);
  return { content: lines.join("\n") };
}
