/**
 * The code examples of README.md, docs/*.md and the plugin READMEs run as written (the house
 * rule: every example in the docs runs in a test). Each test takes the fenced block out of the
 * document, so an edit to the example is what gets run: shell lines through bash with `larik` on
 * PATH (a shim for the built dist/cli.cjs, as `npm link` makes it) against a local model server,
 * TypeScript through node with `larik` resolving to this package, settings JSON through the
 * config loader. The README's plugin example and docs/config.md's are run by examples.test.ts
 * and config-files.test.ts; the blocks that are output samples or layouts, not commands, are
 * listed in NOT_RUNNABLE with the reason, and a new block must be added to one or the other.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveProjectConfig, buildSystemPrompt, Host, loadConfig, resolveModel, fallbackSpecs } from "../kernel/index.js";
import preset from "../presets/default.js";
import { startMockModelServer, type MockModelServer } from "./fakes/mock-model-server.js";
import { CLI } from "./fakes/run-cli.js";

const root = resolve(import.meta.dirname, "..");

interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  body: string;
}

/** The fenced code blocks of a markdown file, in order. */
function blocks(file: string): Block[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
    out.push({ file, line: i + 1, lang: open[1]!, body: lines.slice(i + 1, end).join("\n") + "\n" });
    i = end;
  }
  return out;
}

/** The one block of `file` whose text contains `marker`. */
function block(file: string, marker: string): Block {
  const found = blocks(file).filter((b) => b.body.includes(marker));
  expect(found.length, `one block of ${file} containing ${JSON.stringify(marker)}`).toBe(1);
  return found[0]!;
}

const DOCS = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`), ...readdirSync(join(root, "plugins")).filter((p) => existsSync(join(root, "plugins", p, "README.md"))).map((p) => `plugins/${p}/README.md`)];

/** Blocks that show output, a layout or a signature: `file:marker` → why nothing runs them. */
const NOT_RUNNABLE: Record<string, string> = {
  "README.md:npm ci && npm run build && npm link": "the install: the suite runs on what it builds; its second line runs below",
  "README.md:npm run check": "runs this suite itself",
  "docs/architecture.md:cli.ts ": "the file map; architecture-docs.test.ts checks it against kernel/",
  "docs/architecture.md:definePlugin({ name, requires?": "a signature, not code",
  "docs/sandbox.md:no sandbox: bubblewrap": "a notice as printed (its reason elided)",
  "docs/server.md:larik serve --model": "a transcript on the fixed default port 4096; its flags are the server tests'",
  'docs/server.md:{"error": {"code": "busy"': "an error body as the server sends it",
  "docs/server.md:event: tool_start": "one SSE message as sent",
  "docs/undo.md:manifest.json   folders 0700": "the folder layout",
  'docs/undo.md:{ "version": 1': "a manifest as written",
  "plugins/sandbox-bubblewrap/README.md:bwrap --ro-bind": "the bwrap command line, abridged",
  "plugins/sessions-jsonl/README.md:<data root>/sessions/": "the folder layout",
};

/** Markers of the blocks this file runs, or that another test file does. */
const RUN_HERE = [
  "README.md:OPENAI_BASE_URL=http://127.0.0.1:8080/v1",
  "README.md:larik -p --output json",
  'README.md:plugins: ["./examples/word-count-plugin.ts"]',
  "README.md:import { createHost }",
  "docs/server.md:import { createHost }",

  "docs/server.md:larik serve --addr 127.0.0.1:0",
  'docs/plugins.md:"larik-plugin-foo"',
  'docs/providers.md:"stall_timeout": 600',
  'docs/providers.md:"my-vllm"',
  'docs/providers.md:"fallbacks"',
  'docs/mcp.md:"mcp_servers"',
  'docs/hooks.md:"PreToolUse"',
  "docs/skills.md:name: release",
  "docs/skills.md:<skills>",
];
const RUN_ELSEWHERE = [
  "README.md:export default definePlugin", // examples.test.ts: quoted verbatim from examples/word-count-plugin.ts
  "docs/config.md:// ~/.config/larik/larik.config.ts", // config-files.test.ts
  "docs/config.md:// ~/.config/larik/word-count.ts", // config-files.test.ts
];

describe("doc examples", () => {
  it("every fenced block is run by a test or said to be a sample", () => {
    const known = [...Object.keys(NOT_RUNNABLE), ...RUN_HERE, ...RUN_ELSEWHERE];
    const unaccounted: string[] = [];
    for (const file of DOCS) {
      for (const b of blocks(file)) {
        const mine = known.filter((k) => k.startsWith(`${file}:`) && b.body.includes(k.slice(file.length + 1)));
        if (!mine.length) unaccounted.push(`${file}:${b.line}`);
      }
    }
    expect(unaccounted).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// shell examples: bash, with `larik` on PATH

/** A folder holding a `larik` that runs the built CLI, as `npm link` would put on PATH. */
function larikOnPath(): string {
  if (!existsSync(CLI)) throw new Error("dist/cli.cjs is missing: run npm run build first");
  const bin = mkdtempSync(join(tmpdir(), "larik-doc-bin-"));
  writeFileSync(join(bin, "larik"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  chmodSync(join(bin, "larik"), 0o755);
  return bin;
}

interface ShellRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` with bash in `cwd`, stdin closed. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<ShellRun> {
  return new Promise((done) => {
    const child = spawn("bash", ["-c", script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

function tempHome(): { home: string; env: NodeJS.ProcessEnv } {
  const home = mkdtempSync(join(tmpdir(), "larik-doc-home-"));
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, "data"), XDG_CACHE_HOME: join(home, "cache"), NO_COLOR: "1" };
  return { home, env };
}

function git(dir: string, ...args: string[]) {
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: dir, stdio: "ignore" });
}

/** The README's example project: a git repo whose test/sum.test.js fails. */
function sumRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), "larik-doc-repo-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "sum", type: "module", scripts: { test: "node test/sum.test.js" } }));
  writeFileSync(join(dir, "sum.js"), "export function sum(a, b) {\n  return a - b;\n}\n");
  mkdirSync(join(dir, "test"));
  writeFileSync(join(dir, "test", "sum.test.js"), 'import assert from "node:assert/strict";\nimport { sum } from "../sum.js";\nassert.equal(sum(2, 3), 5);\nconsole.log("sum test ok");\n');
  git(dir, "init", "-q");
  git(dir, "add", ".");
  git(dir, "commit", "-qm", "init");
  return dir;
}

describe("README.md shell examples", () => {
  let server: MockModelServer;
  let bin: string;
  beforeAll(async () => {
    server = await startMockModelServer();
    bin = larikOnPath();
  });
  afterAll(() => server?.close());

  it("the set-up's run line fixes the failing test", async () => {
    const line = block("README.md", "OPENAI_BASE_URL=").body.split("\n").find((l) => l.includes("larik "))!;
    expect(line).toContain("OPENAI_BASE_URL=http://127.0.0.1:8080/v1");
    const repo = sumRepo();
    const { env } = tempHome();
    server.requests.length = 0;
    server.push(
      { tools: [{ id: "c1", name: "bash", input: { command: "node test/sum.test.js" } }] },
      { tools: [{ id: "c2", name: "read", input: { path: "sum.js" } }] },
      { tools: [{ id: "c3", name: "edit", input: { path: "sum.js", old_string: "a - b", new_string: "a + b" } }] },
      { tools: [{ id: "c4", name: "bash", input: { command: "node test/sum.test.js" } }] },
      { text: "Fixed: sum subtracted." },
    );
    // the example's server is on port 8080; this one's port is the free one it got
    const r = await bash(line.replace("http://127.0.0.1:8080/v1", `${server.url}/v1`), repo, { ...env, PATH: `${bin}:${process.env.PATH}` });
    expect(r.stderr).not.toMatch(/^(larik: |error: )/m);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Fixed: sum subtracted.");
    expect(readFileSync(join(repo, "sum.js"), "utf8")).toContain("a + b");
    expect(execFileSync("node", ["test/sum.test.js"], { cwd: repo, encoding: "utf8" })).toContain("sum test ok");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer ..."); // the key as the example gives it
    expect(server.requests[0]!.body.model).toBe("some-model");
  });

  it("each line of 'Using it' does what its comment says", async () => {
    const lines = block("README.md", "larik -p --output json").body.trim().split("\n");
    const repo = sumRepo();
    const { env: base } = tempHome();
    // no --model on these lines: the default is the first provider with a key (anthropic)
    const env = { ...base, PATH: `${bin}:${process.env.PATH}`, ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url };
    const prompts = () => server.requests.map((r) => JSON.stringify(r.body.messages));
    const handled: string[] = [];
    const run = async (line: string) => {
      handled.push(line);
      const r = await bash(line, repo, env);
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      return r;
    };
    const find = (re: RegExp) => {
      const l = lines.find((x) => re.test(x));
      expect(l, `a line matching ${re}`).toBeDefined();
      return l!;
    };
    server.requests.length = 0;

    // the terminal UI needs a terminal: its own tests drive it (plugins/tui; e2e.test.tsx starts
    // one with a prompt on the command line)
    handled.push(find(/^larik +# terminal UI/), find(/^larik "fix the failing test" +# terminal UI, starting with that prompt/));

    server.push({ text: "main.ts starts the app." });
    const explained = await run(find(/^larik -p "explain/));
    expect(explained.stdout).toContain("main.ts starts the app.");

    server.push({ text: "all tests pass" });
    await run(find(/--output json/));
    const events = readFileSync(join(repo, "events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(events.find((e) => e.type === "assistant_message").message.blocks).toEqual([{ type: "text", text: "all tests pass" }]);
    expect(events.filter((e) => /_delta$/.test(e.type))).toEqual([]); // the flag table: deltas left out

    server.push({ text: "It is a README." });
    const piped = await run(find(/^echo .* \| larik -p/));
    expect(piped.stdout).toContain("It is a README.");
    expect(prompts().at(-1)).toContain("summarize the README");

    server.push({ text: "added" });
    await run(find(/^larik -c -p/));
    // continued: the piped prompt's session, with the new prompt after it
    expect(prompts().at(-1)).toMatch(/summarize the README.*It is a README\..*now add a test for it/);

    writeFileSync(join(repo, "log.txt"), "TypeError: x is undefined\n");
    server.push({ text: "x was never set." });
    const appended = await run(find(/^cat log\.txt \| larik -p "/));
    expect(appended.stdout).toContain("x was never set.");
    expect(prompts().at(-1)).toContain(JSON.stringify("explain this\n\nTypeError: x is undefined"));

    const listed = await run(find(/^larik --sessions/));
    const rows = listed.stdout.trim().split("\n");
    for (const row of rows) expect(row).toMatch(/^\d{8}-\d{6}-[0-9a-f]{6}  \d{4}-\d\d-\d\d \d\d:\d\d  \S/);
    expect(rows.map((r) => r.split("  ")[2])).toEqual(expect.arrayContaining(["explain src/main.ts", "run the tests", "summarize the README"]));

    // the README's id is a placeholder: resume the first session by a prefix of its id
    const first = rows.find((r) => r.endsWith("explain src/main.ts"))!.split("  ")[0]!;
    const resume = find(/^larik --resume /);
    expect(resume).toMatch(/--resume 20261130-1122 /);
    server.push({ text: "resumed" });
    await run(resume.replace("20261130-1122", first.slice(0, -2)));
    expect(prompts().at(-1)).toMatch(/explain src\/main\.ts.*main\.ts starts the app\..*"\.\.\."/);

    // the server: on a free port instead of 4096, asked for its health, then stopped
    const serve = find(/^larik serve --addr /);
    handled.push(serve);
    const child = spawn("bash", ["-c", `exec ${serve.replace(/127\.0\.0\.1:\d+/, "127.0.0.1:0").replace(/\s+#.*$/, "")}`], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
    const first_line = await new Promise<string>((done) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        if (out.includes("\n")) done(out.split("\n")[0]!);
      });
    });
    const { url, token } = JSON.parse(first_line) as { url: string; token: string };
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    expect((await fetch(`${url}/v1/health`)).status).toBe(200);
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    child.kill("SIGTERM");
    expect(await exited).not.toBeNull();

    expect(lines.filter((l) => !handled.includes(l) && !handled.includes(l.replace("20261130-1122", first.slice(0, -2))))).toEqual([]);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// TypeScript examples: node, with `larik` resolving to this package

/** Runs `node <args>` in `cwd`; resolves when it exits (killed after `ms`). */
function node(args: string[], cwd: string, env: NodeJS.ProcessEnv, ms = 30_000): Promise<ShellRun> {
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** A project whose `node_modules/larik` is this package, as `npm install larik` would make it. */
function projectWithLarik(): string {
  const dir = sumRepo();
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(root, join(dir, "node_modules", "larik"), "dir");
  return dir;
}

describe("embedding examples", () => {
  let server: MockModelServer;
  beforeAll(async () => {
    if (!existsSync(join(root, "dist", "index.js"))) throw new Error("dist/index.js is missing: run npm run build first");
    server = await startMockModelServer();
  });
  afterAll(() => server?.close());

  const modelEnv = (home: NodeJS.ProcessEnv) => ({ ...home, PATH: process.env.PATH, ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url });

  it("README.md: createHost, openAgent, run", async () => {
    const dir = projectWithLarik();
    writeFileSync(join(dir, "embed.mjs"), block("README.md", "import { createHost }").body);
    server.requests.length = 0;
    server.push({ tools: [{ id: "t1", name: "glob", input: { pattern: "**/*.js" } }] }, { text: "sum.js and a test" });
    const r = await node(["embed.mjs"], dir, modelEnv(tempHome().env));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const types = r.stdout.trim().split("\n");
    expect(types).toEqual(expect.arrayContaining(["assistant_message", "tool_start", "tool_end", "usage"]));
    expect(types.at(-1)).toBe("done");
    expect(server.requests[0]!.body.model).toBe("claude-sonnet-4-5");
    expect(JSON.stringify(server.requests[0]!.body.messages)).toContain("list the files");
  });

  it("docs/server.md: the same in plan mode, printing the text", async () => {
    const dir = projectWithLarik();
    const code = block("docs/server.md", "import { createHost }").body;
    expect(code).toContain('cwd: "/path/to/project"');
    writeFileSync(join(dir, "embed.mjs"), code.replace('"/path/to/project"', JSON.stringify(dir)));
    server.requests.length = 0;
    server.push({ tools: [{ id: "t1", name: "write", input: { path: "x.txt", content: "no" } }] }, { text: "I may only read here." });
    const r = await node(["embed.mjs"], dir, modelEnv(tempHome().env));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("I may only read here.");
    expect(existsSync(join(dir, "x.txt"))).toBe(false); // plan mode refused the write without asking
  });

  // jiti compiles the TypeScript sources it imports first (~10-25 s here; cached after)
  it("examples/embed.ts runs as its comment says", { timeout: 90_000 }, async () => {
    const how = /^\/\/ +(LARIK_MODEL=(\S+) npx jiti examples\/embed\.ts "([^"]+)")$/m.exec(readFileSync(join(root, "examples", "embed.ts"), "utf8"));
    expect(how, "the run line in examples/embed.ts").not.toBeNull();
    const dir = sumRepo();
    server.requests.length = 0;
    server.push({ text: "sum.js, test/sum.test.js" });
    const jiti = join(root, "node_modules", "jiti", "lib", "jiti-cli.mjs");
    const r = await node([jiti, join(root, "examples", "embed.ts"), how![3]!], dir, { ...modelEnv(tempHome().env), LARIK_MODEL: how![2]! });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("sum.js, test/sum.test.js");
    expect(r.stderr).toMatch(/^session \S+ \(anthropic\/claude-sonnet-4-5\) at /);
    expect(r.stderr).toContain("[end_turn]");
    expect(JSON.stringify(server.requests[0]!.body.messages)).toContain(how![3]!);
  });
});

// ---------------------------------------------------------------------------------------------
// config examples: the loader, as the CLI runs it

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

describe("larik.config.ts examples", () => {
  it("README.md: a project config adding examples/word-count-plugin.ts loads once approved", async () => {
    const { env } = tempHome();
    const project = sumRepo();
    write(join(project, "examples", "word-count-plugin.ts"), readFileSync(join(root, "examples", "word-count-plugin.ts"), "utf8"));
    write(join(project, "larik.config.ts"), block("README.md", 'plugins: ["./examples/word-count-plugin.ts"]').body);
    expect((await loadConfig(project, env)).plugins).toEqual([]); // not approved yet
    await approveProjectConfig(project, env);
    const cfg = await loadConfig(project, env);
    expect(cfg.notices).toEqual([]);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["word-count"]);
  });

  it("docs/plugins.md: a module path and a package name added, a preset plugin disabled", async () => {
    const { env } = tempHome();
    const project = sumRepo();
    write(join(project, "larik.config.ts"), block("docs/plugins.md", '"larik-plugin-foo"').body);
    write(join(project, "my-plugin.ts"), 'import { definePlugin } from "larik";\nexport default definePlugin({ name: "mine", setup() {} });\n');
    write(join(project, "node_modules", "larik-plugin-foo", "package.json"), JSON.stringify({ name: "larik-plugin-foo", type: "module", main: "index.js" }));
    write(join(project, "node_modules", "larik-plugin-foo", "index.js"), 'export default { name: "foo", setup() {} };\n');
    await approveProjectConfig(project, env);
    const cfg = await loadConfig(project, env);
    expect(cfg.notices).toEqual([]);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["mine", "foo"]);
    expect(cfg.disable).toEqual(["mcp"]);
    const host = await Host.create({ plugins: [...preset, ...cfg.plugins], disable: cfg.disable, cwd: project, settings: { ...cfg.settings, sandbox: { enabled: false } }, env });
    try {
      expect(host.notices).toEqual([]);
      expect(host.plugins).toContain("mine");
      expect(host.plugins).toContain("foo");
      expect(host.plugins).not.toContain("mcp");
    } finally {
      await host.dispose();
    }
  });
});

/** Loads `json` as the personal config.json; returns what the loader made of it. */
async function personal(json: string) {
  const { home, env } = tempHome();
  write(join(home, ".config", "larik", "config.json"), json);
  const project = sumRepo();
  return { cfg: await loadConfig(project, env), env, project };
}

describe("settings JSON examples", () => {
  it("docs/providers.md: adjusting built-in providers", async () => {
    const { cfg, env, project } = await personal(block("docs/providers.md", '"stall_timeout": 600').body);
    expect(cfg.notices).toEqual([]);
    const host = await Host.create({ plugins: preset, cwd: project, settings: { ...cfg.settings, sandbox: { enabled: false } }, env: { ...env, ANTHROPIC_API_KEY: "k" } });
    try {
      const anthropic = resolveModel("anthropic/claude-sonnet-4-5", host.providers, host.settings, host.env);
      expect(anthropic.config).toMatchObject({ base_url: "https://my-gateway.example/anthropic", stall_timeout: 600 });
      expect(resolveModel("lmstudio/qwen", host.providers, host.settings, host.env).config.base_url).toBe("http://192.168.1.20:1234/v1");
    } finally {
      await host.dispose();
    }
  });

  it("docs/providers.md: custom providers, usable as the specs the text names", async () => {
    const { cfg, env, project } = await personal(block("docs/providers.md", '"my-vllm"').body);
    expect(cfg.notices).toEqual([]);
    const host = await Host.create({ plugins: preset, cwd: project, settings: { ...cfg.settings, sandbox: { enabled: false } }, env: { ...env, MY_VLLM_KEY: "v", CORP_KEY: "c" } });
    try {
      const vllm = resolveModel("my-vllm/qwen/qwen3-coder", host.providers, host.settings, host.env);
      expect(vllm).toMatchObject({ provider: "my-vllm", model: "qwen/qwen3-coder" });
      expect(vllm.config).toMatchObject({ base_url: "http://gpu-box:8000/v1", api_key: "v", stall_timeout: 900, headers: { "X-Team": "infra" } });
      const corp = resolveModel("corp-claude/claude-opus-5", host.providers, host.settings, host.env);
      expect(corp).toMatchObject({ provider: "corp-claude", model: "claude-opus-5" });
      expect(corp.config).toMatchObject({ base_url: "https://llm-proxy.corp/anthropic", api_key: "c" });
      expect(corp.factory.name).toBe("anthropic");
    } finally {
      await host.dispose();
    }
  });

  it("docs/providers.md: roles and fallbacks", async () => {
    const { cfg, env, project } = await personal(block("docs/providers.md", '"fallbacks"').body);
    expect(cfg.notices).toEqual([]);
    // looked up by the name written (a role), then by the resolved provider/model
    expect(fallbackSpecs(cfg.settings, "smart", "anthropic/claude-opus-5")).toEqual(["openai/gpt-5.5", "gemini/gemini-2.5-pro"]);
    expect(fallbackSpecs(cfg.settings, "claude-sonnet-5", "anthropic/claude-sonnet-5")).toEqual(["openrouter/anthropic/claude-sonnet-5"]);
    const host = await Host.create({ plugins: preset, cwd: project, settings: { ...cfg.settings, sandbox: { enabled: false } }, env: { ...env, ANTHROPIC_API_KEY: "k" } });
    try {
      expect(resolveModel("smart", host.providers, host.settings, host.env)).toMatchObject({ provider: "anthropic", model: "claude-opus-5" });
    } finally {
      await host.dispose();
    }
  });

  it("docs/mcp.md: the three kinds of server validate", async () => {
    const { cfg } = await personal(block("docs/mcp.md", '"mcp_servers"').body);
    expect(cfg.notices).toEqual([]);
    expect(Object.keys(cfg.settings.mcp_servers as object)).toEqual(["files", "github", "legacy"]);
  });

  it("docs/hooks.md: the hooks load with no complaint", async () => {
    const { cfg, env, project } = await personal(block("docs/hooks.md", '"PreToolUse"').body);
    expect(cfg.notices).toEqual([]);
    const host = await Host.create({ plugins: preset, cwd: project, settings: { ...cfg.settings, sandbox: { enabled: false } }, env });
    try {
      expect(host.notices).toEqual([]);
    } finally {
      await host.dispose();
    }
  });
});

describe("docs/skills.md examples", () => {
  it("the SKILL.md example becomes /release and an index line like the one shown", async () => {
    const { env } = tempHome();
    const project = sumRepo();
    write(join(project, ".larik", "skills", "release", "SKILL.md"), block("docs/skills.md", "name: release").body);
    const host = await Host.create({ plugins: preset, cwd: project, settings: { sandbox: { enabled: false } }, env });
    try {
      expect(host.notices).toEqual([]);
      const cmd = host.commands.get("release")!;
      expect(cmd).toBeDefined();
      expect(cmd.args).toBe("[version]");
      const agent = await host.openAgent({ model: "anthropic/x", provider: { name: "none", stream: () => { throw new Error("not asked"); } } });
      const out = (await cmd.run({ host, agent, args: "1.4.0", print: () => {} })) as { prompt: string };
      expect(out.prompt).toContain("Release version 1.4.0. Read CHANGELOG.md first");

      // the index section as the doc shows it; its "..." stands for the rest of a line
      const prompt = (await buildSystemPrompt(host)).split("\n");
      for (const line of block("docs/skills.md", "<skills>").body.trim().split("\n")) {
        const shown = line.replace(/ \.\.\.$/, "");
        expect(prompt.some((p) => (shown === line ? p === line : p.startsWith(shown))), line).toBe(true);
      }
    } finally {
      await host.dispose();
    }
  });
});

describe("docs/server.md curl session", () => {
  let server: MockModelServer;
  let bin: string;
  beforeAll(async () => {
    server = await startMockModelServer();
    bin = larikOnPath();
  });
  afterAll(() => server?.close());

  const has = (cmd: string) => {
    try {
      execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };

  // the transcript is curl and jq at a prompt; a machine without them cannot run it
  it.skipIf(!has("curl") || !has("jq"))("runs as shown, a person's pauses made waits", { timeout: 60_000 }, async () => {
    const lines = block("docs/server.md", "larik serve --addr 127.0.0.1:0").body.trimEnd().split("\n");
    const steps: { cmd: string; out: string[] }[] = [];
    for (const l of lines) {
      if (l.startsWith("$ ")) steps.push({ cmd: l.slice(2), out: [] });
      else steps.at(-1)!.out.push(l);
    }
    // what a person does between the commands without thinking about it: wait for the server's
    // line, for the model to ask, for the first turn to end
    const waitFor = (cond: string) => `for i in $(seq 100); do ${cond} && break; sleep 0.1; done`;
    const pauses: Record<number, string> = {
      0: waitFor("[ -s serve.json ]"),
      4: waitFor(`[ "$(curl -s -H "$H" $URL/v1/sessions/$ID/permissions | jq '.permissions | length')" = 1 ]`),
      6: waitFor(`[ "$(curl -s -H "$H" $URL/v1/sessions/$ID | jq .busy)" = false ]`),
    };
    // the watcher's stream goes to a file rather than into the other commands' output, and each
    // output ends its line as the next prompt would
    const run = (cmd: string) => {
      const watch = /^(.*\/events"?)\s*&\s*(#.*)?$/.exec(cmd);
      // a person starts the watcher and looks at it before going on: the prompt must not race it
      return watch ? `${watch[1]} > watch.log &\n${waitFor("grep -q '^: connected' watch.log 2>/dev/null")}` : `${cmd}\necho`;
    };
    const script = steps.map((s, i) => `echo "@@ ${i}"\n${run(s.cmd)}\n${pauses[i] ?? ""}`).join("\n") + '\necho "@@ end"\nkill $(jobs -p) 2>/dev/null; wait\n';

    const repo = sumRepo();
    const { env } = tempHome();
    server.requests.length = 0;
    server.push({ tools: [{ id: "w1", name: "write", input: { path: "test/sum2.test.js", content: "// more\n" } }] }, { text: "added" }, { text: "it passes" });
    const r = await bash(script, repo, { ...env, PATH: `${bin}:${process.env.PATH}`, ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url });
    expect(r.code, r.stderr).toBe(0);

    const outputs = r.stdout.split(/^@@ \S+\n/m).slice(1).map((o) => o.split("\n").filter((l) => l !== ""));
    // the last command's output is the final answer, which the transcript leaves out
    expect(outputs[steps.length - 1]).toEqual(["it passes"]);
    steps.slice(0, -1).forEach((s, i) => expect(outputs[i], `output of $ ${s.cmd}`).toEqual(s.out));
    const watched = readFileSync(join(repo, "watch.log"), "utf8");
    expect(watched).toMatch(/^event: permission_request\n/m); // the watcher saw the turn
    expect(watched).toMatch(/^data: \{"type":"done","stop_reason":"end_turn"/m);
    expect(readFileSync(join(repo, "test", "sum2.test.js"), "utf8")).toBe("// more\n");
  });
});

describe("README.md flag table", () => {
  const help = () => {
    const { env } = tempHome();
    return execFileSync(process.execPath, [CLI, "--help"], { cwd: mkdtempSync(join(tmpdir(), "larik-doc-help-")), env: { ...env, PATH: process.env.PATH }, encoding: "utf8" });
  };
  /** The flags a `--help` section lists: `-c, --continue` gives both. */
  const section = (text: string, title: string) => {
    const start = text.indexOf(`\n${title}\n`);
    expect(start, `"${title}" in --help`).toBeGreaterThanOrEqual(0);
    const body = text.slice(start + title.length + 2).split("\n\n")[0]!;
    return [...body.matchAll(/^\s+(?:(-\w), )?(--[\w-]+)/gm)].flatMap((m) => (m[1] ? [m[1], m[2]!] : [m[2]!]));
  };

  it("lists exactly the flags --help lists, and names the serve flags", () => {
    const text = help();
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const start = readme.indexOf("| flag | meaning |");
    const rows = readme.slice(start).split("\n\n")[0]!.split("\n").slice(2);
    const documented = rows.flatMap((r) => [...r.split("|")[1]!.matchAll(/`(--?[\w-]+)/g)].map((m) => m[1]!));
    expect(documented.sort()).toEqual(section(text, "flags:").sort());
    for (const flag of section(text, "larik serve flags:")) {
      expect(readme, `README names ${flag}`).toContain(`\`${flag}\``);
      expect(readFileSync(join(root, "docs", "server.md"), "utf8"), `docs/server.md documents ${flag}`).toMatch(new RegExp(`^\\| \`${flag}[ \`]`, "m"));
    }
  });
});
