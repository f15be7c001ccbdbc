/**
 * Bad plugins and bad plugin lists, as a user meets them: the built CLI (`dist/cli.cjs`) as a
 * subprocess with a personal `larik.config.ts` in a temporary XDG_CONFIG_HOME, and the embedding
 * API's `Host.create`. Each problem is one line that names the plugin and says what to fix, and
 * nothing else is lost.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { definePlugin, Host, type Plugin } from "../kernel/index.js";
import { startMockModelServer, type MockModelServer } from "./fakes/mock-model-server.js";
import { CLI, runCli, type CliRun } from "./fakes/run-cli.js";


let base: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "larik-plugin-notices-"));
  mkdirSync(join(base, "work"));
  env = {
    PATH: process.env.PATH,
    HOME: join(base, "home"),
    XDG_CONFIG_HOME: join(base, "home", ".config"),
    XDG_DATA_HOME: join(base, "home", ".local", "share"),
    NO_COLOR: "1",
  };
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** Writes the personal `larik.config.ts`. */
function personalConfig(text: string): void {
  const dir = join(env.XDG_CONFIG_HOME!, "larik");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "larik.config.ts"), text);
}

function larik(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return runCli(args, { cwd: join(base, "work"), env: { ...env, ...extraEnv } });
}

const lines = (s: string) => s.split("\n").filter(Boolean);

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error("dist/cli.cjs is missing: run npm run build first");
});

describe("larik with a config that has bad plugins", () => {
  it("a setup error of several lines is a one-line notice", async () => {
    personalConfig(`export default { plugins: [{ name: "boom", setup() { throw new Error("first line\\n    at setup (boom.ts:1:1)\\n    at load"); } }] };\n`);
    const r = await larik(["--version"]);
    expect(r.code).toBe(0);
    expect(lines(r.stderr)).toEqual(['! plugin "boom" failed in setup: first line; started without it']);
  });

  it("a second plugin of a name is skipped and the first keeps its registrations", async () => {
    personalConfig(`export default { plugins: [{ name: "headless", setup(ctx) { ctx.notice("the impostor ran"); } }] };\n`);
    const r = await larik(["--version"]);
    expect(lines(r.stderr)).toEqual([
      '! plugin "headless" from ~/.config/larik/larik.config.ts skipped: the plugin of that name from the default preset came first and keeps it; rename one of them, or remove one',
    ]);
    // the preset's headless front end still takes -p
    const p = await larik(["-p", "--model", "nosuch/m", "hi"]);
    expect(p.stderr).not.toContain("unknown option");
    expect(p.stderr).toContain('unknown provider "nosuch"');
  });

  it("a name in disable that matches no plugin gets a notice with the close match or the names", async () => {
    personalConfig(`export default { disable: ["tuii", "nothing-like-it"] };\n`);
    const r = await larik(["--version"]);
    expect(r.code).toBe(0);
    const [typo, unknown, ...rest] = lines(r.stderr);
    expect(rest).toEqual([]);
    expect(typo).toBe('! disable: "tuii" matches no plugin and leaves nothing out; did you mean "tui"?');
    expect(unknown).toMatch(/^! disable: "nothing-like-it" matches no plugin and leaves nothing out; the plugins are sessions-jsonl, .*headless, tui, server$/);
    expect(r.stdout).toMatch(/^  tui +Interactive terminal UI/m);
  });

  for (const [what, preset] of [
    ["a preset path that does not exist", `["./nope.ts"]`],
    ["an undefined preset entry", `[undefined]`],
  ] as const) {
    it(`-p with ${what} shows why, then says -p needs the headless plugin`, async () => {
      personalConfig(`export default { preset: ${preset} };\n`);
      const r = await larik(["-p", "x"]);
      expect(r.code).toBe(2);
      const [notice, error, ...rest] = lines(r.stderr);
      expect(rest).toEqual([]);
      expect(notice).toMatch(/^! ~\/\.config\/larik\/larik\.config\.ts: preset entry .* skipped: /);
      expect(error).toBe("larik: unknown option '-p': -p comes from the headless plugin, which is not loaded (larik --version lists the loaded plugins)");
    });
  }

  it("no front end for the run: the notices come before the refusal", async () => {
    personalConfig(`export default { preset: ["./nope.ts"] };\n`);
    const r = await larik([]);
    expect(r.code).toBe(2);
    const out = lines(r.stderr);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^! .*preset entry "\.\/nope\.ts" skipped/);
    expect(out[1]).toMatch(/^larik: not a terminal/);
  });
});

describe("front ends that fail before they would show the notices", () => {
  beforeEach(() => personalConfig(`export default { disable: ["tuii"] };\n`));
  const notice = '! disable: "tuii" matches no plugin and leaves nothing out; did you mean "tui"?';

  it("larik serve with a refused option", async () => {
    const r = await larik(["serve", "--addr", "0.0.0.0:0"]);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([notice.replace(/^! /, "larik serve: "), expect.stringMatching(/^larik: --addr 0\.0\.0\.0 is not a loopback address/)]);
  });

  // util-linux script(1) gives the CLI a terminal, so the interactive front end takes the run
  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)("the TUI with a model no provider serves", async () => {
    const command = [process.execPath, CLI, "--model", "nosuch/m"].map((a) => JSON.stringify(a)).join(" ");
    const out = await new Promise<string>((done) => {
      const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: join(base, "work"), env, stdio: ["ignore", "pipe", "pipe"] });
      let text = "";
      child.stdout.on("data", (d) => (text += d));
      child.stderr.on("data", (d) => (text += d));
      child.on("close", () => done(text));
    });
    const shown = lines(out.replace(/\r/g, "\n").replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "")).filter((l) => !l.startsWith("larik: starting"));
    expect(shown).toEqual([notice, expect.stringMatching(/^larik: unknown provider "nosuch"/)]);
  }, 20_000);
});

describe("an event tap that throws", () => {
  let server: MockModelServer;
  beforeAll(async () => {
    server = await startMockModelServer();
  });
  afterAll(() => server?.close());

  it("is reported once, naming the plugin and the hook; later taps still see every event and the run goes on", async () => {
    const seen = join(base, "seen.txt");
    personalConfig(
      [
        'import { appendFileSync } from "node:fs";',
        "export default { plugins: [",
        '  { name: "trace", setup(ctx) { ctx.hooks.event.tap(() => { throw new Error("tap broke\\n    at trace.ts:1"); }); } },',
        `  { name: "counter", setup(ctx) { ctx.hooks.event.tap((e) => appendFileSync(${JSON.stringify(seen)}, e.type + "\\n")); } },`,
        "] };",
        "",
      ].join("\n"),
    );
    server.push({ text: "the answer" });
    const r = await larik(["-p", "--model", "openai-compatible/m", "hi"], { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("the answer\n");
    expect(lines(r.stderr)).toEqual(['! plugin "trace" failed in hook "event": tap broke; further errors from it are not shown']);
    const types = lines(readFileSync(seen, "utf8"));
    expect(types.length).toBeGreaterThan(2);
    expect(types.at(-1)).toBe("done");
  }, 20_000);

  it("cannot change the events the front end gets: an assignment fails in the tap, which is named", async () => {
    personalConfig(
      [
        "export default { plugins: [",
        '  { name: "rewriter", setup(ctx) { ctx.hooks.event.tap((e) => { e.text = 5; }); } },',
        "] };",
        "",
      ].join("\n"),
    );
    server.push({ text: "the answer" });
    const r = await larik(["-p", "--output", "json", "--model", "openai-compatible/m", "hi"], { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" });
    expect(r.code).toBe(0);
    const events = lines(r.stdout).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.filter((e) => "text" in e && typeof e.text !== "string")).toEqual([]);
    expect(events.find((e) => e.type === "notice")?.text).toMatch(/^plugin "rewriter" failed in hook "event": Cannot assign to read only property 'text'.*; further errors from it are not shown$/);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
  }, 20_000);
});

describe("a provider plugin whose stream() returns no async iterable", () => {
  it("-p prints one line naming the provider and its plugin and what to return, and exits 1", async () => {
    personalConfig(
      [
        "export default { plugins: [",
        '  { name: "acme-plugin", setup(ctx) { ctx.providers.register({ name: "acme", keyEnv: [], models: [{ provider: "acme", id: "m" }],',
        '    create: () => ({ name: "acme", async stream() { return { type: "text_delta", text: "hi" }; } }) }); } },',
        "] };",
        "",
      ].join("\n"),
    );
    const r = await larik(["-p", "--model", "acme/m", "hi"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual([
      'error: provider "acme" (plugin "acme-plugin"): stream(request) must return an async iterable of StreamEvent, as an async generator does (async *stream(request) { yield … }); it returned a Promise',
    ]);
  }, 20_000);
});

describe("a plugin whose setup never finishes", () => {
  it("is reported by name after the time limit, its registrations undone, and larik starts without it", async () => {
    // a promise nothing settles: without the limit, Node's loop empties and larik exits 0 having
    // printed nothing at all
    personalConfig(
      [
        "export default { plugins: [",
        '  { name: "stuck", setup(ctx) {',
        '    ctx.commands.register({ name: "stuckcmd", description: "Never usable", async run() {} });',
        "    return new Promise(() => {});",
        "  } },",
        '  { name: "after", setup(ctx) { ctx.commands.register({ name: "aftercmd", description: "Loaded after it", async run() {} }); } },',
        "] };",
        "",
      ].join("\n"),
    );
    const started = Date.now();
    const r = await larik(["--help"], { LARIK_SETUP_TIMEOUT_MS: "300" });
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(lines(r.stderr)).toEqual(['! plugin "stuck" failed in setup: did not finish within 0.3 s (LARIK_SETUP_TIMEOUT_MS sets the limit); started without it']);
    expect(r.stdout).not.toContain("stuckcmd");
    expect(r.stdout).toMatch(/^ {2}\/aftercmd +Loaded after it$/m);
    expect(r.stdout).toMatch(/^failed plugins: stuck$/m);
  }, 20_000);

  it("a setup that finishes in time leaves no timer behind: the run ends without waiting for the limit", async () => {
    personalConfig('export default { plugins: [{ name: "quick", async setup() { await new Promise((r) => setTimeout(r, 10)); } }] };\n');
    const started = Date.now();
    const r = await larik(["--version"], { LARIK_SETUP_TIMEOUT_MS: "15000" });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^ {2}quick$/m);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it("a handle a plugin leaves open does not keep larik running: it exits a second after the run, saying what was open", async () => {
    personalConfig('export default { plugins: [{ name: "leaky", setup() { setInterval(() => {}, 60_000); } }] };\n');
    const started = Date.now();
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, [CLI, "--version"], { cwd: join(base, "work"), env, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.on("close", (code) => (clearTimeout(kill), done({ code, stdout, stderr })));
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}leaky$/m);
    expect(lines(r.stderr)).toEqual(["larik: exiting 1 s after the run ended; still open: Timeout (a plugin that does not close what it opened in its dispose)"]);
    expect(Date.now() - started).toBeLessThan(8_000);
  }, 20_000);

  it("a bad LARIK_SETUP_TIMEOUT_MS is one line saying what to write, and the default applies", async () => {
    for (const bad of ["10s", "-1", " "]) {
      const r = await larik(["--help"], { LARIK_SETUP_TIMEOUT_MS: bad });
      expect(r.code).toBe(0);
      expect(lines(r.stderr)).toEqual([`! LARIK_SETUP_TIMEOUT_MS: expected a number of milliseconds, or 0 for no limit, got ${JSON.stringify(bad)}; using 10000`]);
    }
  }, 30_000);

  it("LARIK_SETUP_TIMEOUT_MS=0 is no limit: a slow setup is waited for, with no notice", async () => {
    personalConfig('export default { plugins: [{ name: "slow", async setup(ctx) { await new Promise((r) => setTimeout(r, 300)); ctx.commands.register({ name: "slowcmd", description: "Loaded late", async run() {} }); } }] };\n');
    const r = await larik(["--help"], { LARIK_SETUP_TIMEOUT_MS: "0" });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(/^ {2}\/slowcmd +Loaded late$/m);
  }, 20_000);
});

describe("Host.create (embedding)", () => {
  it("skips an entry that is not a plugin with a notice naming its index, and loads the rest", async () => {
    const ok = definePlugin({ name: "ok", setup() {} });
    const host = await Host.create({
      plugins: [null, ok, undefined, "./x.ts", { name: "half" }, [ok]] as unknown as Plugin[],
      cwd: base,
      env,
    });
    expect(host.plugins).toEqual(["ok"]);
    expect(host.notices).toEqual([
      "plugins[0] skipped: got null; a plugin is definePlugin({ name, setup })",
      "plugins[2] skipped: got undefined; a plugin is definePlugin({ name, setup })",
      'plugins[3] skipped: got the string "./x.ts"; a plugin is definePlugin({ name, setup })',
      'plugins[4] skipped: got an object named "half" without a setup function; a plugin is definePlugin({ name, setup })',
      "plugins[5] skipped: got a list of 1 (spread a preset into plugins: ...preset); a plugin is definePlugin({ name, setup })",
    ]);
    expect(host.failed.map((f) => f.name)).toEqual(["plugins[0]", "plugins[2]", "plugins[3]", "plugins[4]", "plugins[5]"]);
    await host.dispose();
  });

  it("a registration without a name skips its plugin with a notice naming the registry it went to", async () => {
    const nameless = (name: string, setup: (ctx: any) => void) => definePlugin({ name, setup });
    const host = await Host.create({
      plugins: [
        nameless("a", (ctx) => ctx.sandboxes.register({ available: () => true })),
        nameless("b", (ctx) => ctx.sessionStores.register({ name: "" })),
        nameless("c", (ctx) => ctx.frontends.register(null)),
        nameless("ok", (ctx) => ctx.skills.register({ name: "fine", description: "", body: "" })),
      ],
      cwd: base,
      env,
    });
    expect(host.plugins).toEqual(["ok"]);
    expect(host.notices).toEqual([
      'plugin "a" failed in setup: ctx.sandboxes.register(…): the value needs a name (a non-empty string), got name undefined; started without it',
      'plugin "b" failed in setup: ctx.sessionStores.register(…): the value needs a name (a non-empty string), got name ""; started without it',
      'plugin "c" failed in setup: ctx.frontends.register(…): the value needs a name (a non-empty string), got null; started without it',
    ]);
    expect(host.sandboxes.list()).toEqual([]);
    await host.dispose();
  });

  it("leaves out a plugin named in disable: its setup never runs and it registers nothing", async () => {
    const ran: string[] = [];
    const plugin = (name: string) =>
      definePlugin({
        name,
        setup: (ctx) => {
          ran.push(name);
          ctx.commands.register({ name: `${name}-cmd`, description: "", run: async () => undefined });
        },
      });
    const host = await Host.create({ plugins: [plugin("kept"), plugin("dropped")], disable: ["dropped"], cwd: base, env });
    expect(ran).toEqual(["kept"]);
    expect(host.plugins).toEqual(["kept"]);
    expect(host.commands.list().map((c) => c.name)).toEqual(["kept-cmd"]);
    expect(host.notices).toEqual([]);
    await host.dispose();
  });

  it("keeps the first of two plugins of a name, even when the second is listed later", async () => {
    const first = definePlugin({ name: "p", setup: (ctx) => void ctx.commands.register({ name: "first", description: "", run: async () => undefined }) });
    const second = definePlugin({ name: "p", setup: (ctx) => void ctx.commands.register({ name: "second", description: "", run: async () => undefined }) });
    const host = await Host.create({ plugins: [first, second, first], cwd: base, env });
    expect(host.commands.list().map((c) => c.name)).toEqual(["first"]);
    expect(host.notices).toEqual([
      'plugin "p" (plugins[1]) skipped: the plugin of that name (plugins[0]) came first and keeps it; rename one of them, or remove one',
      'plugin "p" (plugins[2]) skipped: it is already listed (plugins[0]); list it once',
    ]);
    await host.dispose();
  });

  it("setupTimeoutMs: a setup that runs out of time is undone, and what it registers later is refused", async () => {
    let release!: () => void;
    let late: unknown;
    const slow = definePlugin({
      name: "slow",
      async setup(ctx) {
        ctx.commands.register({ name: "early", description: "", run: async () => undefined });
        ctx.hooks.stop.tap(() => undefined);
        await new Promise<void>((r) => (release = r));
        ctx.hooks.preToolUse.tap(() => ({ decision: "deny" as const, reason: "late tap" }));
        try {
          ctx.commands.register({ name: "late", description: "", run: async () => undefined });
        } catch (err) {
          late = err;
        }
      },
    });
    const host = await Host.create({ plugins: [slow, definePlugin({ name: "next", setup() {} })], cwd: base, env, setupTimeoutMs: 50 });
    expect(host.plugins).toEqual(["next"]);
    expect(host.notices).toEqual(['plugin "slow" failed in setup: did not finish within 0.05 s (LARIK_SETUP_TIMEOUT_MS sets the limit); started without it']);
    expect(host.failed.map((f) => f.name)).toEqual(["slow"]);
    expect(host.commands.list().map((c) => c.name)).toEqual([]);
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect((late as Error).message).toBe('plugin "slow": registered after its setup ran out of time; the host started without it');
    expect(host.commands.list()).toEqual([]);
    expect(host.hooks.preToolUse.taps).toEqual([]);
    expect(host.hooks.stop.taps).toEqual([]);
    await host.dispose();
  });

  it("setupTimeoutMs: 0 waits for a setup as long as it takes", async () => {
    const slow = definePlugin({
      name: "slow",
      async setup(ctx) {
        await new Promise((r) => setTimeout(r, 50));
        ctx.commands.register({ name: "late", description: "", run: async () => undefined });
      },
    });
    const host = await Host.create({ plugins: [slow], cwd: base, env, setupTimeoutMs: 0 });
    expect([host.plugins, host.notices, host.commands.list().map((c) => c.name)]).toEqual([["slow"], [], ["late"]]);
    await host.dispose();
  });

  it("an async setup that has nothing to wait for gets no timer; one that waits does, and an early failure is still reported", async () => {
    const started: unknown[] = [];
    const real = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms?: number) => {
      started.push(ms);
      return real(fn, ms);
    }) as typeof setTimeout);
    try {
      const idle = definePlugin({ name: "idle", async setup() {} });
      const broken = definePlugin({
        name: "broken",
        async setup() {
          throw new Error("no config");
        },
      });
      const host = await Host.create({ plugins: [idle, broken], cwd: base, env, setupTimeoutMs: 5000 });
      expect([host.plugins, host.notices, started]).toEqual([["idle"], ['plugin "broken" failed in setup: no config; started without it'], []]);
      await host.dispose();
      const waits = definePlugin({
        name: "waits",
        async setup() {
          await new Promise((r) => setImmediate(r));
        },
      });
      const again = await Host.create({ plugins: [waits], cwd: base, env, setupTimeoutMs: 5000 });
      expect([again.plugins, started]).toEqual([["waits"], [5000]]);
      await again.dispose();
    } finally {
      spy.mockRestore();
    }
  });

  it("says why a required plugin is not loaded: listed later, disabled, failed, or absent", async () => {
    const needs = (name: string, ...requires: string[]) => definePlugin({ name, requires, setup() {} });
    const broken = definePlugin({ name: "broken", setup() { throw new Error("no config"); } });
    const host = await Host.create({
      plugins: [needs("early", "base"), needs("base"), broken, needs("on-off", "off"), needs("off"), needs("on-broken", "broken"), needs("typo", "bsae")],
      disable: ["off"],
      cwd: base,
      env,
    });
    expect(host.plugins).toEqual(["base"]);
    expect(host.notices).toEqual([
      'plugin "early" failed in setup: requires "base", which comes after it in the plugin list: list "base" before it; started without it',
      'plugin "broken" failed in setup: no config; started without it',
      'plugin "on-off" failed in setup: requires "off", which is disabled (remove "off" from disable); started without it',
      'plugin "on-broken" failed in setup: requires "broken", which failed to load (see its notice); started without it',
      'plugin "typo" failed in setup: requires "bsae", which is not in the plugin list (did you mean "base"?); started without it',
    ]);
    await host.dispose();
  });
});
