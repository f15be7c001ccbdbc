/**
 * Opening the TUI's session, apart from the UI: nothing here imports Ink, so index.ts opens the
 * session while Ink, React and the app load (about half a second, over a second on a slow
 * machine), and a bad `--resume` id or a missing key is said at once instead of after that.
 */
import { agentOptionsFromArgs, defaultSpec, type Agent, type CliArgs, type Host } from "../../kernel/index.js";
import { PromptHistory } from "./history.js";

/** True when nothing names a model: no flag, no session to continue, no setting, no key. */
export function needsSetup(host: Host, args: CliArgs): boolean {
  const o = agentOptionsFromArgs(args);
  return !o.model && !o.resume && !o.continue && !defaultSpec(host.settings, host.env);
}

/** What the TUI opens before its first frame: the agent and this project's prompt history. */
export type OpenedSession = [Agent, PromptHistory];

/**
 * Opens the agent (new, `-c`, `--resume`, `--fork`) with `model` when first-run setup chose one,
 * and loads the prompt history beside it.
 * @throws ConfigError as `Host.openAgent` does (an unknown session id, a missing key, ...).
 */
export function openSession(host: Host, args: CliArgs, model?: string): Promise<OpenedSession> {
  const o = agentOptionsFromArgs(args);
  if (model) o.model = model;
  return Promise.all([host.openAgent(o), PromptHistory.load(host.cwd, host.env)]);
}

/**
 * Shows the host's notices on stderr before a failure to open is reported: the controller that
 * would show them never starts, and a notice is often the cause (a provider plugin that failed
 * in setup, then "unknown provider").
 */
export function showNoticesBeforeFailure(host: Host, stderr: NodeJS.WritableStream): void {
  for (const n of host.notices) stderr.write(`! ${n}\n`);
}
