/**
 * End to end in a real terminal: the built `larik` (dist/cli.cjs once the default preset carries
 * `tui`; until then a tsup build of the CLI with `tui` appended to the default preset, see
 * launcher-build.ts) runs inside tmux against the local mock model server (OpenAI Chat Completions wire format). The test types into the
 * pane with `send-keys` and reads it with `capture-pane`: a streamed reply, a permission prompt
 * answered, a running tool interrupted with esc, the palette, and quitting with the session id.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startMockModelServer, type MockModelServer } from "../../test/fakes/mock-model-server.js";
import { tuiProgram, type TuiProgram } from "./launcher-build.js";
import { PROMPT_TYPE_AHEAD_MS } from "./controller.js";

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const SOCKET = `larik-tui-e2e-${process.pid}`;

function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8" });
}

/** The pane's text including scrollback. */
function capture(session: string): string {
  return tmux("capture-pane", "-p", "-J", "-t", session, "-S", "-500");
}

async function waitPane(session: string, want: string | RegExp, ms = 15_000): Promise<string> {
  const until = Date.now() + ms;
  for (;;) {
    const text = capture(session);
    if (typeof want === "string" ? text.includes(want) : want.test(text)) return text;
    if (Date.now() > until) throw new Error(`timed out waiting for ${String(want)} in the pane:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const pause = (ms = 150) => new Promise((r) => setTimeout(r, ms));

/**
 * `larik` run headless with `args`, its output collected: asynchronously, since the mock model
 * server it talks to lives in this process (spawnSync would block the server's answers).
 */
function runHeadless(cli: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

describe.skipIf(!hasTmux)("tui end to end in tmux", () => {
  let server: MockModelServer;
  let program: TuiProgram;

  beforeAll(async () => {
    program = await tuiProgram();
    server = await startMockModelServer();
  }, 120_000);

  afterAll(async () => {
    try {
      tmux("kill-server");
    } catch {
      // no server left
    }
    await server?.close();
  });

  it("streams a reply, answers a permission prompt, interrupts with esc, uses the palette and quits", async () => {
    const base = mkdtempSync(join(tmpdir(), "larik-tui-e2e-"));
    const repo = join(base, "repo");
    const home = join(base, "home");
    mkdirSync(repo);
    mkdirSync(home);
    writeFileSync(join(repo, "README.md"), "# demo\n");
    // No sandbox, so bash always asks: with one, whether it asks hung on the sandbox probe, and a
    // probe timing out under load left the test typing esc into a prompt it had not seen yet.
    mkdirSync(join(home, ".config", "larik"), { recursive: true });
    writeFileSync(join(home, ".config", "larik", "config.json"), JSON.stringify({ sandbox: { enabled: false } }));
    execFileSync("git", ["init", "-q"], { cwd: repo });
    server.requests.length = 0;
    server.push(
      { text: "Streaming works: **bold** text and `code`." },
      { text: "Writing a file.", tools: [{ id: "call_1", name: "write", input: { path: "notes.txt", content: "from the model\n" } }] },
      { text: "Now waiting.", tools: [{ id: "call_2", name: "bash", input: { command: "sleep 30" } }] },
      { text: "A fresh start." },
    );
    // env -i: nothing of this process's environment leaks in; CI in particular would make Ink
    // print only finished output (ink/build/ink.js `isInCi`)
    const env = [
      `PATH=${process.env.PATH}`,
      `HOME=${home}`,
      `XDG_CONFIG_HOME=${join(home, ".config")}`,
      `XDG_DATA_HOME=${join(home, ".local", "share")}`,
      "TERM=tmux-256color",
      "LANG=C.UTF-8",
      `OPENAI_BASE_URL=${server.url}/v1`,
      "OPENAI_API_KEY=test-key",
    ];
    const cmd = ["env", "-i", ...env, process.execPath, program.cli, "--model", "openai-compatible/m"].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
    const s = "main";
    tmux("new-session", "-d", "-s", s, "-x", "120", "-y", "40", "-c", repo, `${cmd}; echo "[exit $?]"; sleep 60`);

    // start-up: composer and footer
    await waitPane(s, "openai-compatible/m");
    await waitPane(s, "ask anything");

    // a prompt and its streamed, rendered reply
    tmux("send-keys", "-t", s, "-l", "say hello");
    await pause();
    tmux("send-keys", "-t", s, "Enter");
    let pane = await waitPane(s, "Streaming works: bold text and code.");
    expect(pane).toContain("say hello");
    expect(pane).not.toContain("**bold**");

    // a write asks in default mode: the prompt shows the diff; allow it
    tmux("send-keys", "-t", s, "-l", "do it");
    await pause();
    tmux("send-keys", "-t", s, "Enter");
    pane = await waitPane(s, "Allow write?");
    // the diff preview is computed after the prompt opens (it reads the file): wait for it
    pane = await waitPane(s, "+from the model");
    expect(pane).toMatch(/1\. Yes/);
    // a prompt takes no answer for its first half second (type-ahead, PROMPT_TYPE_AHEAD_MS)
    await pause(PROMPT_TYPE_AHEAD_MS + 100);
    tmux("send-keys", "-t", s, "y");
    await waitPane(s, "created notes.txt");
    expect(readFileSync(join(repo, "notes.txt"), "utf8")).toBe("from the model\n");
    // then a long command, allowed at its prompt; esc interrupts it while it runs
    await waitPane(s, "Allow bash?");
    await pause(PROMPT_TYPE_AHEAD_MS + 100);
    tmux("send-keys", "-t", s, "y");
    await waitPane(s, /bash sleep 30[\s\S]*esc to interrupt/);
    tmux("send-keys", "-t", s, "Escape");
    pane = await waitPane(s, "interrupted by user");
    await waitPane(s, "ask anything");
    expect(server.requests).toHaveLength(3);

    // the palette: filter, tab completes, enter runs
    tmux("send-keys", "-t", s, "-l", "/sk");
    pane = await waitPane(s, /❯ \/skills/);
    expect(pane).toContain("tab completes");
    tmux("send-keys", "-t", s, "Tab");
    await waitPane(s, "› /skills ");
    tmux("send-keys", "-t", s, "Enter");
    await waitPane(s, /› \/skills\n/);
    // the live region shrank when the palette closed: no stale rows of it may remain
    await pause(300);
    const visible = tmux("capture-pane", "-p", "-t", s);
    expect(visible.match(/^╭/gm)).toHaveLength(1);
    expect(visible).not.toContain("tab completes");

    // /new (the commands plugin of the default preset) switches the TUI to a fresh session
    tmux("send-keys", "-t", s, "-l", "/new");
    await pause();
    tmux("send-keys", "-t", s, "Enter");
    pane = await waitPane(s, /^new session (\S+)/m);
    const fresh = /^new session (\S+)/m.exec(pane)![1]!;

    // a prompt in it, then quit with ctrl+d on the empty composer: the current session's id is
    // printed for --resume (a session without a prompt would have nothing to resume)
    tmux("send-keys", "-t", s, "-l", "start over");
    await pause();
    tmux("send-keys", "-t", s, "Enter");
    await waitPane(s, "A fresh start.");
    await pause(300);
    tmux("send-keys", "-t", s, "C-d");
    pane = await waitPane(s, /resume this session with: larik --resume (\S+)/);
    await waitPane(s, "[exit 0]");
    const id = /larik --resume (\S+)/.exec(pane)![1]!;
    expect(id).toBe(fresh);
    const sessions = join(home, ".local", "share", "larik", "sessions");
    expect(existsSync(sessions)).toBe(true);
    const files = readdirSync(sessions, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));
    expect(files.some((f) => f.includes(id))).toBe(true);
    expect(files).toHaveLength(2);
  }, 120_000);

  it("quitting a session that never got a prompt offers nothing to resume", async () => {
    const base = mkdtempSync(join(tmpdir(), "larik-tui-e2e-"));
    const home = join(base, "home");
    mkdirSync(home);
    const env = [`PATH=${process.env.PATH}`, `HOME=${home}`, `XDG_CONFIG_HOME=${join(home, ".config")}`, `XDG_DATA_HOME=${join(home, "data")}`, "TERM=tmux-256color", "LANG=C.UTF-8", `OPENAI_BASE_URL=${server.url}/v1`, "OPENAI_API_KEY=k"];
    const cmd = ["env", "-i", ...env, process.execPath, program.cli, "--model", "openai-compatible/m"].map((a) => `'${a}'`).join(" ");
    tmux("new-session", "-d", "-s", "empty", "-x", "100", "-y", "30", "-c", base, `${cmd}; echo "[exit $?]"; sleep 60`);
    await waitPane("empty", "ask anything");
    await pause(300);
    tmux("send-keys", "-t", "empty", "C-d");
    const pane = await waitPane("empty", "[exit 0]");
    expect(pane).not.toContain("resume this session");
    tmux("kill-session", "-t", "empty");
  }, 60_000);

  it("a prompt on the command line (larik [flags] [prompt]) is the session's first prompt", async () => {
    const base = mkdtempSync(join(tmpdir(), "larik-tui-e2e-"));
    const home = join(base, "home");
    mkdirSync(home);
    server.requests.length = 0;
    server.push({ text: "Hello from the first prompt." });
    const env = [`PATH=${process.env.PATH}`, `HOME=${home}`, `XDG_CONFIG_HOME=${join(home, ".config")}`, `XDG_DATA_HOME=${join(home, "data")}`, "TERM=tmux-256color", "LANG=C.UTF-8", `OPENAI_BASE_URL=${server.url}/v1`, "OPENAI_API_KEY=k"];
    const cmd = ["env", "-i", ...env, process.execPath, program.cli, "--model", "openai-compatible/m", "say hi from argv"].map((a) => `'${a}'`).join(" ");
    tmux("new-session", "-d", "-s", "argv", "-x", "100", "-y", "30", "-c", base, `${cmd}; echo "[exit $?]"; sleep 60`);
    const pane = await waitPane("argv", "Hello from the first prompt.");
    expect(pane).toContain("say hi from argv");
    expect(JSON.stringify(server.requests[0]!.body.messages.at(-1))).toContain("say hi from argv");
    await waitPane("argv", "ask anything");
    await pause(300);
    tmux("send-keys", "-t", "argv", "C-d");
    await waitPane("argv", "[exit 0]");
    tmux("kill-session", "-t", "argv");
  }, 60_000);

  it("a closed terminal (SIGHUP) ends the session cleanly: the running command stops, no placeholder stays", async () => {
    const base = mkdtempSync(join(tmpdir(), "larik-tui-e2e-"));
    const project = join(base, "project"); // not a git repository: the sandbox makes a .git placeholder
    const home = join(base, "home");
    mkdirSync(project);
    mkdirSync(home);
    writeFileSync(join(project, "a.txt"), "a\n");
    server.push({ text: "Waiting.", tools: [{ id: "call_1", name: "bash", input: { command: "sleep 30" } }] });
    const env = [`PATH=${process.env.PATH}`, `HOME=${home}`, `XDG_CONFIG_HOME=${join(home, ".config")}`, `XDG_DATA_HOME=${join(home, "data")}`, "TERM=tmux-256color", "LANG=C.UTF-8", `OPENAI_BASE_URL=${server.url}/v1`, "OPENAI_API_KEY=k"];
    const cmd = ["env", "-i", ...env, process.execPath, program.cli, "--model", "openai-compatible/m", "--mode", "yolo"].map((a) => `'${a}'`).join(" ");
    // typed into an interactive shell, as a user runs it
    tmux("new-session", "-d", "-s", "hup", "-x", "100", "-y", "30", "-c", project, "bash --norc --noprofile -i");
    tmux("send-keys", "-t", "hup", "-l", cmd);
    tmux("send-keys", "-t", "hup", "Enter");
    await waitPane("hup", "ask anything");
    tmux("send-keys", "-t", "hup", "-l", "wait");
    await pause();
    tmux("send-keys", "-t", "hup", "Enter");
    await waitPane("hup", /bash sleep 30[\s\S]*esc to interrupt/);
    const sessions = join(home, "data", "larik", "sessions");
    const lock = readdirSync(sessions, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl.lock"))!;
    const pid = Number(readFileSync(join(sessions, lock), "utf8")); // the session's writer: larik
    tmux("kill-session", "-t", "hup"); // the terminal goes: SIGHUP
    // The shell often passes the hangup on to its job as well, ~1 ms later; here always.
    await pause(5);
    process.kill(pid, "SIGHUP");
    // the run ends its turn: the session records the cancelled call's result, and the project is as it was
    let entries = "";
    for (let i = 0; i < 100; i++) {
      const files = readdirSync(sessions, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));
      entries = files.length ? readFileSync(join(sessions, files[0]!), "utf8") : "";
      if (entries.includes('"type":"tool_result","id":"call_1"') && readdirSync(project).length === 1) break;
      await pause(100);
    }
    expect(entries).toContain('"type":"tool_result","id":"call_1"');
    expect(readdirSync(project)).toEqual(["a.txt"]);
  }, 60_000);

  it("a gone terminal whose hangup is trapped by the shell that started larik ends the session all the same", async () => {
    const base = mkdtempSync(join(tmpdir(), "larik-tui-e2e-"));
    const home = join(base, "home");
    mkdirSync(home);
    server.requests.length = 0;
    server.push({ text: "Waiting.", tools: [{ id: "call_1", name: "bash", input: { command: "sleep 30" } }] }, { text: "nobody sees this" });
    const env = [`PATH=${process.env.PATH}`, `HOME=${home}`, `XDG_CONFIG_HOME=${join(home, ".config")}`, `XDG_DATA_HOME=${join(home, "data")}`, "TERM=tmux-256color", "LANG=C.UTF-8", `OPENAI_BASE_URL=${server.url}/v1`, "OPENAI_API_KEY=k"];
    const cmd = ["env", "-i", ...env, process.execPath, program.cli, "--model", "openai-compatible/m", "--mode", "yolo"].map((a) => `'${a}'`).join(" ");
    // the shell takes the hangup (a wrapper script with `trap … HUP`): larik sees only stdin end
    writeFileSync(join(base, "wrapper.sh"), `trap "" HUP\n${cmd}\necho "exit $?" > ${join(base, "status")}\n`);
    tmux("new-session", "-d", "-s", "trapped", "-x", "100", "-y", "30", "-c", base, `sh ${join(base, "wrapper.sh")}`);
    await waitPane("trapped", "ask anything");
    tmux("send-keys", "-t", "trapped", "-l", "wait");
    await pause();
    tmux("send-keys", "-t", "trapped", "Enter");
    await waitPane("trapped", /bash sleep 30[\s\S]*esc to interrupt/);
    tmux("kill-session", "-t", "trapped");
    const sessions = join(home, "data", "larik", "sessions");
    let entries = "";
    for (let i = 0; i < 100 && !existsSync(join(base, "status")); i++) await pause(100);
    const files = readdirSync(sessions, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));
    entries = readFileSync(join(sessions, files[0]!), "utf8");
    // the turn ended there: its call answered, and no further request with no one to see it
    expect(entries).toContain('"type":"tool_result","id":"call_1"');
    expect(server.requests).toHaveLength(1);
    // 129 as for a hangup, or Node 20's abort restoring the gone terminal at exit (nodejs/node#51519)
    expect(readFileSync(join(base, "status"), "utf8")).toMatch(/^exit (129|134)\n$/);
  }, 60_000);

  it("shows the same tool line as larik -p for the same call, and sends a dotted /path prompt to the model as -p does", async () => {
    const base = mkdtempSync(join(tmpdir(), "larik-tui-e2e-"));
    const repo = join(base, "repo");
    const home = join(base, "home");
    mkdirSync(join(repo, "src"), { recursive: true });
    mkdirSync(home);
    writeFileSync(join(repo, "README.md"), "# demo\n");
    writeFileSync(join(repo, "src", "a.ts"), "// TODO: fix\n");
    // a server of its own: a reply an earlier test left unconsumed would answer this one's runs
    const server = await startMockModelServer();
    onTestFinished(() => server.close());
    const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, "data"), LANG: "C.UTF-8", OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    const todos = [
      { content: "one", status: "completed" },
      { content: "two", status: "in_progress" },
      { content: "three", status: "pending" },
    ];
    // a tool with its own summary (grep adds its glob filter) and one with none (todo_write)
    const script = () => [
      { tools: [{ id: "c1", name: "grep", input: { pattern: "TODO", path: "src", glob: "*.ts" } }] },
      { tools: [{ id: "c2", name: "todo_write", input: { todos } }] },
      { text: "Looked." },
    ];
    server.requests.length = 0;
    server.push(...script());
    const prompt = "/README.md is stale";
    const headless = await runHeadless(program.cli, ["-p", "--model", "openai-compatible/m", prompt], repo, env);
    expect(headless.code).toBe(0);
    const lines = headless.stderr.split("\n").filter((l) => l.startsWith("→ "));
    expect(lines).toEqual(["→ grep TODO in src (*.ts)", "→ todo_write 3 items"]);
    expect(JSON.stringify(server.requests[0]!.body.messages)).toContain(prompt);

    server.requests.length = 0;
    server.push(...script());
    const envList = Object.entries({ ...env, TERM: "tmux-256color" }).map(([k, v]) => `${k}=${v}`);
    const cmd = ["env", "-i", ...envList, process.execPath, program.cli, "--model", "openai-compatible/m"].map((a) => `'${a}'`).join(" ");
    tmux("new-session", "-d", "-s", "parity", "-x", "120", "-y", "40", "-c", repo, `${cmd}; echo "[exit $?]"; sleep 60`);
    await waitPane("parity", "ask anything");
    tmux("send-keys", "-t", "parity", "-l", prompt);
    await pause();
    tmux("send-keys", "-t", "parity", "Enter");
    const pane = await waitPane("parity", "Looked.");
    expect(pane).not.toContain("unknown command");
    expect(JSON.stringify(server.requests[0]!.body.messages)).toContain(prompt);
    // the TUI's row is `● name summary`: the summary is headless's, character for character
    for (const l of lines) expect(pane).toContain(`● ${l.slice(2)}`);
    tmux("kill-session", "-t", "parity");
  }, 60_000);

  it("a turn stopped by SIGTERM is recorded with that reason, and the session resumes", async () => {
    const base = mkdtempSync(join(tmpdir(), "larik-tui-e2e-"));
    const project = join(base, "project");
    const home = join(base, "home");
    mkdirSync(project);
    mkdirSync(home);
    // a server of its own: a reply an earlier test left unconsumed would answer this one's runs
    const server = await startMockModelServer();
    onTestFinished(() => server.close());
    const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, "data"), LANG: "C.UTF-8", OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" };
    server.requests.length = 0;
    // the reply streams and never ends: the model is still writing when the kill comes
    server.push({ text: "Partial answer so far", hold: true }, { text: "Resumed fine." });
    const envList = Object.entries({ ...env, TERM: "tmux-256color" }).map(([k, v]) => `${k}=${v}`);
    const cmd = ["env", "-i", ...envList, process.execPath, program.cli, "--model", "openai-compatible/m"].map((a) => `'${a}'`).join(" ");
    tmux("new-session", "-d", "-s", "term", "-x", "100", "-y", "30", "-c", project, `${cmd}; echo "[exit $?]"; sleep 60`);
    await waitPane("term", "ask anything");
    tmux("send-keys", "-t", "term", "-l", "start");
    await pause();
    tmux("send-keys", "-t", "term", "Enter");
    await waitPane("term", "Partial answer so far");
    const sessions = join(home, "data", "larik", "sessions");
    const lock = readdirSync(sessions, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl.lock"))!;
    process.kill(Number(readFileSync(join(sessions, lock), "utf8")), "SIGTERM");
    await waitPane("term", "[exit 143]");
    const file = readdirSync(sessions, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl"))!;
    const entries = readFileSync(join(sessions, file), "utf8");
    // what stopped the turn, as `larik -p` records it; not "interrupted by user"
    expect(entries).toContain("Partial answer so far");
    expect(entries).toContain("[interrupted: stopped by SIGTERM]");
    expect(entries).not.toContain("interrupted by user");
    expect(existsSync(join(sessions, lock))).toBe(false);
    tmux("kill-session", "-t", "term");
    // resumable: the next turn carries on from it, the model reading why the last one stopped
    const id = /([^/\\]+)\.jsonl$/.exec(file)![1]!;
    const resumed = await runHeadless(program.cli, ["-p", "--model", "openai-compatible/m", "--resume", id, "go on"], project, env);
    expect(resumed.stderr).toBe("");
    expect(resumed.stdout).toContain("Resumed fine.");
    expect(JSON.stringify(server.requests.at(-1)!.body.messages)).toContain("[interrupted: stopped by SIGTERM]");
  }, 60_000);

  it("ctrl+c twice quits", async () => {
    const base = mkdtempSync(join(tmpdir(), "larik-tui-e2e-"));
    const home = join(base, "home");
    mkdirSync(home);
    const env = [`PATH=${process.env.PATH}`, `HOME=${home}`, `XDG_CONFIG_HOME=${join(home, ".config")}`, `XDG_DATA_HOME=${join(home, "data")}`, "TERM=tmux-256color", "LANG=C.UTF-8", `OPENAI_BASE_URL=${server.url}/v1`, "OPENAI_API_KEY=k"];
    const cmd = ["env", "-i", ...env, process.execPath, program.cli, "--model", "openai-compatible/m"].map((a) => `'${a}'`).join(" ");
    tmux("new-session", "-d", "-s", "quit", "-x", "100", "-y", "30", "-c", base, `${cmd}; echo "[exit $?]"; sleep 60`);
    await waitPane("quit", "ask anything");
    tmux("send-keys", "-t", "quit", "-l", "draft");
    await waitPane("quit", "› draft");
    tmux("send-keys", "-t", "quit", "C-c");
    await waitPane("quit", "press ctrl+c again to quit");
    expect(capture("quit")).not.toContain("› draft");
    tmux("send-keys", "-t", "quit", "C-c");
    await waitPane("quit", "[exit 0]");
  }, 60_000);
});

if (!hasTmux) {
  describe("tui end to end in tmux", () => {
    it.skip("skipped: tmux is not installed (CI installs it with apt-get install tmux)", () => {});
  });
}
