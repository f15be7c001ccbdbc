/**
 * The command-line options every front end shares (LARIK-REFERENCE §1) and their mapping to
 * agent options, so the TUI, headless mode and the server read `--model`, `--mode`, `-c` ...
 * the same way.
 */
import type { AgentOptions } from "../agent.js";
import { ConfigError } from "./one-line.js";
import { PERMISSION_MODES, type PermissionMode } from "../permission.js";
import type { CliArgs, CliOption } from "../registries.js";
import { EFFORTS, type Effort } from "../types.js";

/** Options understood by every run of `larik`. */
export const COMMON_OPTIONS: Record<string, CliOption> = {
  model: { type: "string", description: "model to use: provider/model, a bare model id or a role", value: "<spec>" },
  mode: { type: "string", description: `permission mode: ${PERMISSION_MODES.join(", ")}`, value: "<mode>", check: (mode) => void agentOptionsFromArgs({ values: { mode }, positionals: [] }) },
  effort: { type: "string", description: `reasoning effort: ${EFFORTS.join(", ")}`, value: "<level>", check: (effort) => void agentOptionsFromArgs({ values: { effort }, positionals: [] }) },
  continue: { type: "boolean", short: "c", description: "continue the newest session in this directory" },
  resume: { type: "string", description: "resume a session by id or unique id prefix", value: "<id>" },
  fork: { type: "boolean", description: "with -c or --resume: branch into a new session instead of appending" },
  sessions: { type: "boolean", description: "list the sessions of this directory and exit (--output json: one object per line)" },
  version: { type: "boolean", short: "v", description: "print the version and the loaded plugins" },
  help: { type: "boolean", short: "h", description: "show this help" },
};

/**
 * Validates the shared options and turns them into agent options.
 * @throws ConfigError naming the flag and the accepted values.
 */
export function agentOptionsFromArgs(args: CliArgs): Omit<AgentOptions, "host"> {
  const v = args.values;
  const out: Omit<AgentOptions, "host"> = {};
  if (typeof v.model === "string") {
    if (!v.model.trim()) throw new ConfigError("--model needs a value such as anthropic/claude-sonnet-4-5");
    out.model = v.model;
  }
  if (typeof v.mode === "string") {
    if (!PERMISSION_MODES.includes(v.mode as PermissionMode)) {
      throw new ConfigError(`--mode ${v.mode}: use one of ${PERMISSION_MODES.join(", ")}`);
    }
    out.mode = v.mode as PermissionMode;
  }
  if (typeof v.effort === "string") {
    if (!EFFORTS.includes(v.effort as Effort)) throw new ConfigError(`--effort ${v.effort}: use one of ${EFFORTS.join(", ")}`);
    out.effort = v.effort as Effort;
  }
  if (typeof v.resume === "string") {
    // `--resume "$ID"` with an unset variable: starting a new session instead would lose the
    // conversation the script meant to continue, with exit 0
    if (!v.resume.trim()) throw new ConfigError("--resume needs a session id or a unique prefix of one: larik --sessions lists them (or use -c for the newest)");
    out.resume = v.resume;
  }
  if (v.continue === true) {
    // each picks the session; silently preferring one would resume what the user did not mean
    if (out.resume !== undefined) throw new ConfigError("-c and --resume both pick the session: use -c for the newest, or --resume <id> for that one");
    out.continue = true;
  }
  if (v.fork === true) {
    if (!out.resume && !out.continue) throw new ConfigError("--fork needs a session to branch from: add -c or --resume <id>");
    out.fork = true;
  }
  return out;
}

/**
 * Parses a duration into milliseconds: a bare number of seconds (`90`, `1.5`), or numbers with
 * units `h`, `m`, `s`, `ms` written together (`30s`, `5m`, `1h30m`, `500ms`); surrounding spaces
 * are ignored. `0` means none; any other value lasts at least 1 ms, so a tiny one is not taken
 * for "none".
 * @param flag the flag the value came with, named in the error.
 * @throws ConfigError for anything else (a sign, a space inside, `5min`, `1d`, an empty value),
 *   one line that names the flag and the accepted forms.
 */
export function parseDuration(text: string, flag = "--timeout"): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.ceil(Number(t) * 1000);
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let ms = 0;
  let matched = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    const n = Number(m[1]);
    ms += m[2] === "h" ? n * 3_600_000 : m[2] === "m" ? n * 60_000 : m[2] === "s" ? n * 1000 : n;
    matched = re.lastIndex;
  }
  // an empty value (`--timeout=`) is shown as "", not as nothing between two spaces
  const shown = t ? text : JSON.stringify(text);
  if (!t || matched !== t.length) throw new ConfigError(`${flag} ${shown}: expected a duration such as 90 (seconds), 90s, 5m, 1h30m or 500ms (0 for none)`);
  return Math.ceil(ms);
}
