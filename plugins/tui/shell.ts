/**
 * `!cmd` in the composer (LARIK-REFERENCE §24): runs a shell command the user typed, without
 * asking (the user is the author), except that bash deny rules still apply. Output is shown in
 * the transcript and sent with the next prompt as a `<system-note>` (§2 notes mechanism).
 * esc or ctrl+c stops it (the whole process group).
 */
import { spawn } from "node:child_process";
import { capOutput, toSafeText, type Agent } from "../../kernel/index.js";

/** What a `!cmd` run produced. `code` is null when killed by a signal. */
export interface ShellRun {
  command: string;
  output: string;
  code: number | null;
  /** Set when the command was refused (deny rule) and never ran. */
  refused?: string;
}

/**
 * Runs `command` with `bash -c` in the agent's working directory. Resolves when it exits or is
 * aborted through `signal`; never rejects (spawn failures become output).
 */
export function runShell(agent: Agent, command: string, signal?: AbortSignal): Promise<ShellRun> {
  const decision = agent.checker.decide({ tool: "bash", kind: "bash", input: { command }, subject: command });
  if (decision.decision === "deny" && decision.by !== "plan") {
    return Promise.resolve({ command, output: "", code: null, refused: decision.reason });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let child;
    try {
      child = spawn("bash", ["-c", command], { cwd: agent.host.cwd, env: agent.host.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    } catch (err) {
      resolve({ command, output: String(err), code: 127 });
      return;
    }
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    };
    signal?.addEventListener("abort", kill, { once: true });
    child.stdout?.on("data", (d: Buffer) => chunks.push(d));
    child.stderr?.on("data", (d: Buffer) => chunks.push(d));
    child.on("error", (err) => chunks.push(Buffer.from(String(err))));
    child.on("close", (code) => {
      signal?.removeEventListener("abort", kill);
      const text = capOutput(toSafeText(Buffer.concat(chunks)).text).text;
      resolve({ command, output: text.replace(/\s+$/, ""), code });
    });
  });
}

/** The note the model receives with the next prompt. */
export function shellNote(run: ShellRun): string {
  const status = run.code === null ? "stopped" : `exit code ${run.code}`;
  return `The user ran a shell command (${status}):\n<bash-input>${run.command}</bash-input>\n<bash-output>${run.output}</bash-output>`;
}
