/**
 * `/model [provider/model]`, `/mode [mode]` and `/effort [level|default]` (LARIK-REFERENCE §29):
 * show the current value, or switch it for this agent and save it as the personal default
 * (`model`, `mode`, `effort` in `~/.config/larik/config.json`, §26).
 */
import {
  ConfigError,
  EFFORTS,
  errorText,
  PERMISSION_MODES,
  updatePersonalSettings,
  type Command,
  type CommandContext,
  type Effort,
  type Host,
  type PermissionMode,
} from "../../kernel/index.js";
import { COMMAND_META } from "./meta.js";
import { kTokens, words } from "./format.js";

/** Whether a provider can be used here: it needs no key, or its key is configured or in the environment. */
function keyed(host: Host, name: string, keyEnv: string[] | undefined): boolean {
  const ps = host.settings.providers?.[name] as { api_key?: unknown; api_key_env?: unknown } | undefined;
  if (typeof ps?.api_key === "string" && ps.api_key) return true;
  if (typeof ps?.api_key_env === "string") return !!host.env[ps.api_key_env];
  if (!keyEnv?.length) return ps !== undefined; // keyless (local) servers count once configured
  return keyEnv.some((k) => !!host.env[k]);
}

/** Lines listing the catalog models of providers that have a key, current model marked `✓`. */
export function knownModelLines(host: Host, current: string): string[] {
  const lines: string[] = [];
  for (const f of host.providers.list()) {
    if (!f.models?.length || !keyed(host, f.name, f.keyEnv)) continue;
    const ids = f.models.map((m) => {
      const spec = `${f.name}/${m.id}`;
      const win = m.context_window ? ` (${kTokens(m.context_window)})` : "";
      return `${spec === current ? "✓ " : ""}${m.id}${win}`;
    });
    lines.push(`  ${f.name}: ${ids.join(", ")}`);
  }
  for (const [spec] of Object.entries(host.settings.models ?? {})) {
    if (spec.includes("/")) lines.push(`  ${spec === current ? "✓ " : ""}${spec} (models in your config)`);
  }
  return lines;
}

/** Saves one personal default; a failure keeps the change for this session and says so. */
async function saveDefault(ctx: CommandContext, key: string, value: string | undefined, what: string): Promise<void> {
  try {
    await updatePersonalSettings((cur) => {
      const next = { ...cur };
      if (value === undefined) delete next[key];
      else next[key] = value;
      return next;
    }, ctx.host.env);
  } catch (err) {
    ctx.print(`${what} holds for this session only: not saved as the default (${errorText(err)})`);
  }
}

export const modelCommand: Command = {
  ...COMMAND_META.model,
  async run(ctx) {
    const { agent, host } = ctx;
    const spec = ctx.args.trim();
    if (!spec) {
      // an agent opened without its model (`larik -p /model` with none configured) says why
      if (agent.modelError) ctx.print(`model: none (${agent.modelError.message})`);
      else ctx.print(`model: ${agent.spec}${agent.effort ? ` · effort ${agent.effort}` : ""} · context window ${kTokens(agent.contextWindow())}`);
      const known = knownModelLines(host, agent.spec);
      if (known.length) {
        ctx.print("known models of connected providers:");
        for (const l of known) ctx.print(l);
      } else ctx.print("no catalog models for the providers with keys here: /model provider/model switches to any model id");
      return;
    }
    if (/\s/.test(spec)) throw new Error(`/model ${spec}: give one spec such as anthropic/claude-sonnet-4-5`);
    const before = agent.spec;
    // Throws a one-line ConfigError for an unknown provider or a missing key. Thinking and
    // opaque blocks of the old model are replayed only to their producer (invariant 11).
    await agent.setModel(spec);
    ctx.print(`model: ${before} → ${agent.spec} · context window ${kTokens(agent.contextWindow())}`);
    await saveDefault(ctx, "model", agent.spec, `model ${agent.spec}`);
  },
};

export const modeCommand: Command = {
  ...COMMAND_META.mode,
  async run(ctx) {
    const [arg, extra] = words(ctx.args);
    if (!arg) {
      ctx.print(`mode: ${ctx.agent.checker.mode} (modes: ${PERMISSION_MODES.join(", ")})`);
      return;
    }
    if (extra !== undefined || !PERMISSION_MODES.includes(arg as PermissionMode)) {
      throw new ConfigError(`/mode ${ctx.args.trim()}: use one of ${PERMISSION_MODES.join(", ")}`);
    }
    const before = ctx.agent.checker.mode;
    // The checker reads its mode on every decision, so this applies from the next tool call.
    ctx.agent.checker.mode = arg as PermissionMode;
    ctx.print(`mode: ${before} → ${arg}`);
    await saveDefault(ctx, "mode", arg, `mode ${arg}`);
  },
};

export const effortCommand: Command = {
  ...COMMAND_META.effort,
  async run(ctx) {
    const [arg, extra] = words(ctx.args);
    if (!arg) {
      ctx.print(`effort: ${ctx.agent.effort ?? "default (the provider's own)"} (levels: ${EFFORTS.join(", ")}, default)`);
      return;
    }
    if (extra !== undefined || (arg !== "default" && !EFFORTS.includes(arg as Effort))) {
      throw new ConfigError(`/effort ${ctx.args.trim()}: use one of ${EFFORTS.join(", ")} or default`);
    }
    const level = arg === "default" ? undefined : (arg as Effort);
    ctx.agent.effort = level;
    ctx.print(`effort: ${level ?? "default (the provider's own)"}`);
    await saveDefault(ctx, "effort", level, `effort ${arg}`);
  },
};
