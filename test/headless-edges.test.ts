/**
 * `larik -p` at its edges, end to end: the built CLI as a subprocess against a local model server.
 * Exit statuses (usage 2, run 1), a flag value that looks like a flag, a stop signal before the
 * turn, `/cost` and `/export` with nothing to show, piped stdin and slash commands, the `init`
 * event, and a reader that leaves while the model is silent.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentEventSchema } from "../kernel/index.js";
import { startMockModelServer, type MockModelServer } from "./fakes/mock-model-server.js";
import { CLI, runCli } from "./fakes/run-cli.js";

const M = ["--model", "openai-compatible/m"];

function makeRepo(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "larik-edges-repo-")));
  writeFileSync(join(dir, "a.txt"), "a\n");
  const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, stdio: "ignore" });
  git("init", "-q");
  git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init");
  return dir;
}

/** A home of its own (no keys, no config) and a repo. */
function setup(server?: MockModelServer): { repo: string; home: string; env: NodeJS.ProcessEnv } {
  const home = mkdtempSync(join(tmpdir(), "larik-edges-home-"));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    NO_COLOR: "1",
    ...(server ? { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" } : {}),
  };
  return { repo: makeRepo(), home, env };
}

/** A running CLI whose stdin stays open (and silent) until the test ends it. */
function start(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): { child: ChildProcess; out: () => string; err: () => string; closed: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const closed = new Promise<number | null>((done) => child.on("close", (code) => (child.stdin!.destroy(), done(code))));
  return { child, out: () => out, err: () => err, closed };
}

async function until(what: () => boolean, ms = 20_000): Promise<void> {
  for (const t0 = Date.now(); !what(); ) {
    if (Date.now() - t0 > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

const lines = (s: string) => s.trim().split("\n").map((l) => JSON.parse(l));

describe("larik -p at its edges", () => {
  let server: MockModelServer;
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error("dist/cli.cjs is missing: run npm run build first");
    server = await startMockModelServer();
  });
  afterAll(() => server?.close());

  it("a command argument it refuses is a usage error (2); a provider's 401 and a command with nothing to act on are run errors (1)", async () => {
    const { repo, env } = setup(server);
    for (const [prompt, code, stderr] of [
      ["/mode bogus", 2, "larik: /mode bogus: use one of default, accept-edits, plan, auto, yolo\n"],
      ["/effort x y", 2, "larik: /effort x y: use one of low, medium, high, xhigh, max or default\n"],
      ["/rewind 1 sideways", 2, "larik: /rewind 1 sideways: usage /rewind [n] [files|keep]\n"],
      ["/prompt", 1, "larik: /prompt: this session has no prompts yet\n"],
    ] as const) {
      const r = await runCli(["-p", ...M, prompt], { cwd: repo, env });
      expect([prompt, r.code, r.stderr]).toEqual([prompt, code, stderr]);
    }
    // the same refusal from the flag is the same status
    expect((await runCli(["-p", "--mode", "bogus", ...M, "hi"], { cwd: repo, env })).code).toBe(2);
    // a key the provider refuses is learnt only by running: the agent's error, exit 1 (§22)
    server.push({ status: 401, body: { error: { message: "invalid api key" } } });
    const denied = await runCli(["-p", ...M, "hi"], { cwd: repo, env });
    expect([denied.code, denied.stdout, denied.stderr]).toEqual([1, "", "error: openai-compatible (HTTP 401): invalid api key (check OPENAI_API_KEY)\n"]);
  });

  it("a model the provider does not know (404) says so and where to pick another, for each API; a 404 is not retried", async () => {
    const { repo, env } = setup(server);
    const anthropicEnv = { ...env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "k" };
    // what OpenAI's Chat Completions and Anthropic's Messages API answer for an unknown model
    for (const [model, body, stderr] of [
      [
        "openai-compatible/no-such-model",
        { error: { message: "The model `no-such-model` does not exist or you do not have access to it.", type: "invalid_request_error", param: null, code: "model_not_found" } },
        'error: openai-compatible (HTTP 404): model "no-such-model" not found (The model `no-such-model` does not exist or you do not have access to it.): pick another with --model openai-compatible/<model> or the model setting\n',
      ],
      [
        "anthropic/no-such-model",
        { type: "error", error: { type: "not_found_error", message: "model: no-such-model" } },
        'error: anthropic (HTTP 404): model "no-such-model" not found (model: no-such-model): pick another with --model anthropic/<model> or the model setting\n',
      ],
    ] as const) {
      const sent = server.requests.length;
      server.push({ status: 404, body });
      const r = await runCli(["-p", "--model", model, "hi"], { cwd: repo, env: anthropicEnv });
      expect([model, r.code, r.stdout, r.stderr]).toEqual([model, 1, "", stderr]);
      expect(server.requests.length - sent).toBe(1);
      expect(server.requests.at(-1)!.body.model).toBe("no-such-model");
    }
  });

  it("a flag value that starts with a dash and is not valid anyway says what a valid value is", async () => {
    const { repo, env } = setup(server);
    for (const [args, stderr] of [
      [["--timeout", "-5s"], "larik: --timeout -5s: expected a duration such as 90 (seconds), 90s, 5m, 1h30m or 500ms (0 for none)\n"],
      [["--output", "-j"], "larik: --output -j: use text or json\n"],
      [["--mode", "-x"], "larik: --mode -x: use one of default, accept-edits, plan, auto, yolo\n"],
      // a value no check knows to refuse: the way to pass it
      [["--resume", "-x"], 'larik: --resume needs a value, and "-x" looks like a flag: write --resume=-x if it is the value (see larik --help)\n'],
    ] as const) {
      const r = await runCli(["-p", ...M, ...args, "hi"], { cwd: repo, env });
      expect([args, r.code, r.stderr]).toEqual([args, 2, stderr]);
    }
  });

  it("a misspelt flag gets the flag it was meant to be; a flag missing its value or given one it takes not, a line in Larik's words", async () => {
    const { repo, env } = setup(server);
    for (const [args, stderr] of [
      [["--mdoe", "yolo", "hi"], "larik: unknown option '--mdoe': did you mean --mode? (see larik --help)\n"],
      [["--verbose", "hi"], "larik: unknown option '--verbose' (see larik --help)\n"],
      [["hi", "--timeout"], "larik: --timeout needs a value (see larik --help)\n"],
      [["--fork=yes", "hi"], "larik: --fork takes no value (see larik --help)\n"],
      // a flag where the value should be: forgotten, not a bad duration
      [["--timeout", "--mode", "yolo", "hi"], 'larik: --timeout needs a value, and "--mode" looks like a flag: write --timeout=--mode if it is the value (see larik --help)\n'],
      [["hi", "--timeout="], 'larik: --timeout "": expected a duration such as 90 (seconds), 90s, 5m, 1h30m or 500ms (0 for none)\n'],
    ] as const) {
      const r = await runCli(["-p", ...M, ...args], { cwd: repo, env });
      expect([args, r.code, r.stderr]).toEqual([args, 2, stderr]);
    }
  });

  it("a lone first word a typo away from a subcommand is refused with the subcommand it was meant to be; a prompt of more words, or with -p, is not", async () => {
    const { repo, env } = setup(server);
    const hint = (w: string, sub: string) => `larik: unknown command '${w}': did you mean larik ${sub}? (to send "${w}" as a prompt, write larik -- ${w}, or larik -p ${w} for a headless run)\n`;
    const sent = server.requests.length;
    for (const [args, stderr] of [
      [["serv"], hint("serv", "serve")],
      [["Serve"], hint("Serve", "serve")],
      // the typo wins over the serve flag it makes unknown
      [["serv", "--addr", "127.0.0.1:0"], hint("serv", "serve")],
      [["confg"], hint("confg", "config")],
      // prompts: without a terminal and -p, the forgotten -p
      [["serve the files"], 'larik: not a terminal: use -p "prompt" (or pipe a prompt into larik -p) for headless mode\n'],
      [["serv", "the", "files"], 'larik: not a terminal: use -p "prompt" (or pipe a prompt into larik -p) for headless mode\n'],
      [["--", "serv"], 'larik: not a terminal: use -p "prompt" (or pipe a prompt into larik -p) for headless mode\n'],
      // two edits from serve: a word, not a typo
      [["solve"], 'larik: not a terminal: use -p "prompt" (or pipe a prompt into larik -p) for headless mode\n'],
    ] as const) {
      const r = await runCli([...args], { cwd: repo, env });
      expect([args, r.code, r.stdout, r.stderr]).toEqual([args, 2, "", stderr]);
    }
    expect(server.requests.length).toBe(sent);
    // with -p the word is the prompt, wherever -p is
    for (const args of [["-p", ...M, "serv"], ["serv", "-p", ...M]]) {
      server.push({ text: "ok" });
      const r = await runCli(args, { cwd: repo, env });
      expect([args, r.code, r.stdout, r.stderr]).toEqual([args, 0, "ok\n", ""]);
      expect(server.requests.at(-1)!.body.messages.at(-1).content).toBe("serv");
    }
  });

  it("a stop signal while stdin is read ends the run at once: said once, 128 + its number, no request", async () => {
    const { repo, env } = setup(server);
    const sent = server.requests.length;
    for (const [format, signal, code] of [
      ["text", "SIGINT", 130],
      ["json", "SIGTERM", 143],
    ] as const) {
      // no prompt argument: stdin is the prompt, read to its end however long that takes
      const run = start(["-p", ...M, "--output", format], { cwd: repo, env });
      // long enough to be reading stdin on a loaded machine; nothing ends the wait but the signal
      await new Promise((r) => setTimeout(r, 2500));
      run.child.kill(signal);
      expect(await run.closed).toBe(code);
      if (format === "text") expect([run.out(), run.err()]).toEqual(["", `! stopped by ${signal}\n`]);
      else {
        expect(run.err()).toBe("");
        expect(lines(run.out())).toEqual([
          { type: "notice", text: `stopped by ${signal}` },
          { type: "done", stop_reason: "interrupted" },
        ]);
      }
    }
    expect(server.requests.length).toBe(sent);
  });

  it("a stop signal while the config loads stops larik once it has loaded, said once", async () => {
    const { repo, home, env } = setup(server);
    const cfgDir = join(home, ".config", "larik");
    mkdirSync(cfgDir, { recursive: true });
    const marker = join(home, "loading");
    writeFileSync(
      join(cfgDir, "larik.config.ts"),
      [
        'import { writeFileSync } from "node:fs";',
        "export default {",
        "  plugins: [{",
        '    name: "slow", description: "takes a while to set up",',
        `    async setup() { writeFileSync(${JSON.stringify(marker)}, ""); await new Promise((r) => setTimeout(r, 1500)); },`,
        "  }],",
        "};",
        "",
      ].join("\n"),
    );
    const sent = server.requests.length;
    const run = start(["-p", ...M, "hi"], { cwd: repo, env });
    await until(() => existsSync(marker));
    run.child.kill("SIGINT");
    expect(await run.closed).toBe(130);
    expect([run.out(), run.err()]).toEqual(["", "! stopped by SIGINT\n"]);
    expect(server.requests.length).toBe(sent);
  });

  it("a stop signal while the headless bundle loads (before main runs) is trapped too: said once, 130", async () => {
    const { repo, home, env } = setup(server);
    // A preload that raises SIGINT the moment cli.ts reaches for the bundle: deterministic where a
    // signal from outside would race the load. Untrapped, SIGINT would kill at once, silently.
    const preload = join(home, "sigint-at-bundle.cjs");
    writeFileSync(
      preload,
      [
        'const fs = require("node:fs");',
        "const statSync = fs.statSync;",
        'fs.statSync = function (p, ...rest) { if (String(p).endsWith("headless.cjs")) { fs.statSync = statSync; process.kill(process.pid, "SIGINT"); } return statSync.call(this, p, ...rest); };',
        "",
      ].join("\n"),
    );
    const sent = server.requests.length;
    const child = spawn(process.execPath, ["--require", preload, CLI, "-p", ...M, "hi"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (err += d));
    const [code, signal] = await new Promise<[number | null, string | null]>((done) => child.on("close", (c, s) => done([c, s])));
    expect([code, signal, out, err]).toEqual([130, null, "", "! stopped by SIGINT\n"]);
    expect(server.requests.length).toBe(sent);
  });

  it("/cost with no model invents no context window", async () => {
    const { repo, env } = setup(); // no --model, no key, no config
    const r = await runCli(["-p", "/cost"], { cwd: repo, env });
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toBe("no model requests in this session yet\nctx 0 · context window unknown: no model is open\n");
  });

  it("/export of a session with no prompts says so and writes no file", async () => {
    const { repo, env } = setup(server);
    for (const extra of [[], ...[["--model", "openai-compatible/m"]]]) {
      const r = await runCli(["-p", ...extra, "/export"], { cwd: repo, env });
      expect([r.code, r.stdout, r.stderr]).toEqual([0, "nothing to export: this session has no prompts yet\n", ""]);
    }
    expect(readdirSync(repo).filter((f) => f.endsWith(".md"))).toEqual([]);
  });

  it("piped stdin joins the prompt a command makes, never its arguments; a command that makes none leaves stdin unread", async () => {
    const { repo, env } = setup(server);
    mkdirSync(join(repo, ".larik", "commands"), { recursive: true });
    writeFileSync(join(repo, ".larik", "commands", "greet.md"), "---\ndescription: greet\n---\nSay hello to $ARGUMENTS\n");
    server.push({ text: "hello" });
    const greet = await runCli(["-p", ...M, "/greet bob"], { cwd: repo, env, input: "and to alice\n" });
    expect([greet.code, greet.stdout, greet.stderr]).toEqual([0, "hello\n", ""]);
    expect(server.requests.at(-1)!.body.messages.at(-1).content).toBe("Say hello to bob\n\nand to alice");
    // `/mode` shows the mode: what was piped is no argument of it
    const mode = await runCli(["-p", ...M, "/mode"], { cwd: repo, env, input: "yolo\n" });
    expect([mode.code, mode.stdout]).toEqual([0, "mode: default (modes: default, accept-edits, plan, auto, yolo)\n"]);
    // a silent pipe that never closes (CI): `/cost` does not wait for it
    const run = start(["-p", ...M, "/cost"], { cwd: repo, env });
    expect(await run.closed).toBe(0);
    expect(run.err()).toBe("");
    expect(run.out()).toMatch(/^no model requests in this session yet\n/);
  });

  it("--output json starts with init: the session id, model, cwd and mode, before the model answers", async () => {
    const { repo, env } = setup(server);
    server.push({ text: "held", hold: true });
    const sent = server.requests.length;
    const run = start(["-p", ...M, "--output", "json", "hi"], { cwd: repo, env });
    // the model is asked and its reply never ends: init is there all the same
    await until(() => server.requests.length > sent && run.out().includes("\n"));
    const [init] = lines(run.out());
    expect(init).toEqual({ type: "init", session_id: expect.stringMatching(/^\d{8}-\d{6}-[0-9a-f]{6}$/), model: "openai-compatible/m", cwd: repo, mode: "default" });
    run.child.kill("SIGINT");
    expect(await run.closed).toBe(130);
    const events = lines(run.out());
    for (const e of events) expect(AgentEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
    expect(events.at(-1)).toEqual({ type: "done", stop_reason: "interrupted", session_id: init.session_id });

    // no model: no session stored, so no id, and no model to name
    const bare = setup();
    const cost = await runCli(["-p", "--output", "json", "/cost"], { cwd: bare.repo, env: bare.env });
    expect(lines(cost.stdout)[0]).toEqual({ type: "init", cwd: bare.repo, mode: "default" });
  });

  it("a reader that leaves while the model is silent stops the turn: 141, quietly, the session kept", async () => {
    const { repo, env } = setup(server);
    for (const format of ["text", "json"]) {
      server.push({ text: "the start of a reply that stalls", hold: true });
      const child = spawn(process.execPath, [CLI, "-p", ...M, "--output", format, "hi"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
      let err = "";
      child.stderr!.on("data", (d) => (err += d));
      const closed = new Promise<number | null>((done) => child.on("close", done));
      // the reader takes the first chunk (the text so far, or init) and leaves once the model is
      // asked; nothing more is written, since the reply never goes on
      const sent = server.requests.length;
      child.stdout!.once("data", () => void until(() => server.requests.length > sent).then(() => child.stdout!.destroy()));
      expect(await closed, format).toBe(141);
      expect(err).toBe("");
    }
    // the held request was cancelled, and -c continues the session
    server.push({ text: "resumed" });
    const r = await runCli(["-c", "-p", "again"], { cwd: repo, env });
    expect([r.code, r.stdout]).toEqual([0, "resumed\n"]);
  });

  it("a reader that leaves while piped stdin is waited for ends the wait: 141, no request", async () => {
    const { repo, env } = setup(server);
    // stdin a pipe that stays open and silent: -p "prompt" waits up to 3 s for it
    const { child, err, closed } = start(["-p", ...M, "--output", "json", "hi"], { cwd: repo, env });
    const sent = server.requests.length;
    // init comes before stdin is waited for; the reader takes it and leaves
    child.stdout!.once("data", () => child.stdout!.destroy());
    expect(await closed).toBe(141);
    expect(err()).toBe("");
    expect(server.requests.length).toBe(sent);
  });
});
