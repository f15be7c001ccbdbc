/**
 * Expanding a skill or command body (LARIK-REFERENCE §13): `$ARGUMENTS` becomes the argument
 * string, `$1`…`$9` the space-split arguments (missing ones become empty), and when the body uses
 * neither, the arguments are appended. Inline `` !`cmd` `` is replaced by the command's output
 * only when the permission checker allows it without asking; otherwise it is left out with a
 * note. Arguments are substituted into the text and into inline commands, but argument text is
 * never itself scanned for inline commands, so `/name !`rm x`` runs nothing.
 */
import { capOutput, type Agent } from "../../kernel/index.js";

const PLACEHOLDER = /\$(ARGUMENTS|[1-9](?![0-9]))/g;
const INLINE = /!`([^`\n]+)`/g;
/** Inline command time limit (ms). */
const INLINE_TIMEOUT_MS = 30_000;
/** Inline command output kept (bytes of UTF-8). */
const INLINE_OUTPUT_BYTES = 10_000;

/** Runs one inline command and returns the text that replaces it. */
export type InlineRunner = (command: string) => Promise<string>;

function substitute(text: string, args: string, positional: string[]): string {
  return text.replace(PLACEHOLDER, (_, k: string) => (k === "ARGUMENTS" ? args : (positional[Number(k) - 1] ?? "")));
}

/**
 * Renders `template` with `args`. `runInline` decides and runs inline commands; without one,
 * every inline command is left out with a note.
 */
export async function renderTemplate(template: string, args: string, runInline?: InlineRunner): Promise<string> {
  const trimmed = args.trim();
  const positional = trimmed ? trimmed.split(/\s+/) : [];
  const usesArgs = new RegExp(PLACEHOLDER.source).test(template);
  let out = "";
  let last = 0;
  for (const m of template.matchAll(INLINE)) {
    out += substitute(template.slice(last, m.index), trimmed, positional);
    const command = substitute(m[1]!, trimmed, positional);
    out += runInline ? await runInline(command) : `[inline command \`${command}\` was not run]`;
    last = m.index + m[0].length;
  }
  out += substitute(template.slice(last), trimmed, positional);
  out = out.replace(/\s+$/, "");
  return !usesArgs && trimmed ? `${out}\n\nARGUMENTS: ${trimmed}` : out;
}

/**
 * An {@link InlineRunner} for `agent`: asks `agent.checker` about an unsandboxed `bash` call with
 * the command as the subject (safe list, allow rules, yolo) and runs it with `bash -c` in the
 * project's cwd only on a plain "allow" (30 s limit, output capped at 10 kB).
 */
export function inlineRunner(agent: Agent): InlineRunner {
  return async (command) => {
    // The command runs outside any sandbox, so it must be allowed as an unsandboxed call: a
    // "runs inside the sandbox" allow would not hold for it.
    const d = agent.checker.decide({ tool: "bash", kind: "bash", input: { command }, subject: command, unsandboxed: true });
    if (d.decision !== "allow") {
      const rule = d.suggested_rule ? ` (allow it with a permissions.allow rule such as "${d.suggested_rule}")` : "";
      return `[inline command \`${command}\` was not run: it needs approval: ${d.reason}${rule}]`;
    }
    const { execa } = await import("execa");
    const r = await execa("bash", ["-c", command], {
      cwd: agent.host.cwd,
      env: agent.host.env,
      extendEnv: false,
      stdin: "ignore",
      all: true,
      reject: false,
      timeout: INLINE_TIMEOUT_MS,
      forceKillAfterDelay: 1_000,
    });
    if (r.timedOut) return `[inline command \`${command}\` timed out after ${INLINE_TIMEOUT_MS / 1000} s]`;
    const text = capOutput(String(r.all ?? "").replace(/\s+$/, ""), INLINE_OUTPUT_BYTES).text;
    return r.exitCode === 0 ? text : `${text}${text ? "\n" : ""}[exit code ${r.exitCode ?? r.signal}]`;
  };
}
