/**
 * End to end: the built CLI (`dist/cli.cjs`) as a subprocess against a local server speaking the
 * provider's wire format, in a temp git repo with a failing test. The scripted model runs the
 * test, searches, reads, edits and reruns it; then `-c` resumes the session.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { appendFileSync, closeSync, constants as fsConstants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startMockModelServer, type MockModelServer, type MockReply } from "./fakes/mock-model-server.js";
import { CLI, runCli } from "./fakes/run-cli.js";
import { startConnectProxy } from "./fakes/connect-proxy.js";
import { EVERYTHING } from "./fixtures/mcp/harness.js";

const root = resolve(import.meta.dirname, "..");

function makeRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), "larik-e2e-repo-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "sum", type: "module", scripts: { test: "node test/sum.test.js" } }, null, 2));
  writeFileSync(join(dir, "sum.js"), "export function sum(a, b) {\n  return a - b;\n}\n");
  mkdirSync(join(dir, "test"));
  writeFileSync(
    join(dir, "test", "sum.test.js"),
    'import assert from "node:assert/strict";\nimport { sum } from "../sum.js";\nassert.equal(sum(2, 3), 5);\nconsole.log("sum test ok");\n',
  );
  const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, stdio: "ignore" });
  git("init", "-q");
  git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init");
  return dir;
}

function baseEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    NO_COLOR: "1",
  };
}

const FIX_SCRIPT: MockReply[] = [
  { text: "Let me run the test first.", tools: [{ id: "call_1", name: "bash", input: { command: "node test/sum.test.js" } }] },
  { tools: [{ id: "call_2", name: "grep", input: { pattern: "function sum" } }] },
  { tools: [{ id: "call_3", name: "read", input: { path: "sum.js" } }] },
  { tools: [{ id: "call_4", name: "edit", input: { path: "sum.js", old_string: "return a - b;", new_string: "return a + b;" } }] },
  { tools: [{ id: "call_5", name: "bash", input: { command: "node test/sum.test.js" } }] },
  { text: "Fixed sum.js: it subtracted instead of adding. The test passes now." },
];

describe("larik -p end to end", () => {
  let server: MockModelServer;
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error("dist/cli.cjs is missing: run npm run build first");
    server = await startMockModelServer();
  });
  afterAll(() => server?.close());

  it("fixes a failing test through openai-compatible, prints JSON events, and resumes with -c", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "test-key" };
    server.requests.length = 0;
    server.push(...FIX_SCRIPT);
    const r = await runCli(
      ["-p", "--mode", "yolo", "--model", "openai-compatible/some-model", "--output", "json", "the test in test/sum.test.js fails; fix it"],
      { cwd: repo, env },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    const starts = events.filter((e) => e.type === "tool_start").map((e) => e.tool_name);
    expect(starts).toEqual(["bash", "grep", "read", "edit", "bash"]);
    const ends = events.filter((e) => e.type === "tool_end");
    expect(ends[0].is_error || /AssertionError|exit code 1/i.test(ends[0].output)).toBeTruthy();
    expect(ends[4].output).toContain("sum test ok");
    const final = events.filter((e) => e.type === "assistant_message").at(-1);
    expect(final.message.blocks[0].text).toContain("The test passes now");
    expect(events.some((e) => e.type === "usage")).toBe(true);

    // the repository really changed and its test passes
    expect(readFileSync(join(repo, "sum.js"), "utf8")).toBe("export function sum(a, b) {\n  return a + b;\n}\n");
    expect(execFileSync(process.execPath, ["test/sum.test.js"], { cwd: repo, encoding: "utf8" })).toContain("sum test ok");

    // what went over the wire: key, model, tools, the tool results of the previous round
    expect(server.requests).toHaveLength(6);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer test-key");
    expect(server.requests[0]!.body.model).toBe("some-model");
    const toolNames = server.requests[0]!.body.tools.map((t: any) => t.function.name);
    for (const t of ["bash", "edit", "glob", "grep", "read", "write"]) expect(toolNames).toContain(t);
    const fifth = server.requests[4]!.body.messages;
    expect(fifth.find((m: any) => m.role === "tool" && m.tool_call_id === "call_4")).toBeTruthy();

    // the session is on disk
    const sessionsRoot = join(home, ".local", "share", "larik", "sessions");
    const [projectDir] = readdirSync(sessionsRoot);
    const files = readdirSync(join(sessionsRoot, projectDir!)).filter((f) => f.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    const lines = readFileSync(join(sessionsRoot, projectDir!, files[0]!), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0].type).toBe("meta");
    expect(lines.filter((l) => l.type === "message")).toHaveLength(12);
    expect(events.at(-1).session_id).toBe(files[0]!.replace(/\.jsonl$/, ""));

    // resume with -c: the earlier conversation is sent again, the answer printed as text
    server.push({ text: "I changed `a - b` to `a + b` in sum.js." });
    const r2 = await runCli(["-c", "-p", "what did you change?"], { cwd: repo, env });
    expect(r2.code).toBe(0);
    expect(r2.stdout).toBe("I changed `a - b` to `a + b` in sum.js.\n");
    const resumed = server.requests.at(-1)!.body.messages;
    const firstUser = resumed.find((m: any) => m.role === "user");
    expect(JSON.stringify(firstUser)).toContain("the test in test/sum.test.js fails; fix it");
    expect(JSON.stringify(resumed.at(-1))).toContain("what did you change?");
    expect(server.requests.at(-1)!.body.model).toBe("some-model");

    // a slash command's output is the answer, on stdout; with --output json it ends with done
    const cost = await runCli(["-c", "-p", "/cost"], { cwd: repo, env });
    expect([cost.code, cost.stderr]).toEqual([0, ""]);
    expect(cost.stdout).toMatch(/some-model/);
    const costJson = await runCli(["-c", "-p", "--output", "json", "/cost"], { cwd: repo, env });
    const costEvents = costJson.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(costEvents.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    // init first, naming the session -c continued
    expect(costEvents[0]).toMatchObject({ type: "init", session_id: events.at(-1).session_id });
    expect(costEvents.slice(1, -1).every((e) => e.type === "notice")).toBe(true);
    const sent = server.requests.length;
    const typo = await runCli(["-c", "-p", "/cots"], { cwd: repo, env });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe("larik: unknown command /cots (did you mean /cost?): larik --help lists them; to send the text to the model as it is, start it with a space\n");
    expect(server.requests.length).toBe(sent);
    server.push({ text: "It is not full." });
    const spaced = await runCli(["-c", "-p", " /etc is full"], { cwd: repo, env });
    expect(spaced.code).toBe(0);
    expect(JSON.stringify(server.requests.at(-1)!.body.messages.at(-1))).toContain("/etc is full");

    // a branch, then the list: newest first, the branch marked as /sessions marks it
    server.push({ text: "Branched." });
    const r3 = await runCli(["-c", "--fork", "-p", "try another way"], { cwd: repo, env });
    expect(r3.code).toBe(0);
    const list = await runCli(["--sessions"], { cwd: repo, env });
    const rows = list.stdout.trim().split("\n");
    const row = (mark: string) => new RegExp(`^\\d{8}-\\d{6}-[0-9a-f]{6}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  ${mark}the test in test/sum\\.test\\.js fails; fix it$`);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(row("⑂ "));
    expect(rows[1]).toMatch(row(""));
    // for scripts: one object per line, the same order
    const json = await runCli(["--sessions", "--output", "json"], { cwd: repo, env });
    expect(json.code).toBe(0);
    const objs = json.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(objs.map((o) => o.id)).toEqual(rows.map((r) => r.slice(0, 22)));
    expect(objs[0]).toEqual({ id: objs[0].id, updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), title: "the test in test/sum.test.js fails; fix it", fork_of: objs[1].id });
    expect(objs[1].fork_of).toBeUndefined();
    const bad = await runCli(["--sessions", "--output", "yaml"], { cwd: repo, env });
    expect([bad.code, bad.stderr]).toEqual([2, 'larik: --output must be text or json (got "yaml")\n']);
    // from a subfolder, which has none of its own, the list points at the project root's
    const sub = await runCli(["--sessions"], { cwd: join(repo, "test"), env });
    expect(sub.stdout).toBe(`no sessions in ${realpathSync(join(repo, "test"))} (the project root ${realpathSync(repo)} has some: run larik --sessions there)\n`);
  });

  it("does the same task through the anthropic provider with text output", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-ant-test" };
    server.requests.length = 0;
    server.push(...FIX_SCRIPT);
    const r = await runCli(["-p", "--mode", "yolo", "--model", "anthropic/claude-sonnet-4-5", "the test in test/sum.test.js fails; fix it"], { cwd: repo, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("The test passes now.");
    expect(r.stderr).toContain("→ bash node test/sum.test.js");
    expect(r.stderr).toContain("→ edit sum.js");
    expect(readFileSync(join(repo, "sum.js"), "utf8")).toContain("a + b");
    expect(server.requests[0]!.path).toBe("/v1/messages");
    expect(server.requests[0]!.headers["x-api-key"]).toBe("sk-ant-test");
  });

  it("auto-denies permission requests in default mode and says how to allow them", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.requests.length = 0;
    // a write asks in default mode (bash would run unasked inside the sandbox)
    server.push({ tools: [{ id: "c1", name: "write", input: { path: "notes.txt", content: "x" } }] }, { text: "I could not write it." });
    const r = await runCli(["-p", "--model", "openai-compatible/m", "write a note"], { cwd: repo, env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('✗ write notes.txt: headless mode cannot ask for permission: rerun with --mode accept-edits or --mode yolo, or an allow rule such as "write" in permissions.allow\n');
    expect(existsSync(join(repo, "notes.txt"))).toBe(false);
    expect(r.stderr).not.toContain("→ write"); // a denied call is not shown as if it ran
    const result = server.requests[1]!.body.messages.find((m: any) => m.role === "tool").content;
    expect(result).toMatch(/^permission denied: headless mode cannot ask/); // no person was asked
    const toolMsg = server.requests[1]!.body.messages.find((m: any) => m.role === "tool");
    expect(toolMsg.content).toMatch(/--mode accept-edits or --mode yolo/);
  });

  it("shows the calls of one reply in their order when a later one is denied while an earlier one runs", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    // read and grep run (together: both read-only); the write between them asks, so is denied
    const calls = [
      { id: "c1", name: "read", input: { path: "sum.js" } },
      { id: "c2", name: "write", input: { path: "notes.txt", content: "x" } },
      { id: "c3", name: "grep", input: { pattern: "sum" } },
    ];
    server.push({ tools: calls }, { text: "Read, not written." });
    const r = await runCli(["-p", "--model", "openai-compatible/m", "read and write"], { cwd: repo, env });
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n").filter(Boolean).map((l) => l.slice(0, 20))).toEqual(["→ read sum.js", "✗ write notes.txt: h", "→ grep sum"]);
    // the events of --output json keep that order too: each call's tool_start, then the next call's
    server.push({ tools: calls.slice(0, 2) }, { text: "Read, not written." });
    const j = await runCli(["-p", "--output", "json", "--model", "openai-compatible/m", "read and write"], { cwd: repo, env });
    const events = j.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const starts = events.filter((e) => e.type === "tool_start").map((e) => e.tool_id);
    expect(starts).toEqual(["c1", "c2"]);
    expect(events.find((e) => e.type === "tool_end" && e.tool_id === "c2").output).toMatch(/^permission denied: headless mode/);
  });

  it("shows each call's most telling argument on its stderr line: grep's pattern, glob's pattern, write_files' paths", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const long = "y".repeat(500);
    server.push(
      { tools: [{ id: "c1", name: "grep", input: { pattern: "return a", path: "sum.js" } }] },
      { tools: [{ id: "c2", name: "grep", input: { pattern: "assert", path: "test", glob: "*.js" } }] },
      { tools: [{ id: "c3", name: "glob", input: { pattern: "**/*.js" } }] },
      { tools: [{ id: "c4", name: "write_files", input: { files: [{ path: "a.txt", content: "a\n" }, { path: "b.txt", content: long }] } }] },
      { tools: [{ id: "c5", name: "grep", input: { pattern: long } }] },
      { text: "done" },
    );
    const r = await runCli(["-p", "--mode", "yolo", "--model", "openai-compatible/m", "look around"], { cwd: repo, env });
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n").filter(Boolean)).toEqual([
      "→ grep return a in sum.js",
      "→ grep assert in test (*.js)",
      "→ glob **/*.js",
      "→ write_files a.txt, b.txt",
      `→ grep ${"y".repeat(119)}…`,
    ]);
    expect(readFileSync(join(repo, "b.txt"), "utf8")).toBe(long);
  });

  it("names only the modes that would allow a denied call: accept-edits does not run bash", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    // no sandbox, so bash asks (and so is denied) in default and accept-edits mode alike
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(join(home, ".config", "larik", "config.json"), JSON.stringify({ sandbox: { enabled: false } }));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    for (const mode of ["default", "accept-edits"]) {
      server.requests.length = 0;
      server.push({ tools: [{ id: "c1", name: "bash", input: { command: "touch made.txt" } }] }, { text: "I could not run it." });
      const r = await runCli(["-p", "--mode", mode, "--model", "openai-compatible/m", "make a file"], { cwd: repo, env });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('✗ bash touch made.txt: headless mode cannot ask for permission: rerun with --mode yolo, or an allow rule such as "bash(touch*)" in permissions.allow\n');
      expect(existsSync(join(repo, "made.txt"))).toBe(false);
      const result = server.requests[1]!.body.messages.find((m: any) => m.role === "tool").content;
      expect(result).toBe('permission denied: headless mode cannot ask for permission: rerun with --mode yolo, or an allow rule such as "bash(touch*)" in permissions.allow');
    }
  });

  it("runs an MCP server's prompt command (it is registered once the server has connected)", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(join(home, ".config", "larik", "config.json"), JSON.stringify({ mcp_servers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } } }));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.requests.length = 0;
    server.push({ text: "Understood." });
    const r = await runCli(["-p", "--model", "openai-compatible/m", "/mcp__everything__simple-prompt"], { cwd: repo, env });
    expect([r.code, r.stdout]).toEqual([0, "Understood.\n"]);
    expect(JSON.stringify(server.requests[0]!.body.messages.at(-1))).toContain("This is a simple prompt without arguments.");
    // a name no server offers is still a usage error, after the servers were waited for
    const missing = await runCli(["-p", "--model", "openai-compatible/m", "/mcp__everything__no-such-prompt"], { cwd: repo, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("larik: unknown command /mcp__everything__no-such-prompt");
    expect(server.requests).toHaveLength(1);
  }, 30_000);

  it("names accept-edits for a denied write only when it would allow it: not for a file above the working directory", async () => {
    const repo = makeRepo();
    const env = { ...baseEnv(mkdtempSync(join(tmpdir(), "larik-e2e-home-"))), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const result = async (path: string) => {
      server.requests.length = 0;
      server.push({ tools: [{ id: "c1", name: "write", input: { path, content: "notes\n" } }] }, { text: "Not written." });
      const r = await runCli(["-p", "--model", "openai-compatible/m", "write the notes"], { cwd: join(repo, "test"), env });
      expect(r.code).toBe(0);
      return server.requests[1]!.body.messages.find((m: any) => m.role === "tool").content as string;
    };
    // accept-edits allows writes inside the working directory (test/), so it is named there only
    expect(await result("notes.txt")).toMatch(/rerun with --mode accept-edits or --mode yolo, /);
    expect(await result("../notes.txt")).toMatch(/^permission denied: headless mode cannot ask for permission: rerun with --mode yolo, or an allow rule/);
    expect(existsSync(join(repo, "notes.txt"))).toBe(false);
  });

  it("sends its model requests through the proxy HTTP_PROXY names", async () => {
    const repo = makeRepo();
    // a name only the proxy resolves (a server on loopback is always asked directly)
    const proxy = await startConnectProxy({ "model.test": "127.0.0.1" });
    try {
      const base = `http://model.test:${new URL(server.url).port}`;
      const env = { ...baseEnv(mkdtempSync(join(tmpdir(), "larik-e2e-home-"))), OPENAI_BASE_URL: `${base}/v1`, OPENAI_API_KEY: "k", HTTP_PROXY: proxy.url };
      server.push({ text: "Through the proxy." });
      const r = await runCli(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env });
      expect([r.code, r.stdout, r.stderr]).toEqual([0, "Through the proxy.\n", ""]);
      expect(proxy.targets).toEqual([new URL(base).host]);
    } finally {
      await proxy.close();
    }
  });

  it("reads the prompt from piped stdin", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.requests.length = 0;
    server.push({ text: "piped ok" });
    const r = await runCli(["-p", "--model", "openai-compatible/m"], { cwd: repo, env, input: "hello from a pipe\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("piped ok\n");
    expect(JSON.stringify(server.requests[0]!.body.messages)).toContain("hello from a pipe");
  });

  it("attaches @ mentions to the prompt; a refused one is a notice on stderr (text) or a notice event (json)", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    writeFileSync(join(repo, "secret.txt"), "do not send\n");
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(join(home, ".config", "larik", "config.json"), JSON.stringify({ permissions: { deny: ["read(secret.txt)"] } }));
    server.requests.length = 0;
    server.push({ text: "explained" });
    const r = await runCli(["-p", "--model", "openai-compatible/m", "explain @sum.js#L2 and @secret.txt"], { cwd: repo, env });
    expect([r.code, r.stdout]).toEqual([0, "explained\n"]);
    expect(r.stderr).toMatch(/^! @secret\.txt not attached: .+\n$/);
    const user = JSON.stringify(server.requests[0]!.body.messages.filter((m: any) => m.role === "user"));
    expect(user).toContain("explain @sum.js#L2 and @secret.txt");
    expect(user).toContain('<file path=\\"sum.js\\" lines=\\"2-2\\">\\n     2\\t  return a - b;\\n</file>');
    expect(user).not.toContain("do not send");

    server.push({ text: "again" });
    const j = await runCli(["-p", "--output", "json", "--model", "openai-compatible/m", "explain @secret.txt"], { cwd: repo, env });
    expect([j.code, j.stderr]).toEqual([0, ""]);
    const events = j.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(events[0].type).toBe("init");
    expect(events[1]).toEqual({ type: "notice", text: expect.stringMatching(/^@secret\.txt not attached: /) });
  });

  it("an @ mention of a cut-short image is not attached but named in a notice; a whole one is sent", async () => {
    const repo = makeRepo();
    const env = { ...baseEnv(mkdtempSync(join(tmpdir(), "larik-e2e-home-"))), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const png = readFileSync(join(import.meta.dirname, "fixtures", "images", "python.png"));
    writeFileSync(join(repo, "cut.png"), png.subarray(0, 700));
    writeFileSync(join(repo, "ok.png"), png);
    server.requests.length = 0;
    server.push({ text: "one picture" });
    const r = await runCli(["-p", "--model", "openai-compatible/m", "compare @cut.png and @ok.png"], { cwd: repo, env });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "one picture\n", "! @cut.png not attached: it could not be read as an image: truncated PNG (the IDAT chunk runs past the end of the file)\n"]);
    const sent = JSON.stringify(server.requests[0]!.body.messages);
    expect(sent.split("data:image/png;base64,")).toHaveLength(2);
    expect(sent).toContain(`data:image/png;base64,${png.toString("base64")}"`);
  });

  it("the user (stderr) and the model (<system-note>) are told which mentions were not attached and why; a word that is no path is prose", async () => {
    const repo = makeRepo();
    const env = { ...baseEnv(mkdtempSync(join(tmpdir(), "larik-e2e-home-"))), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const png = readFileSync(join(import.meta.dirname, "fixtures", "images", "python.png"));
    writeFileSync(join(repo, "cut.png"), png.subarray(0, 700));
    server.requests.length = 0;
    server.push({ text: "noted" });
    const r = await runCli(["-p", "--model", "openai-compatible/m", "ask @alice about @cut.png and @docs/missing.md"], { cwd: repo, env });
    // the user hears of the refused image and of the path where there is nothing (a typo shows
    // in a headless run); `@alice` names no path and stays prose for both
    expect([r.code, r.stdout, r.stderr]).toEqual([
      0,
      "noted\n",
      "! @cut.png not attached: it could not be read as an image: truncated PNG (the IDAT chunk runs past the end of the file)\n" +
        "! @docs/missing.md not attached: there is no file or folder at docs/missing.md\n",
    ]);
    const user = server.requests[0]!.body.messages.filter((m: any) => m.role === "user").at(-1);
    const parts: string[] = typeof user.content === "string" ? [user.content] : user.content.map((p: any) => p.text ?? "");
    const notes = parts.join("\n").match(/<system-note>[^<]*<\/system-note>/g);
    expect(notes).toEqual([
      "<system-note>The user's mention @cut.png was not attached, so its content is not in this message: it could not be read as an image: truncated PNG (the IDAT chunk runs past the end of the file).</system-note>",
      "<system-note>The user's mention @docs/missing.md was not attached: there is no file or folder at docs/missing.md.</system-note>",
    ]);
    expect(parts.join("\n")).toContain("ask @alice about @cut.png and @docs/missing.md");
    expect(JSON.stringify(user)).not.toContain("image_url");
  });

  it("appends piped stdin to a prompt argument; /dev/null, a file and a pipe that never ends do not hang it", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const lastUser = () => server.requests.at(-1)!.body.messages.filter((m: any) => m.role === "user").at(-1).content;
    // `cat log.txt | larik -p "explain this"`: the argument, a blank line, the piped text
    server.push({ text: "ok" });
    const r = await runCli(["-p", "--model", "openai-compatible/m", "explain this"], { cwd: repo, env, input: "ERROR at line 3\n" });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, "ok\n", ""]);
    expect(lastUser()).toBe("explain this\n\nERROR at line 3");

    // `< log.txt`, and `< /dev/null` (nothing to read: no wait, no notice)
    writeFileSync(join(repo, "log.txt"), "from a file\n");
    for (const [from, expected] of [
      [join(repo, "log.txt"), "explain this\n\nfrom a file"],
      ["/dev/null", "explain this"],
    ]) {
      server.push({ text: "ok" });
      const code = await new Promise<number | null>((done) =>
        spawn(process.execPath, [CLI, "-p", "--model", "openai-compatible/m", "explain this"], { cwd: repo, env, stdio: [openSync(from!, "r"), "ignore", "ignore"] }).on("close", done),
      );
      expect([code, lastUser()]).toEqual([0, expected]);
    }

    // a pipe that stays open and silent (a script's inherited stdin): the run goes on without it
    server.push({ text: "went on" });
    const child = spawn(process.execPath, [CLI, "-p", "--model", "openai-compatible/m", "explain this"], { cwd: repo, env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (err += d));
    const code = await new Promise<number | null>((done) => child.on("close", done));
    expect([code, out]).toEqual([0, "went on\n"]);
    expect(err).toBe("! stdin: nothing arrived within 3 s, going on without it (redirect it, < /dev/null, to skip the wait)\n");
    expect(lastUser()).toBe("explain this");
    child.stdin!.destroy();
  });

  it("/undo in one -p run reaches the model at the next -c, once", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const m = ["--model", "openai-compatible/m"];
    server.requests.length = 0;
    server.push(...FIX_SCRIPT.slice(2, 4), { text: "Fixed." });
    expect((await runCli(["-p", "--mode", "yolo", ...m, "fix sum.js"], { cwd: repo, env })).code).toBe(0);
    expect(readFileSync(join(repo, "sum.js"), "utf8")).toContain("a + b");
    const undo = await runCli(["-c", "-p", "/undo"], { cwd: repo, env });
    expect([undo.code, undo.stdout]).toEqual([0, "reverted 1 file:\n  sum.js\n"]);
    expect(readFileSync(join(repo, "sum.js"), "utf8")).toContain("a - b");
    const lastUser = () => JSON.stringify(server.requests.at(-1)!.body.messages.at(-1));
    server.push({ text: "I will read it again." }, { text: "ok" });
    expect((await runCli(["-c", "-p", "is sum.js fixed?"], { cwd: repo, env })).code).toBe(0);
    expect(lastUser()).toMatch(/<system-note>The user ran \/undo: .*These files are back to their earlier content \(or removed if they were new\): sum\.js\..*is sum\.js fixed\?/);
    expect((await runCli(["-c", "-p", "thanks"], { cwd: repo, env })).code).toBe(0);
    expect(lastUser()).not.toContain("/undo");
  });

  it("a branch keeps the output its history sends the model to raw_output for", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const m = ["--model", "openai-compatible/m"];
    server.requests.length = 0;
    server.push({ tools: [{ id: "big", name: "bash", input: { command: "seq 1 20000" } }] }, { text: "long." });
    expect((await runCli(["-p", "--mode", "yolo", ...m, "count"], { cwd: repo, env })).code).toBe(0);
    const cut = server.requests[1]!.body.messages.find((x: any) => x.role === "tool").content as string;
    expect(cut).toContain('raw_output tool_call_id="big"');
    const rawCall = { tools: [{ id: "r1", name: "raw_output", input: { tool_call_id: "big", offset: 0, limit: 12 } }] };
    const result = () => server.requests.at(-1)!.body.messages.find((x: any) => x.role === "tool" && x.tool_call_id === "r1")?.content;
    // a branch made by --fork, then a branch of that branch made by /fork and resumed
    server.push(rawCall, { text: "ok" });
    expect((await runCli(["-c", "--fork", "-p", "show the start"], { cwd: repo, env })).code).toBe(0);
    expect(result()).toBe("bytes 0-12 of 108894:\n1\n2\n3\n4\n5\n6\n\n[next offset: 12]");
    const fork = await runCli(["-c", "-p", "/fork"], { cwd: repo, env });
    const branch = /larik --resume (\S+)/.exec(fork.stdout)![1]!;
    server.push(rawCall, { text: "ok" });
    expect((await runCli(["--resume", branch, "-p", "again"], { cwd: repo, env })).code).toBe(0);
    expect(result()).toBe("bytes 0-12 of 108894:\n1\n2\n3\n4\n5\n6\n\n[next offset: 12]");
  });

  it("a slash command's error names the command once", async () => {
    const repo = makeRepo();
    const env = { ...baseEnv(mkdtempSync(join(tmpdir(), "larik-e2e-home-"))), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    for (const [cmd, error, code] of [
      // messages that start with the command line (arguments refused: usage errors), and one that does not
      ["/mode bogus", "larik: /mode bogus: use one of default, accept-edits, plan, auto, yolo\n", 2],
      ["/effort x y", "larik: /effort x y: use one of low, medium, high, xhigh, max or default\n", 2],
      ["/prompt", "larik: /prompt: this session has no prompts yet\n", 1],
    ] as const) {
      const r = await runCli(["-p", "--model", "openai-compatible/m", cmd], { cwd: repo, env });
      expect([cmd, r.code, r.stderr]).toEqual([cmd, code, error]);
    }
  });

  it("sends a prompt whose first word is a path to the model; a near miss of a command stays a usage error", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    // a custom command may have a dot in its name: that one runs
    mkdirSync(join(repo, ".larik", "commands"), { recursive: true });
    writeFileSync(join(repo, ".larik", "commands", "deploy.prod.md"), "---\ndescription: deploy\n---\nDeploy to production\n");
    const lastUserText = () => JSON.stringify(server.requests.at(-1)!.body.messages.at(-1));
    for (const prompt of ["/api/users returns 500, why?", "/etc/hosts is empty", "/README.md is outdated", "/v1.2 broke the build", "/deploy.prod"]) {
      server.push({ text: "answered" });
      const r = await runCli(["-p", "--model", "openai-compatible/m", prompt], { cwd: repo, env });
      expect([prompt, r.code, r.stdout, r.stderr]).toEqual([prompt, 0, "answered\n", ""]);
      expect(lastUserText()).toContain(prompt === "/deploy.prod" ? "Deploy to production" : JSON.stringify(prompt).slice(1, -1));
    }
    const sent = server.requests.length;
    const typo = await runCli(["-p", "--model", "openai-compatible/m", "/cots"], { cwd: repo, env });
    expect([typo.code, typo.stderr]).toEqual([2, "larik: unknown command /cots (did you mean /cost?): larik --help lists them; to send the text to the model as it is, start it with a space\n"]);
    expect(server.requests.length).toBe(sent);
  });

  it("runs a slash command that needs no model without one; one whose prompt goes to the model still asks for it", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const bare = baseEnv(home); // no --model, no key variable, no config
    const noModel = `larik: no model configured: pass --model provider/model, set "model" in ~/.config/larik/config.json, or export ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY\n`;
    const cost = await runCli(["-p", "/cost"], { cwd: repo, env: bare });
    expect([cost.code, cost.stderr]).toEqual([0, ""]);
    expect(cost.stdout).toMatch(/^no model requests in this session yet\n/);
    const json = await runCli(["-p", "--output", "json", "/cost"], { cwd: repo, env: bare });
    expect(json.code).toBe(0);
    // no session was stored, so done names none
    expect(json.stdout.trim().split("\n").map((l) => JSON.parse(l)).at(-1)).toEqual({ type: "done", stop_reason: "end_turn" });
    const model = await runCli(["-p", "/model"], { cwd: repo, env: bare });
    expect([model.code, model.stdout.split("\n")[0]]).toEqual([0, `model: none (${noModel.slice("larik: ".length, -1)})`]);
    for (const cmd of ["/help", "/mode", "/sessions"]) expect((await runCli(["-p", cmd], { cwd: repo, env: bare })).code, cmd).toBe(0);
    // nothing for -c to continue: a run that could reach no model stores no session
    expect(existsSync(join(home, ".local", "share", "larik", "sessions"))).toBe(false);
    // a custom command expands to a prompt, which needs the model: the usage error, once
    mkdirSync(join(repo, ".larik", "commands"), { recursive: true });
    writeFileSync(join(repo, ".larik", "commands", "greet.md"), "---\ndescription: greet\n---\nSay hello to $ARGUMENTS\n");
    const greet = await runCli(["-p", "/greet bob"], { cwd: repo, env: bare });
    expect([greet.code, greet.stdout, greet.stderr]).toEqual([2, "", noModel]);
    const plain = await runCli(["-p", "hello"], { cwd: repo, env: bare });
    expect([plain.code, plain.stderr]).toEqual([2, noModel]);

    // -c: the session's model, whose key is not set here, is not needed for /cost
    const keyed = { ...bare, OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.push({ text: "hi" });
    expect((await runCli(["-p", "--model", "openai-compatible/m", "hello"], { cwd: repo, env: keyed })).code).toBe(0);
    const resumed = await runCli(["-c", "-p", "/cost"], { cwd: repo, env: bare });
    expect([resumed.code, resumed.stderr]).toEqual([0, ""]);
    expect(resumed.stdout).toMatch(/openai-compatible\/m/);
    const again = await runCli(["-c", "-p", "/greet bob"], { cwd: repo, env: bare });
    expect([again.code, again.stderr]).toEqual([2, "larik: missing API key for openai-compatible: set OPENAI_API_KEY (or providers.openai-compatible.api_key_env in your config)\n"]);
  });

  it("stops at max_turns with an error: exit 1, the error on stderr (text) or before done (json)", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(join(home, ".config", "larik", "config.json"), JSON.stringify({ max_turns: 1 }));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.requests.length = 0;
    server.push({ text: "Reading first.", tools: [{ id: "c1", name: "read", input: { path: "sum.js" } }] });
    const r = await runCli(["-p", "--model", "openai-compatible/m", "explain sum.js"], { cwd: repo, env });
    expect(server.requests).toHaveLength(1);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("Reading first.\n");
    expect(r.stderr).toMatch(/^error: stopped after 1 model rounds \(max_turns\)/m);

    server.push({ tools: [{ id: "c1", name: "read", input: { path: "sum.js" } }] });
    const j = await runCli(["-p", "--output", "json", "--model", "openai-compatible/m", "explain sum.js"], { cwd: repo, env });
    expect(j.code).toBe(1);
    const events = j.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "max_turns" });
    expect(events.at(-2)).toMatchObject({ type: "error", text: expect.stringMatching(/max_turns/) });
  });

  it("--timeout stops the turn and exits 1; with --output json every line is an event and done comes last", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.push({ tools: [{ id: "c1", name: "bash", input: { command: "sleep 30" } }] });
    const r = await runCli(["-p", "--output", "json", "--timeout", "1s", "--mode", "yolo", "--model", "openai-compatible/m", "wait"], { cwd: repo, env });
    expect(r.code).toBe(1);
    const { AgentEventSchema } = await import("../kernel/index.js");
    const events = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    for (const e of events) expect(AgentEventSchema.safeParse(e).success).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });
    expect(events.at(-2)).toEqual({ type: "error", text: "stopped: --timeout 1s reached" });
    expect(events.filter((e) => e.type === "done")).toHaveLength(1);
    expect(events.find((e) => e.type === "tool_end")).toMatchObject({ tool_id: "c1", is_error: true });
    // the call's result says what stopped it, not "interrupted by user" (on a busy machine the
    // second can pass before bash has started)
    expect(events.find((e) => e.type === "tool_end").output).toMatch(
      /^(\(no output\)\n\[interrupted: --timeout 1s reached; the command and its child processes were killed\]|\[interrupted: --timeout 1s reached; the command was not started\])$/,
    );
    // in text mode the call's line says why it stopped, not its first line of output
    server.push({ tools: [{ id: "c2", name: "bash", input: { command: "echo starting; sleep 30" } }] });
    const t = await runCli(["-p", "--timeout", "1s", "--mode", "yolo", "--model", "openai-compatible/m", "wait"], { cwd: repo, env });
    expect(t.code).toBe(1);
    expect(t.stderr).toMatch(/✗ bash echo starting; sleep 30: \[interrupted: --timeout 1s reached; the command (and its child processes were killed|was not started)\]\n/);
  });

  it("a process a bash call left running (`cmd &`) runs on until larik -p exits, then goes: sandboxed and with sandbox false alike", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const running = (tag: string) => execFileSync("ps", ["-eo", "pid=,args="]).toString().split("\n").filter((l) => l.trim().endsWith(`sleep ${tag}`));
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
    for (const sandbox of [true, false]) {
      const tag = `${400 + Math.floor(Math.random() * 1000)}.${process.pid}`;
      server.requests.length = 0;
      server.push(
        { tools: [{ id: "c1", name: "bash", input: { command: `sleep ${tag} > /dev/null 2>&1 & echo started`, sandbox } }] },
        { tools: [{ id: "c2", name: "bash", input: { command: "sleep 2", sandbox } }] },
        { text: "Done." },
      );
      const run = runCli(["-p", "--mode", "yolo", "--model", "openai-compatible/m", "start it"], { cwd: repo, env });
      let seen = false;
      for (const end = Date.now() + 8_000; !seen && Date.now() < end; ) {
        seen = running(tag).length === 1;
        if (!seen) await wait(20);
      }
      expect(seen, `sandbox ${sandbox}: the process runs while larik does`).toBe(true);
      // in the sandbox it is held by the sandbox's init (bwrap), outside by whoever adopts orphans
      const ppid = execFileSync("ps", ["-o", "ppid=", "-p", running(tag)[0]!.trim().split(/\s+/)[0]!]).toString().trim();
      const parent = execFileSync("ps", ["-o", "args=", "-p", ppid]).toString();
      expect(parent.startsWith("bwrap "), `sandbox ${sandbox}: parent ${parent}`).toBe(sandbox);
      await wait(600); // still there while the next call runs: not ended with its own call
      expect(running(tag), `sandbox ${sandbox}`).toHaveLength(1);
      const r = await run;
      expect(r.code).toBe(0);
      expect(server.requests[1]!.body.messages.find((m: any) => m.role === "tool").content).toBe("started\n[exit code 0]");
      let gone = false;
      for (const end = Date.now() + 4_000; !gone && Date.now() < end; ) {
        gone = running(tag).length === 0;
        if (!gone) await wait(20);
      }
      if (!gone) for (const l of running(tag)) process.kill(Number(l.trim().split(/\s+/)[0]), "SIGKILL");
      expect(gone, `sandbox ${sandbox}: the process went with larik`).toBe(true);
    }
  }, 60_000);

  it("--timeout: a bare number is seconds, a tiny value is not 'none', a bad value is a one-line usage error naming the flag", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    // its own server: a reply whose request a tiny timeout cancels before it is sent stays queued
    const server = await startMockModelServer();
    onTestFinished(() => server.close());
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const help = await runCli(["--help"], { cwd: repo, env });
    expect(help.stdout).toMatch(/^ +--timeout <duration> +with -p: stop after this long: 90 \(seconds\), 90s, 5m, 1h30m \(0 = none\)$/m);
    server.requests.length = 0;
    for (const bad of ["5min", "1d", "5 m", "1.", ""]) {
      const r = await runCli(["-p", "--timeout", bad, "--model", "openai-compatible/m", "hi"], { cwd: repo, env });
      expect([bad, r.code, r.stderr]).toEqual([bad, 2, `larik: --timeout ${bad || '""'}: expected a duration such as 90 (seconds), 90s, 5m, 1h30m or 500ms (0 for none)\n`]);
    }
    expect(server.requests).toHaveLength(0);
    // against a model that never finishes its reply: a run that ignored the timeout would wait
    // until the guard below kills it (status -1)
    const run = (timeout: string) =>
      new Promise<{ code: number; stdout: string }>((done) => {
        server.push({ text: "Started", hold: true });
        const child = spawn(process.execPath, [CLI, "-p", "--output", "json", "--timeout", timeout, "--model", "openai-compatible/m", "hi"], { cwd: repo, env, stdio: ["ignore", "pipe", "ignore"] });
        let stdout = "";
        child.stdout!.on("data", (d) => (stdout += d));
        const guard = setTimeout(() => child.kill("SIGKILL"), 20_000);
        child.on("close", (code) => (clearTimeout(guard), done({ code: code ?? -1, stdout })));
      });
    // one second: the text that came first is kept (a millisecond would have cut the turn before it)
    const secs = await run("1");
    expect(secs.code).toBe(1);
    const events = secs.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(events.find((e) => e.type === "assistant_message")?.message.blocks[0]).toEqual({ type: "text", text: "Started" });
    expect(events.at(-2)).toEqual({ type: "error", text: "stopped: --timeout 1 reached" });
    // a tenth of a millisecond rounds up, not down to 0 ("none")
    const tiny = await run("0.0001");
    expect(tiny.code).toBe(1);
    expect(tiny.stdout).toContain('{"type":"error","text":"stopped: --timeout 0.0001 reached"}');
  }, 60_000);

  it("--output json: a reply cut short by --timeout or a signal still comes as an assistant_message, marked partial", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const { AgentEventSchema } = await import("../kernel/index.js");
    const parse = (stdout: string) => {
      const events = stdout.trim().split("\n").map((l) => JSON.parse(l));
      for (const e of events) expect(AgentEventSchema.safeParse(e).success, JSON.stringify(e)).toBe(true);
      return events;
    };
    // the model streams half a reply and then says nothing more
    server.push({ text: "Half of an answer that", hold: true });
    const r = await runCli(["-p", "--output", "json", "--timeout", "2s", "--model", "openai-compatible/m", "hi"], { cwd: repo, env });
    expect(r.code).toBe(1);
    const events = parse(r.stdout);
    expect(events.filter((e) => e.type === "assistant_message")).toEqual([
      {
        type: "assistant_message",
        partial: true,
        message: { role: "assistant", model: "m", blocks: [{ type: "text", text: "Half of an answer that" }, { type: "text", text: "[interrupted: --timeout 2s reached]" }] },
      },
    ]);
    expect(events.slice(-2)).toEqual([{ type: "error", text: "stopped: --timeout 2s reached" }, expect.objectContaining({ type: "done", stop_reason: "interrupted" })]);

    // a signal: the call streamed after the text shows the text has arrived
    server.push({ text: "Let me look", tools: [{ id: "c1", name: "read", input: { path: "sum.js" } }], hold: true });
    const child = spawn(process.execPath, [CLI, "-p", "--output", "json", "--model", "openai-compatible/m", "hi"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout!.on("data", (d) => (stdout += d));
    const closed = new Promise<number | null>((done) => child.on("close", done));
    for (let i = 0; i < 200 && !stdout.includes('"tool_call_streaming"'); i++) await new Promise((res) => setTimeout(res, 50));
    child.kill("SIGINT");
    expect(await closed).toBe(130);
    const got = parse(stdout);
    expect(got.find((e) => e.type === "assistant_message")).toEqual({
      type: "assistant_message",
      partial: true,
      message: { role: "assistant", model: "m", blocks: [{ type: "text", text: "Let me look" }, { type: "text", text: "[interrupted by user]" }] },
    });
    expect(got.at(-1)).toMatchObject({ type: "done", stop_reason: "interrupted" });

    // a stream that breaks off: the text received, then the error
    server.push({ text: "Cut short", cut: true });
    const c = await runCli(["-p", "--output", "json", "--model", "openai-compatible/m", "hi"], { cwd: repo, env });
    expect(c.code).toBe(1);
    const cut = parse(c.stdout).filter((e) => e.type === "assistant_message" || e.type === "error");
    expect(cut).toEqual([
      {
        type: "assistant_message",
        partial: true,
        message: { role: "assistant", model: "m", blocks: [{ type: "text", text: "Cut short" }, { type: "text", text: "[response cut off by an error]" }] },
      },
      { type: "error", text: expect.any(String) },
    ]);
  });

  it("bundles zod's English messages only: the headless bundle carries no other locale", () => {
    // a namespace import of zod/mini anywhere keeps all ~40 locales, doubling dist/headless.cjs
    const bundle = readFileSync(resolve(CLI, "..", "headless.cjs"), "utf8");
    expect([...new Set(bundle.match(/zod\/v4\/locales\/[\w-]+\.js/g))].sort()).toEqual(["zod/v4/locales/en.js", "zod/v4/locales/index.js"]);
  });

  it("streams a -p answer without loading Node's web streams, fs/promises, ink, react, h3 or the build's second file, nor zod, crypto, zlib or child_process before the request", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    // a preload that reports, at exit, the built-in modules loaded and the files required, and
    // whether zod was set up (it marks globalThis) when the first model request started
    const report = join(home, "loaded.json");
    const preload = join(home, "loaded.cjs");
    writeFileSync(
      preload,
      [
        `let zodAtRequest, builtinsAtRequest;`,
        `require("node:diagnostics_channel").subscribe("http.client.request.start", () => { zodAtRequest ??= "__zod_globalConfig" in globalThis; builtinsAtRequest ??= [...process.moduleLoadList]; });`,
        `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify({ builtins: process.moduleLoadList, builtinsAtRequest, files: Object.keys(require.cache), zodAtRequest, zodAtExit: "__zod_globalConfig" in globalThis })));`,
        ``,
      ].join("\n"),
    );
    // the second run: the first one also prunes old checkpoints (at most once a day)
    for (const answer of ["first", "second"]) {
      server.push({ text: answer });
      const code = await new Promise<number | null>((done) =>
        spawn(process.execPath, ["-r", preload, CLI, "-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env, stdio: "ignore" }).on("close", done),
      );
      expect(code).toBe(0);
    }
    const loaded = JSON.parse(readFileSync(report, "utf8")) as { builtins: string[]; builtinsAtRequest: string[]; files: string[]; zodAtRequest: boolean; zodAtExit: boolean };
    // zod is set up at its first use, the validation of the answer's first event
    expect([loaded.zodAtRequest, loaded.zodAtExit]).toEqual([false, true]);
    expect(loaded.builtins).toContain("NativeModule _http_client"); // the answer did come over node:http
    // (bare node already has internal/webstreams/util and queuingstrategies)
    expect(loaded.builtins.filter((m) => /webstreams\/(readablestream|adapters)$|fs\/promises$|readline/.test(m))).toEqual([]);
    expect(loaded.files.filter((f) => /node_modules\/(ink|react|react-reconciler|h3)\//.test(f))).toEqual([]);
    // these load at their first use (tsup.config.ts, LAZY_BUILTINS): each costs milliseconds of
    // every start, and nothing before the first request needs them (a random marker, a checksum)
    expect(loaded.builtinsAtRequest.filter((m) => /^NativeModule (crypto|zlib|child_process)$/.test(m))).toEqual([]);
    // nor the headless build's second file, the plugins' modules loaded on demand: it gets a code
    // cache of its own when it loads (the start file's is written at the first request)
    expect(readdirSync(join(home, ".cache", "larik", "v8")).map((f) => f.replace(/-\d.*$/, ""))).toEqual(["headless.cjs"]);
  });

  it("marks each start-up phase once, in order, for bench/startup-phases.mjs's probe", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const report = join(home, "phases.json");
    const preload = join(home, "probe.cjs");
    writeFileSync(
      preload,
      [
        `const phases = [];`,
        `globalThis[Symbol.for("larik.startup-probe")] = (p) => phases.push(p);`,
        `require("node:diagnostics_channel").subscribe("http.client.request.start", () => phases.push("(request)"));`,
        `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify(phases)));`,
        ``,
      ].join("\n"),
    );
    server.push({ text: "ok" });
    const code = await new Promise<number | null>((done) =>
      spawn(process.execPath, ["-r", preload, CLI, "-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env, stdio: "ignore" }).on("close", done),
    );
    expect(code).toBe(0);
    const phases = JSON.parse(readFileSync(report, "utf8")) as string[];
    // everything up to the first request, in the order the bench prints it; a mark dropped or
    // moved would make its figures lie ("request built" comes again with each later request)
    expect(phases.slice(0, phases.indexOf("(request)") + 1)).toEqual([
      "launcher", "bundle read", "bundle compiled", "bundle run", "config", "plugins", "signal turn", "flags",
      "agent open", "request built", "http loaded", "request queued", "(request)",
    ]);
  });

  it("a signal ends the turn cleanly and exits 128 + its number, leaving nothing in the project", async () => {
    for (const [signal, status] of [
      ["SIGHUP", 129],
      ["SIGTERM", 143],
    ] as const) {
      const project = mkdtempSync(join(tmpdir(), "larik-e2e-plain-")); // not a git repository
      writeFileSync(join(project, "a.txt"), "a\n");
      const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
      const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
      server.push({ tools: [{ id: "call_1", name: "bash", input: { command: "sleep 20" } }] }); // interrupted: no second request
      const child = spawn(process.execPath, [CLI, "-p", "--mode", "yolo", "--model", "openai-compatible/m", "wait"], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr!.on("data", (d) => (stderr += d));
      const closed = new Promise<number | null>((done) => child.on("close", done));
      for (let i = 0; i < 200 && !stderr.includes("→ bash"); i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300)); // the command is running
      child.kill(signal);
      if (signal === "SIGHUP") {
        // a closed terminal often hangs up twice (the kernel, then an interactive shell): the
        // second must not cut the clean-up short
        await new Promise((r) => setTimeout(r, 5));
        child.kill(signal);
      }
      expect(await closed).toBe(status);
      expect(stderr).toContain(`! stopped by ${signal}`);
      // the sandbox's placeholders (.git, .larik, .claude, .mcp.json) went with the run
      expect(readdirSync(project)).toEqual(["a.txt"]);
    }
  });

  it("records a turn stopped by SIGTERM or SIGHUP with the signal, as its own block the next request keeps apart", async () => {
    for (const signal of ["SIGTERM", "SIGHUP"] as const) {
      const repo = makeRepo();
      const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
      const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
      server.push({ text: "word36 wor", hold: true });
      const child = spawn(process.execPath, [CLI, "-p", "--model", "openai-compatible/m", "count"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      child.stdout!.on("data", (d) => (stdout += d));
      const closed = new Promise<number | null>((done) => child.on("close", done));
      for (let i = 0; i < 200 && !stdout.includes("word36 wor"); i++) await new Promise((r) => setTimeout(r, 50));
      child.kill(signal);
      expect(await closed).toBe(signal === "SIGTERM" ? 143 : 129);
      const sessionsRoot = join(home, ".local", "share", "larik", "sessions");
      const dir = join(sessionsRoot, readdirSync(sessionsRoot)[0]!);
      const lines = readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith(".jsonl"))!), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      const reply = lines.filter((l) => l.type === "message" && l.message.role === "assistant").at(-1).message;
      expect(reply.blocks).toEqual([{ type: "text", text: "word36 wor" }, { type: "text", text: `[interrupted: stopped by ${signal}]` }]);

      // what the model reads of it at -c: the marker apart from the cut-off word
      server.push({ text: "resumed" });
      const r = await runCli(["-c", "-p", "--model", "openai-compatible/m", "go on"], { cwd: repo, env });
      expect(r.code).toBe(0);
      const sent = server.requests.at(-1)!.body.messages.filter((m: any) => m.role === "assistant").at(-1);
      expect(sent.content).toBe(`word36 wor\n\n[interrupted: stopped by ${signal}]`);
    }
  });

  it("keeps the compiled headless bundle in ~/.cache/larik/v8 unless LARIK_NO_CODE_CACHE=1, and -p works where the ES build runs it", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const v8 = join(home, ".cache", "larik", "v8");
    // a run that stops before its request (here at the missing key) writes no cache: it would
    // lack the request's path, which every later run would then compile from source
    const noKey = await runCli(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env: { ...env, OPENAI_API_KEY: "" } });
    expect(noKey.stderr).toMatch(/missing API key/);
    expect(readdirSync(v8)).toEqual([]);
    server.push({ text: "first" }, { text: "second" });
    expect((await runCli(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env })).stdout).toBe("first\n");
    const [bin] = readdirSync(v8);
    expect(bin).toMatch(/^headless\.cjs-\d+-\d+-v\d+\.\d+\.\d+-\w+\.bin$/);
    // the second run compiles nothing from source and answers the same way
    expect((await runCli(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env })).stdout).toBe("second\n");
    expect(readdirSync(v8)).toEqual([bin]);

    const bare = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    server.push({ text: "uncached" });
    const off = await runCli(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env: { ...env, ...baseEnv(bare), LARIK_NO_CODE_CACHE: "1" } });
    expect(off.stdout).toBe("uncached\n");
    expect(existsSync(join(bare, ".cache"))).toBe(false);

    // a first word that is not a flag may be a subcommand: that command line takes the ES build
    server.push({ text: "from the ES build" });
    const word = await runCli(["hi", "-p", "--model", "openai-compatible/m"], { cwd: repo, env });
    expect(word.code).toBe(0);
    expect(word.stdout).toBe("from the ES build\n");
  });

  it("runs a config file's plugin, an MCP server and a hook from the headless bundle", async () => {
    // the parts of -p that load packages at run time (jiti, zod, the MCP SDK) and spawn processes
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const cfgDir = join(home, ".config", "larik");
    mkdirSync(cfgDir, { recursive: true });
    const hookLog = join(home, "hook.log");
    const everything = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    writeFileSync(
      join(cfgDir, "config.json"),
      JSON.stringify({
        mcp_servers: { everything: { command: process.execPath, args: [everything, "stdio"] } },
        hooks: { PreToolUse: [{ matcher: "read", hooks: [{ type: "command", command: `cat >> ${JSON.stringify(hookLog)}` }] }] },
      }),
    );
    writeFileSync(
      join(cfgDir, "larik.config.ts"),
      [
        'import { definePlugin, defineConfig } from "larik";',
        'import * as larik from "larik";',
        'import { writeFileSync } from "node:fs";',
        'import { z } from "zod";',
        `writeFileSync(${JSON.stringify(join(home, "larik-exports.json"))}, JSON.stringify(Object.keys(larik)));`,
        "const shout = definePlugin({",
        '  name: "shout",',
        "  setup(ctx) {",
        "    ctx.tools.register({",
        '      name: "shout", description: "Upper-cases text", kind: "read",',
        "      input: z.object({ text: z.string() }),",
        "      async run({ text }: { text: string }) { return { content: text.toUpperCase() }; },",
        "    });",
        "  },",
        "});",
        "export default defineConfig({ plugins: [shout] });",
        "",
      ].join("\n"),
    );
    server.requests.length = 0;
    server.push(
      {
        tools: [
          { id: "c1", name: "shout", input: { text: "from a config plugin" } },
          { id: "c2", name: "mcp__everything__echo", input: { message: "from mcp" } },
          { id: "c3", name: "read", input: { path: "sum.js" } },
        ],
      },
      { text: "all three ran" },
    );
    const r = await runCli(["-p", "--mode", "yolo", "--model", "openai-compatible/m", "--output", "json", "use the tools"], { cwd: repo, env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // read-only calls run in parallel, so they may end in any order
    const ends = new Map<string, { output: string; is_error?: boolean }>(
      r.stdout.trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.type === "tool_end").map((e) => [e.tool_name, e]),
    );
    expect([...ends.keys()].sort()).toEqual(["mcp__everything__echo", "read", "shout"]);
    expect([...ends.values()].some((e) => e.is_error)).toBe(false);
    expect(ends.get("shout")!.output).toBe("FROM A CONFIG PLUGIN");
    // "larik" is the whole public kernel (the headless build assembles it on demand)
    const kernelExports = Object.keys(await import("../kernel/index.js")).sort();
    expect(JSON.parse(readFileSync(join(home, "larik-exports.json"), "utf8")).sort()).toEqual(kernelExports);
    expect(ends.get("mcp__everything__echo")!.output).toContain("from mcp");
    expect(ends.get("read")!.output).toContain("return a - b;");
    expect(JSON.parse(readFileSync(hookLog, "utf8"))).toMatchObject({ hook_event_name: "PreToolUse", tool_name: "read" });
    // MCP's client and the hook engine came from the headless build's second file, which got a
    // code cache of its own (build/headless-split.ts)
    expect(readdirSync(join(home, ".cache", "larik", "v8")).filter((f) => f.startsWith("headless-lazy.cjs-"))).toHaveLength(1);
  }, 30_000);

  describe("bad input: one line that says what to fix", () => {
    let repo: string;
    let env: NodeJS.ProcessEnv;
    beforeAll(() => {
      repo = makeRepo();
      env = baseEnv(mkdtempSync(join(tmpdir(), "larik-e2e-home-")));
    });

    const oneLine = (s: string) => expect(s.trim().split("\n")).toHaveLength(1);

    it("an unknown provider", async () => {
      const r = await runCli(["-p", "--model", "nosuch/model", "hi"], { cwd: repo, env: { ...env, OPENAI_API_KEY: "k" } });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/unknown provider "nosuch".*use one of .*anthropic/);
    });

    it("a provider without a model", async () => {
      const r = await runCli(["-p", "--model", "openai-compatible", "hi"], { cwd: repo, env: { ...env, OPENAI_API_KEY: "k" } });
      expect([r.code, r.stderr]).toEqual([2, `larik: "openai-compatible" is a provider, not a model: name the model too, as openai-compatible/<model>\n`]);
    });

    it("a misspelt provider, with the spelling it was meant to be", async () => {
      const r = await runCli(["-p", "--model", "antropic/claude-sonnet-4-5", "hi"], { cwd: repo, env: { ...env, ANTHROPIC_API_KEY: "k" } });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/unknown provider "antropic" in model "antropic\/claude-sonnet-4-5": did you mean anthropic\/claude-sonnet-4-5\?/);
    });

    it("a misspelt model in a config file: the error says it comes from the model setting", async () => {
      const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
      mkdirSync(join(home, ".config", "larik"), { recursive: true });
      writeFileSync(join(home, ".config", "larik", "config.json"), JSON.stringify({ model: "antropic/claude-sonnet-4-5" }));
      const r = await runCli(["-p", "hi"], { cwd: repo, env: { ...baseEnv(home), ANTHROPIC_API_KEY: "k" } });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/did you mean anthropic\/claude-sonnet-4-5\? .*; it comes from the "model" setting of your config files \(larik --help lists them\)$/m);
      // given on the command line, it says nothing of settings
      const flag = await runCli(["-p", "--model", "antropic/x", "hi"], { cwd: repo, env: { ...baseEnv(home), ANTHROPIC_API_KEY: "k" } });
      expect(flag.stderr).not.toContain("setting");
    });

    it("a model with no provider prefix that no catalog knows", async () => {
      const r = await runCli(["-p", "--model", "mystery-model", "hi"], { cwd: repo, env });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/write it as provider\/model/);
    });

    it("a missing key names the variable", async () => {
      const r = await runCli(["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"], { cwd: repo, env });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/ANTHROPIC_API_KEY/);
    });

    it("an unreachable base URL", async () => {
      // a port that was just free: nothing listens there
      const probe = (await import("node:net")).createServer();
      await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
      const port = (probe.address() as { port: number }).port;
      await new Promise<void>((r) => probe.close(() => r()));
      const r = await runCli(["-p", "--model", "openai-compatible/m", "hi"], {
        cwd: repo,
        env: { ...env, OPENAI_API_KEY: "k", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` },
      });
      expect(r.code).toBe(1);
      // retries are announced as notices; the error itself is one line naming the URL and the fix
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("error:"));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/v1.*OPENAI_BASE_URL`));
      expect(r.stderr.split("\n").filter(Boolean).every((l) => l.startsWith("error:") || l.startsWith("! "))).toBe(true);
    });

    it("a base URL that is not a URL, from the environment or the config", async () => {
      const r = await runCli(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env: { ...env, OPENAI_API_KEY: "k", OPENAI_BASE_URL: "not a url" } });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/OPENAI_BASE_URL "not a url" is not an http\(s\) URL/);
      // without its scheme: caught here, not by the request (the provider would not add one)
      for (const bad of ["127.0.0.1:8080/v1", "notaurl"]) {
        const r1 = await runCli(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env: { ...env, OPENAI_API_KEY: "k", OPENAI_BASE_URL: bad } });
        expect(r1.code).toBe(2);
        oneLine(r1.stderr);
        expect(r1.stderr).toContain(`OPENAI_BASE_URL "${bad}" is not an http(s) URL: use one like http://127.0.0.1:8080/v1`);
      }
      const cfg = join(env.XDG_CONFIG_HOME!, "larik");
      mkdirSync(cfg, { recursive: true });
      writeFileSync(join(cfg, "config.json"), JSON.stringify({ providers: { anthropic: { base_url: "ftp://example.com" } } }));
      const r2 = await runCli(["-p", "--model", "anthropic/claude-sonnet-4-5", "hi"], { cwd: repo, env: { ...env, ANTHROPIC_API_KEY: "k" } });
      expect(r2.code).toBe(2);
      oneLine(r2.stderr);
      expect(r2.stderr).toMatch(/providers\.anthropic\.base_url "ftp:\/\/example\.com" is not an http\(s\) URL/);
    });

    it("a malformed personal config names the file and the key", async () => {
      const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
      mkdirSync(join(home, ".config", "larik"), { recursive: true });
      writeFileSync(join(home, ".config", "larik", "config.json"), JSON.stringify({ max_turns: "ten" }));
      const r = await runCli(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env: { ...baseEnv(home), OPENAI_API_KEY: "k" } });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/config\.json.*max_turns/);
      // --help still answers, with the error as a notice: it says where the file is
      const h = await runCli(["--help"], { cwd: repo, env: baseEnv(home) });
      expect(h.code).toBe(0);
      expect(h.stdout).toContain("config: ~/.config/larik/config.json (personal)");
      expect(h.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^! .*config\.json: "max_turns": expected a positive integer/)]);
    });

    it("a flag whose value looks like a flag, and a prompt that starts with a dash", async () => {
      // (a value the flag would refuse anyway gets that refusal instead: test/headless-edges.test.ts)
      for (const [flag, value] of [["--model", "-c"], ["--resume", "-p"]] as const) {
        const r = await runCli(["-p", flag, value, "hi"], { cwd: repo, env });
        expect(r.code).toBe(2);
        oneLine(r.stderr);
        expect(r.stderr).toContain(`${flag} needs a value, and "${value}" looks like a flag: write ${flag}=${value} if it is the value`);
      }
      // a flag that takes no value: Node's message in Larik's words
      const f = await runCli(["-p", "--fork=yes", "hi"], { cwd: repo, env });
      expect(f.code).toBe(2);
      oneLine(f.stderr);
      expect(f.stderr).toContain("larik: --fork takes no value (see larik --help)");
      const r = await runCli(["-p", "-fix the test"], { cwd: repo, env });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toContain(`a prompt that starts with "-" goes after --, as in larik -p -- "-fix the test"`);
    });

    it("an unknown flag and a bad --mode", async () => {
      const r = await runCli(["-p", "--frobnicate", "hi"], { cwd: repo, env });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/--frobnicate/);
      const r2 = await runCli(["-p", "--mode", "wild", "hi"], { cwd: repo, env });
      expect(r2.code).toBe(2);
      expect(r2.stderr).toMatch(/--mode wild: use one of default, accept-edits, plan, auto, yolo/);
    });

    it("a usage error whose stderr reader has gone still exits 2, without a crash", async () => {
      const child = spawn(process.execPath, [CLI, "-p", "--frobnicate", "hi"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
      child.stderr.destroy();
      let stdout = "";
      child.stdout.on("data", (d) => (stdout += d));
      const code = await new Promise<number | null>((done) => child.on("close", done));
      expect([code, stdout]).toEqual([2, ""]);
    });

    it("an option of -p without -p, and -c with --resume", async () => {
      const r = await runCli(["--output", "json", "hi"], { cwd: repo, env });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toContain("larik: --output works only with -p: add -p, or drop --output");
      const r2 = await runCli(["-p", "-c", "--resume", "2026", "hi"], { cwd: repo, env });
      expect(r2.code).toBe(2);
      oneLine(r2.stderr);
      expect(r2.stderr).toContain("larik: -c and --resume both pick the session: use -c for the newest, or --resume <id> for that one");
    });

    it("an empty --resume (a script's unset variable) is refused, not a new session", async () => {
      const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
      const e = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
      const sent = server.requests.length;
      for (const value of ["", " "]) {
        const r = await runCli(["-p", "--model", "openai-compatible/m", "--resume", value, "go on"], { cwd: repo, env: e });
        expect(r.code).toBe(2);
        oneLine(r.stderr);
        expect(r.stderr).toContain("larik: --resume needs a session id or a unique prefix of one: larik --sessions lists them (or use -c for the newest)");
      }
      expect(server.requests.length).toBe(sent);
      expect(existsSync(join(home, ".local", "share", "larik", "sessions"))).toBe(false);
    });

    it("--sessions with a prompt word", async () => {
      const r = await runCli(["--sessions", "extra"], { cwd: repo, env });
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/--sessions takes no prompt \(got "extra"\)/);
    });

    it("a data folder that is a file: names XDG_DATA_HOME and what to do", async () => {
      const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
      const file = join(home, "data.txt");
      writeFileSync(file, "not a folder\n");
      const base = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
      const fix = "not a folder; larik keeps sessions and checkpoints under it: point XDG_DATA_HOME at a folder, or unset it to use ~/.local/share\n";
      for (const [value, said] of [
        [file, "XDG_DATA_HOME (~/data.txt) is a file, "],
        [join(file, "sub"), "XDG_DATA_HOME (~/data.txt/sub) lies under ~/data.txt, which is a file, "],
      ]) {
        const env = { ...base, XDG_DATA_HOME: value };
        for (const args of [["-p", "--model", "openai-compatible/m", "hi"], ["--sessions"]]) {
          const r = await runCli(args, { cwd: repo, env });
          expect([args[0], r.code, r.stderr]).toEqual([args[0], 2, `larik: ${said}${fix}`]);
        }
      }
      // without the variable: the default folder is in the way
      mkdirSync(join(home, ".local"));
      writeFileSync(join(home, ".local", "share"), "");
      const noVar: NodeJS.ProcessEnv = { ...base };
      delete noVar.XDG_DATA_HOME;
      const r = await runCli(["--sessions"], { cwd: repo, env: noVar });
      expect([r.code, r.stderr]).toEqual([2, "larik: ~/.local/share is a file, not a folder; larik keeps sessions and checkpoints in ~/.local/share/larik: move the file away, or set XDG_DATA_HOME to a folder\n"]);
    });

    it("an empty prompt", async () => {
      const r = await runCli(["-p"], { cwd: repo, env, input: "" });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/-p needs a prompt/);
    });

    it("a malformed tool call from the model: an English INVALID_ARGUMENTS result, a ✗ line saying why, and the turn goes on", async () => {
      const e = { ...env, OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
      server.requests.length = 0;
      const calls = [
        { id: "c1", name: "read", input: { path: 42 } },
        { id: "c2", name: "read", input: {} },
        { id: "c3", name: "bash", input: { command: "echo hi", timeout: "soon" } },
        { id: "c4", name: "glob", input: { pattern: "*.js" } },
        { id: "c5", name: "write", input: { path: "x.txt", content: null } },
      ];
      server.push({ tools: calls }, { text: "sorry" });
      const r = await runCli(["-p", "--model", "openai-compatible/m", "read it"], { cwd: repo, env: e });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("sorry\n");
      const results = server.requests[1]!.body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
      expect(results[0]).toMatch(/^INVALID_ARGUMENTS: read: path: Invalid input: expected string, received number/);
      // no `→ read {}` as if it ran: the tool, that its arguments were wrong, and which (a call
      // that fits its schema keeps its `→` line)
      expect(r.stderr.split("\n")).toEqual([
        '✗ read {"path":42}: invalid arguments: path: Invalid input: expected string, received number',
        "✗ read: invalid arguments: path: required: expected string",
        "✗ bash echo hi: invalid arguments: timeout: Invalid input: expected number, received string",
        "→ glob *.js",
        "✗ write x.txt: invalid arguments: content: Invalid input: expected string, received null",
        "",
      ]);
      expect(results[1]).toBe("INVALID_ARGUMENTS: read: path: required: expected string. Fix the arguments to match the tool's schema and call it again.");
    });

    it("a call refused before it runs (unknown tool, cut-off JSON, a deny rule) has no → line, only a ✗ line in the user's words", async () => {
      const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
      mkdirSync(join(home, ".config", "larik"), { recursive: true });
      writeFileSync(join(home, ".config", "larik", "config.json"), JSON.stringify({ permissions: { deny: ["bash(rm *)"] } }));
      const e = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
      server.requests.length = 0;
      const calls = [
        { id: "c1", name: "raed", input: { path: "sum.js" } },
        { id: "c2", name: "read", input: {}, raw: '{"path": "sum.j' },
        { id: "c3", name: "read", input: {}, raw: '["sum.js"]' },
        { id: "c4", name: "bash", input: { command: "rm -rf build" } },
        { id: "c5", name: "glob", input: { pattern: "*.js" } },
      ];
      server.push({ tools: calls }, { text: "sorry" });
      const r = await runCli(["-p", "--mode", "yolo", "--model", "openai-compatible/m", "go"], { cwd: repo, env: e });
      expect([r.code, r.stdout]).toEqual([0, "sorry\n"]);
      const results = server.requests[1]!.body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
      // the model still gets its instructions
      expect(results[1]).toMatch(/^INVALID_JSON: the arguments of read were not complete JSON .*Resend the call/);
      expect(r.stderr.split("\n")).toEqual([
        expect.stringMatching(/^✗ raed sum\.js: unknown tool "raed" \(did you mean "read"\?\): available tools are /),
        '✗ read: arguments not complete JSON: {"path": "sum.j',
        '✗ read: arguments not a JSON object (an array): ["sum.js"]',
        "✗ bash rm -rf build: permission denied: denied by rule bash(rm *)",
        "→ glob *.js",
        "",
      ]);
      // a reader of --output json learns the same from the start event
      server.push({ tools: [calls[0]!] }, { text: "sorry" });
      const j = await runCli(["-p", "--output", "json", "--model", "openai-compatible/m", "go"], { cwd: repo, env: e });
      const starts = j.stdout.trim().split("\n").map((l) => JSON.parse(l)).filter((ev: any) => ev.type === "tool_start");
      expect(starts).toEqual([expect.objectContaining({ tool_name: "raed", refused: true })]);
    });

    it("a torn last session line is recovered and the session resumes", async () => {
      const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
      const e = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
      server.push({ text: "first" });
      expect((await runCli(["-p", "--model", "openai-compatible/m", "one"], { cwd: repo, env: e })).code).toBe(0);
      const sessionsRoot = join(home, ".local", "share", "larik", "sessions");
      const dir = join(sessionsRoot, readdirSync(sessionsRoot)[0]!);
      const file = join(dir, readdirSync(dir).find((f) => f.endsWith(".jsonl"))!);
      appendFileSync(file, '{"id":"torn","parent_id":"x","type":"mess');
      server.push({ text: "second" });
      const r = await runCli(["-c", "-p", "two"], { cwd: repo, env: e });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("second\n");
      // the user is told, in one line naming the file and the line
      expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(new RegExp(`^! ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+: dropped a torn last line \\(\\d+ bytes at byte \\d+\\)`))]);
      // and the model, as a note saying what it means for the conversation, without the path,
      // line or byte offset the user's line has
      const sent = JSON.stringify(server.requests.at(-1)!.body);
      expect(sent).toContain(
        "<system-note>This session's saved history ended in an entry cut short, probably by a crash, which was dropped: the last message or tool result before it may be missing.</system-note>",
      );
      expect(sent).not.toContain(home);
      const notes = sent.match(/<system-note>.*?<\/system-note>/g) ?? [];
      expect(notes.filter((n) => /session file|\bbytes?\b|\.jsonl|:\d+:/.test(n))).toEqual([]);
      const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
      expect(lines.some((l) => JSON.parse(l.startsWith("{") && l.endsWith("}") ? l : "{}").type === "recovery")).toBe(true);
    });
  });
});

describe("larik --version and --help", () => {
  it("--version prints the version and the plugins", async () => {
    const r = await runCli(["--version"], { cwd: tmpdir(), env: { PATH: process.env.PATH, HOME: tmpdir() } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^larik \d+\.\d+\.\d+\nplugins:\n  sessions-jsonl +Stores sessions/);
    // each plugin says what it contributes
    expect(r.stdout).toMatch(/^  core-tools +Built-in tools: read, write, edit, .*bash_output, kill_bash/m);
    expect(r.stdout).toMatch(/^  headless +Headless print mode: larik -p$/m);
    // the fast answer (no plugin loaded) equals the one the loaded plugins give: a personal
    // config that adds nothing sends --version down the full path
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(join(home, ".config", "larik", "larik.config.ts"), "export default {};\n");
    const full = await runCli(["--version"], { cwd: home, env: baseEnv(home) });
    expect(full.stdout).toBe(r.stdout);
    const extra = "export default { plugins: [{ name: \"mine\", description: \"my tools\", setup() {} }] };\n";
    writeFileSync(join(home, ".config", "larik", "larik.config.ts"), extra);
    expect((await runCli(["--version"], { cwd: home, env: baseEnv(home) })).stdout).toBe(`${r.stdout}  mine${" ".repeat(16)}my tools\n`);
  });

  it("--version writes its answer without building process.stdout: no net, stream or tty loads", async () => {
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const report = join(home, "loaded.json");
    const preload = join(home, "loaded.cjs");
    writeFileSync(preload, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify(process.moduleLoadList)));\n`);
    // stdout a pipe, as in `larik --version | head`: process.stdout would be a net.Socket
    const r = await new Promise<{ code: number | null; out: string }>((done) => {
      let out = "";
      const child = spawn(process.execPath, ["-r", preload, CLI, "--version"], { cwd: home, env: baseEnv(home), stdio: ["ignore", "pipe", "inherit"] });
      child.stdout.on("data", (d) => (out += String(d)));
      child.on("close", (code) => done({ code, out }));
    });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^larik \d+\.\d+\.\d+\nplugins:\n/);
    const builtins = JSON.parse(readFileSync(report, "utf8")) as string[];
    expect(builtins.filter((m) => /^NativeModule (net|stream|tty)$/.test(m))).toEqual([]);
  });

  it("a config file that imports no zod loads none: the kernel's zod is required at a plugin's first import of it", async () => {
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    const report = join(home, "loaded.json");
    const preload = join(home, "loaded.cjs");
    writeFileSync(preload, `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(report)}, JSON.stringify(Object.keys(require.cache))));\n`);
    const zodFiles = async (config: string) => {
      writeFileSync(join(home, ".config", "larik", "larik.config.ts"), config);
      const code = await new Promise<number | null>((done) =>
        spawn(process.execPath, ["-r", preload, CLI, "--version"], { cwd: home, env: baseEnv(home), stdio: "ignore" }).on("close", done),
      );
      expect(code).toBe(0);
      return (JSON.parse(readFileSync(report, "utf8")) as string[]).filter((f) => f.includes("/node_modules/zod/")).length;
    };
    expect(await zodFiles("export default {};\n")).toBe(0);
    // a plugin of the config that does import it still gets it (the same check as before)
    const withZod = 'import { z } from "zod";\nexport default { plugins: [{ name: "z", description: "uses zod", setup() { z.string().parse("x"); } }] };\n';
    expect(await zodFiles(withZod)).toBeGreaterThan(0);
  });

  // util-linux script(1) gives the CLI a terminal, where an interactive run preloads Ink
  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)("--help, --sessions and --version in a terminal run through the headless bundle, without the ES module build or Ink", async () => {
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    // a config file sends --version down the full path too
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(join(home, ".config", "larik", "larik.config.ts"), "export default {};\n");
    for (const flag of ["--help", "--sessions", "--version"]) {
      const command = [process.execPath, CLI, flag].map((a) => JSON.stringify(a)).join(" ");
      // NODE_DEBUG lists each ES module and CommonJS file as it loads (bench/startup.mjs reads it too)
      const env = { ...baseEnv(home), NODE_DEBUG: "esm,module" };
      const r = await new Promise<{ code: number | null; out: string }>((done) => {
        const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: home, env, stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        child.on("close", (code) => done({ code, out }));
      });
      expect([flag, r.code]).toEqual([flag, 0]);
      expect(r.out).toMatch(flag === "--sessions" ? /no sessions in / : /^larik \d+\.\d+\.\d+/m);
      expect([flag, r.out.match(/\S*(dist\/main\.js|node_modules\/ink\/)\S*/g)]).toEqual([flag, null]);
    }
    // it uses the code cache a -p run leaves, and writes none: one of --help's would hold the
    // wrong functions for every later -p start
    expect(readdirSync(join(home, ".cache", "larik", "v8"))).toEqual([]);
  }, 30_000);

  it.skipIf(!hasScript)("a mistyped flag in a terminal is answered without waiting for the Ink that the start began to load", async () => {
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    // Module hooks that hold the import of ink for 5 s (it takes ~0.5 s, more on a slow machine):
    // a process that waited for it would be kept open past the exit guard's second, which says so
    const hooks = join(home, "slow-ink.mjs");
    writeFileSync(hooks, 'export async function resolve(s, c, next) {\n  if (s === "ink") await new Promise((r) => setTimeout(r, 5000));\n  return next(s, c);\n}\n');
    const register = join(home, "register.mjs");
    writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const command = [process.execPath, "--import", register, CLI, "--modle", "x"].map((a) => JSON.stringify(a)).join(" ");
    const r = await new Promise<{ code: number | null; out: string }>((done) => {
      const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: home, env: baseEnv(home), stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      child.on("close", (code) => done({ code, out }));
    });
    expect(r.out).toContain("unknown option '--modle': did you mean --model?");
    expect(r.out).not.toContain("still open");
    expect(r.code).toBe(2);
  }, 30_000);

  it.skipIf(!hasScript)("the interactive UI says a bad --resume id or a missing key while Ink is still loading, and exits", async () => {
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const repo = makeRepo();
    // module hooks that hold the import of ink for a minute: the answer must not wait for it
    const hooks = join(home, "slow-ink.mjs");
    writeFileSync(hooks, 'export async function resolve(s, c, next) {\n  if (s === "ink") await new Promise((r) => setTimeout(r, 60_000));\n  return next(s, c);\n}\n');
    const register = join(home, "register.mjs");
    writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const inTerminal = (args: string[], env: NodeJS.ProcessEnv) =>
      new Promise<{ code: number | null; out: string }>((done) => {
        const command = [process.execPath, "--import", register, CLI, ...args].map((a) => JSON.stringify(a)).join(" ");
        const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
        let out = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (out += d));
        // a run that waits for ink is stopped here, and fails below
        const guard = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 20_000);
        child.on("close", (code) => (clearTimeout(guard), done({ code, out })));
      });
    const bad = await inTerminal(["--resume", "zzzz"], { ...baseEnv(home), OPENAI_API_KEY: "k" });
    expect(bad.out).toContain('"zzzz" is not a session id');
    expect(bad.code).toBe(2);
    const noKey = await inTerminal(["--model", "openai-compatible/m"], baseEnv(home));
    expect(noKey.out).toContain("missing API key for openai-compatible: set OPENAI_API_KEY");
    expect(noKey.code).toBe(2);
  }, 60_000);

  it("--sessions to a non-blocking pipe whose reader is behind: what a blocking write cannot take goes through process.stdout, all of it, in order", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const server = await startMockModelServer();
    server.push({ text: "ok" });
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const made = await runCli(["-p", "--model", "openai-compatible/m", "a prompt that titles every copy of this session"], { cwd: repo, env });
    await server.close();
    expect(made.code).toBe(0);
    // 1,200 copies list to ~150 KB, more than a pipe holds (64 KiB on Linux)
    const sessionsRoot = join(home, ".local", "share", "larik", "sessions");
    const dir = join(sessionsRoot, readdirSync(sessionsRoot)[0]!);
    const content = readFileSync(join(dir, readdirSync(dir)[0]!));
    for (let i = 0; i < 1200; i++) writeFileSync(join(dir, `20250101-000000-${i.toString(16).padStart(6, "0")}.jsonl`), content);
    const expected = await runCli(["--sessions"], { cwd: repo, env: baseEnv(home) });
    expect(expected.stdout.length).toBeGreaterThan(100_000);

    // stdout and stderr one pipe (`2>&1 | less`), and stderr made into a stream first, as a notice
    // would: libuv makes a pipe it opens non-blocking, and O_NONBLOCK belongs to the open pipe, so
    // fd 1 is non-blocking too (libuv had made the child's fds 0-2 blocking)
    const fifo = join(home, "out.fifo");
    execFileSync("mkfifo", [fifo]);
    const reader = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const writer = openSync(fifo, fsConstants.O_WRONLY);
    const preload = join(home, "stderr-first.cjs");
    writeFileSync(preload, "process.stderr;\n");
    const child = spawn(process.execPath, ["-r", preload, CLI, "--sessions"], { cwd: repo, env: baseEnv(home), stdio: ["ignore", writer, writer] });
    closeSync(writer);
    const exited = new Promise<number | null>((done) => child.on("close", done));
    // nothing reads for a while: the child meets the full pipe (EAGAIN) before it has written it all
    await new Promise((r) => setTimeout(r, 300));
    const chunks: Buffer[] = [];
    await new Promise<void>((done, fail) =>
      new Socket({ fd: reader, readable: true, writable: false }).on("data", (c: Buffer) => chunks.push(c)).on("end", done).on("error", fail),
    );
    expect(await exited).toBe(0);
    expect(Buffer.concat(chunks).toString("utf8")).toBe(expected.stdout);
  });

  it("--version and --help show on stderr why a configured plugin is missing", async () => {
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(join(home, ".config", "larik", "larik.config.ts"), 'export default { plugins: ["./nope.ts"] };\n');
    for (const flag of ["--version", "--help"]) {
      const r = await runCli([flag], { cwd: home, env: baseEnv(home) });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/^! .*plugin "\.\/nope\.ts" skipped/m);
    }
  });

  it("--help lists what a config's plugin contributes, and names a plugin that failed", async () => {
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(
      join(home, ".config", "larik", "larik.config.ts"),
      [
        'import { definePlugin, defineConfig } from "larik";',
        'import { z } from "zod";',
        "const extras = definePlugin({",
        '  name: "extras",',
        "  setup(ctx) {",
        '    ctx.tools.register({ name: "shout", description: "Upper-cases text", kind: "read", input: z.object({ text: z.string() }), async run() { return { content: "" }; } });',
        '    ctx.commands.register({ name: "standup", description: "Drafts the standup notes", async run() {} });',
        '    ctx.tools.register({ name: "grep", description: "Our grep", kind: "read", input: z.object({}), async run() { return { content: "" }; } });',
        '    ctx.commands.register({ name: "cost", description: "Our costs", async run() {} });',
        '    ctx.providers.register({ name: "acme", keyEnv: ["ACME_KEY"], create() { throw new Error("not used here"); } });',
        "  },",
        "});",
        'const broken = definePlugin({ name: "broken", setup() { throw new Error("cannot start"); } });',
        "export default defineConfig({ plugins: [extras, broken] });",
        "",
      ].join("\n"),
    );
    const r = await runCli(["--help"], { cwd: home, env: baseEnv(home) });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('plugin "broken" failed in setup: cannot start; started without it');
    expect(r.stdout).toMatch(/^tools:\n {2}.*\bshout\b/m);
    // a name registered again replaces the built-in one: help says whose is in force
    expect(r.stdout).toMatch(/^ {2}.*\bgrep \(plugin extras, replacing core-tools's\), /m);
    expect(r.stdout).toMatch(/^ {2}\/cost +Our costs \(plugin extras, replacing commands's\)$/m);
    expect(r.stdout).toMatch(/^ {2}\/standup +Drafts the standup notes$/m);
    expect(r.stdout).toMatch(/^ {2}acme +key: ACME_KEY$/m);
    expect(r.stdout).toMatch(/^plugins: .*\bextras$/m);
    expect(r.stdout).toMatch(/^failed plugins: broken$/m);
  });

  it("--help lists what the loaded plugins contribute", async () => {
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const r = await runCli(["--help"], { cwd: home, env: baseEnv(home) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("-p, --print");
    // the way out of the two dash errors ("see larik --help") is in the help
    expect(r.stdout).toContain('a value that starts with "-": --model=-x; a prompt that does: larik -p -- "-fix it"');
    expect(r.stdout).toContain("larik serve");
    // and the variable that points a provider at another server (a local one, a proxy)
    expect(r.stdout).toMatch(/^ +openai-compatible +key: OPENAI_API_KEY, server: OPENAI_BASE_URL$/m);
    expect(r.stdout).toMatch(/^ +anthropic +key: ANTHROPIC_API_KEY, server: ANTHROPIC_BASE_URL$/m);
    expect(r.stdout).toMatch(/tools:\n .*edit.*bash/);
    // the usage lines and the subcommand lines share one column
    const usage = r.stdout.split("\n").filter((l) => /^  larik /.test(l));
    expect(usage.length).toBeGreaterThanOrEqual(3);
    for (const l of usage) expect(l.slice(35, 36)).toMatch(/\S/);
    // every description of the slash commands starts in one column; a long argument list puts
    // it on the next line
    const cmds = r.stdout.slice(r.stdout.indexOf("slash commands:\n")).split("\n\n")[0]!.split("\n").slice(1);
    const col = cmds[0]!.indexOf("List hooks");
    for (const [k, l] of cmds.entries()) {
      if (!l.startsWith("  /")) continue;
      const sameLine = l.slice(col - 2, col) === "  " && l[col] !== " ";
      expect(sameLine || /^ +\S/.test(cmds[k + 1] ?? "") && cmds[k + 1]!.search(/\S/) === col, l).toBe(true);
    }
    expect(cmds[cmds.findIndex((l) => l.startsWith("  /mcp [approve")) + 1]).toMatch(new RegExp(`^ {${col}}MCP servers`));
    // the folders in force: baseEnv puts config and data in XDG folders under this home
    expect(r.stdout).toContain("config: ~/.config/larik/config.json (personal)");
    expect(r.stdout).toContain("config code: ~/.config/larik/larik.config.ts (personal), larik.config.ts in the project");
    expect(r.stdout).toContain("sessions: ~/.local/share/larik/sessions/<dir>-<hash>/<id>.jsonl");
    const xdg = mkdtempSync(join(tmpdir(), "larik-e2e-xdg-"));
    const r2 = await runCli(["--help"], { cwd: home, env: { ...baseEnv(home), XDG_CONFIG_HOME: join(xdg, "cfg"), XDG_DATA_HOME: join(xdg, "data") } });
    expect(r2.stdout).toContain(`config: ${join(xdg, "cfg", "larik", "config.json")} (personal)`);
    expect(r2.stdout).toContain(`config code: ${join(xdg, "cfg", "larik", "larik.config.ts")} (personal)`);
    expect(r2.stdout).toContain(`sessions: ${join(xdg, "data", "larik", "sessions")}/<dir>-<hash>/<id>.jsonl`);
  });
});

/**
 * Runs the CLI with stdout a pipe whose reading end this process closes, as `| head -1` does
 * after its first line (`first-chunk`), or as `| true` does before anything arrives (`start`).
 */
function runReaderGone(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; close: "first-chunk" | "start" | RegExp },
): Promise<{ code: number | null; first: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let first = "";
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    if (opts.close === "start") child.stdout!.destroy();
    else if (opts.close instanceof RegExp) {
      // what arrived until a chunk matched
      const pattern = opts.close;
      const onData = (d: Buffer) => {
        first += String(d);
        if (!pattern.test(first)) return;
        child.stdout!.off("data", onData);
        child.stdout!.destroy();
      };
      child.stdout!.on("data", onData);
    } else {
      child.stdout!.once("data", (d) => {
        first = String(d);
        child.stdout!.destroy();
      });
    }
    child.on("close", (code) => resolvePromise({ code, first, stderr }));
  });
}

describe("a reader that goes away (| head -1)", () => {
  let server: MockModelServer;
  beforeAll(async () => {
    server = await startMockModelServer();
  });
  afterAll(() => server?.close());

  /** The session files under `home`'s data folder: the file, and every other name beside it. */
  function sessionFile(home: string): { file: string; others: string[] } {
    const sessionsRoot = join(home, ".local", "share", "larik", "sessions");
    const dir = join(sessionsRoot, readdirSync(sessionsRoot)[0]!);
    const [name, ...others] = readdirSync(dir).sort((a, b) => Number(b.endsWith(".jsonl")) - Number(a.endsWith(".jsonl")));
    return { file: join(dir, name!), others };
  }

  it("-p stops streaming the answer, quietly, with status 141; the session keeps what arrived and resumes", async () => {
    // longer than a pipe holds (64 KiB on Linux), so that writes still follow the reader's exit
    const long = Array.from({ length: 5000 }, (_, i) => `line ${i} of a reply too long to read`).join("\n");
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.push({ text: long });
    const r = await runReaderGone(["-p", "--model", "openai-compatible/m", "hi"], { cwd: repo, env, close: "first-chunk" });
    expect(r.stderr).toBe(""); // no stack trace, nor any other line
    expect(r.code).toBe(141);
    expect(r.first).toMatch(/^line 0 of/);

    // whole JSONL, unlocked, with the prompt and the reply as far as it had come (or all of it)
    const { file, others } = sessionFile(home);
    expect(others).toEqual([]);
    const entries = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(entries[0].type).toBe("meta");
    const messages = entries.filter((e) => e.type === "message").map((e) => e.message);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(messages[0].blocks.at(-1).text).toBe("hi");
    const reply = messages[1].blocks.map((b: { text: string }) => b.text);
    expect(reply[0]).toMatch(/^line 0 of a reply too long to read\nline 1 of/);
    expect(reply.length === 1 ? reply[0] === long : reply[1] === "[interrupted: the reader of the output went away]" && long.startsWith(reply[0])).toBe(true);

    server.push({ text: "resumed" });
    const r2 = await runCli(["-c", "-p", "again"], { cwd: repo, env });
    expect(r2.code).toBe(0);
    expect(r2.stdout).toBe("resumed\n");
    const sent = server.requests.at(-1)!.body.messages;
    expect(sent.map((m: { role: string }) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(sent[2].content).toContain("line 0 of a reply too long to read");
  });

  it("--output json: the finished reply that was printed is kept whole, its tool_use answered", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    // the reader leaves after the reply's line; the tool's end, a second later, is the write that
    // finds it gone (or its watch on the socket, sooner)
    server.push({ text: "Waiting a second.", tools: [{ id: "call_1", name: "bash", input: { command: "sleep 1" } }] });
    const args = ["-p", "--mode", "yolo", "--model", "openai-compatible/m", "--output", "json", "wait"];
    const r = await runReaderGone(args, { cwd: repo, env, close: /"assistant_message"/ });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(141);
    expect(r.first).toMatch(/^\{"type":"init",/);

    const { file, others } = sessionFile(home);
    expect(others).toEqual([]);
    const entries = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const messages = entries.filter((e) => e.type === "message").map((e) => e.message);
    expect(messages[1]).toMatchObject({
      role: "assistant",
      blocks: [{ type: "text", text: "Waiting a second." }, { type: "tool_use", id: "call_1", name: "bash" }],
    });
    expect(messages[2]).toMatchObject({ role: "user", blocks: [{ type: "tool_result", id: "call_1" }] });
    // a second model request, if it had started, was cancelled and recorded as interrupted
    for (const m of messages.slice(3)) expect(m).toMatchObject({ role: "assistant", blocks: [{ text: "[interrupted: the reader of the output went away]" }] });

    // the cancelled request may have taken a scripted reply or not: check what -c sends, not what it prints
    server.push({ text: "resumed" });
    const r2 = await runCli(["-c", "-p", "again"], { cwd: repo, env });
    expect(r2.code).toBe(0);
    const sent = server.requests.at(-1)!.body.messages;
    expect(sent.find((m: { role: string }) => m.role === "assistant").tool_calls[0].id).toBe("call_1");
    expect(sent.find((m: { role: string }) => m.role === "tool").tool_call_id).toBe("call_1");
    expect(JSON.stringify(sent.at(-1))).toContain("again");
  });

  it("--sessions stops quietly after the reader's first chunk; --help and --version when it leaves at once", async () => {
    const repo = makeRepo();
    const home = mkdtempSync(join(tmpdir(), "larik-e2e-home-"));
    const env = { ...baseEnv(home), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.push({ text: "ok" });
    const prompt = "a first prompt long enough to fill the title column of the sessions list, 80 chars";
    expect((await runCli(["-p", "--model", "openai-compatible/m", prompt], { cwd: repo, env })).code).toBe(0);
    // 4000 copies of that session: a listing of ~500 KB, more than the pipe holds (a socket pair
    // from Node's child_process: ~200 KB queued on the writer's side, then what the reader took)
    const sessionsRoot = join(home, ".local", "share", "larik", "sessions");
    const dir = join(sessionsRoot, readdirSync(sessionsRoot)[0]!);
    const content = readFileSync(join(dir, readdirSync(dir)[0]!));
    for (let i = 0; i < 4000; i++) writeFileSync(join(dir, `20250101-000000-${i.toString(16).padStart(6, "0")}.jsonl`), content);

    const r = await runReaderGone(["--sessions"], { cwd: repo, env, close: "first-chunk" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(141);
    expect(r.first).toMatch(/^\d{8}-\d{6}-[0-9a-f]{6} {2}\d{4}-\d\d-\d\d \d\d:\d\d {2}a first prompt/);
    for (const flag of ["--help", "--version"]) {
      const q = await runReaderGone([flag], { cwd: repo, env, close: "start" });
      expect([flag, q.stderr, q.code]).toEqual([flag, "", 141]);
    }
  });
});
