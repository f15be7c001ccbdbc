/**
 * Test scaffolding for the commands plugin: a host with the plugin, a scripted provider factory
 * (`scripted/…`, priced and keyless; `fake/…`, keyed by FAKE_KEY), a `peek` read tool and a
 * command runner that collects printed lines. Shared by plugins/commands/*.test.ts and test/.
 */
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { definePlugin, Host, type Agent, type CommandUi, type Plugin } from "../../kernel/index.js";
import { drain } from "../../test/fakes/drain.js";
import { peekTool } from "../../test/fakes/loop-tools.js";
import { ScriptedProvider } from "../../test/fakes/scripted-provider.js";

export { drain };
import commands from "./index.js";

export interface TestBed {
  host: Host;
  /** Answers every `scripted/*` request. */
  provider: ScriptedProvider;
  /** Answers every `fake/*` request. */
  fake: ScriptedProvider;
  cwd: string;
  env: NodeJS.ProcessEnv;
  configFile: string;
}

/** A temp home (config, data) and project folder, and a host loading `extra` plugins then `commands`. */
export async function testBed(extra: Plugin[] = [], settings: Record<string, unknown> = {}): Promise<TestBed> {
  const base = mkdtempSync(join(tmpdir(), "larik-commands-"));
  const cwd = join(base, "project");
  mkdirSync(cwd);
  const env: NodeJS.ProcessEnv = {
    HOME: join(base, "home"),
    XDG_CONFIG_HOME: join(base, "config"),
    XDG_DATA_HOME: join(base, "data"),
    FAKE_KEY: "k",
  };
  const provider = new ScriptedProvider([], "scripted");
  const fake = new ScriptedProvider([], "fake");
  const fixtures = definePlugin({
    name: "test-fixtures",
    setup(ctx) {
      ctx.providers.register({
        name: "scripted",
        keyEnv: [],
        models: [{ provider: "scripted", id: "m1", context_window: 200_000, input_price: 3, output_price: 15 }],
        create: () => provider,
      });
      ctx.providers.register({
        name: "fake",
        keyEnv: ["FAKE_KEY"],
        models: [{ provider: "fake", id: "fast", context_window: 32_000 }],
        create: () => fake,
      });
      ctx.providers.register({ name: "locked", keyEnv: ["LOCKED_KEY"], models: [{ provider: "locked", id: "hidden" }], create: () => fake });
      ctx.tools.register(peekTool());
    },
  });
  const host = await Host.create({ plugins: [...extra, fixtures, commands], cwd, env, settings: { providers: { scripted: {} }, ...settings } });
  return { host, provider, fake, cwd: host.cwd, env, configFile: join(base, "config", "larik", "config.json") };
}

/**
 * Runs `/name args` as a front end would, returning what it printed and what it returned.
 * @throws whatever the command throws.
 */
export async function runCommand(host: Host, agent: Agent, line: string, ui?: CommandUi): Promise<{ lines: string[]; prompt?: string }> {
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(line);
  if (!m) throw new Error(`not a command line: ${line}`);
  const cmd = host.commands.get(m[1]!);
  if (!cmd) throw new Error(`no command /${m[1]}`);
  const lines: string[] = [];
  const r = await cmd.run({ host, agent, args: m[2]!, print: (t) => lines.push(t), ui });
  return { lines, prompt: r?.prompt };
}

/** A `CommandUi` that records what commands ask of it. */
export function recordingUi(initial: Agent): CommandUi & { agent: Agent; input?: string; copied: string[]; quit: () => void; quitCalls: number } {
  const ui = {
    agent: initial,
    input: undefined as string | undefined,
    copied: [] as string[],
    quitCalls: 0,
    switchAgent(a: Agent) {
      ui.agent = a;
    },
    setInput(text: string) {
      ui.input = text;
    },
    async copy(text: string) {
      ui.copied.push(text);
    },
    quit() {
      ui.quitCalls++;
    },
  };
  return ui;
}
