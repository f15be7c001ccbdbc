import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { toolInputSummary, type Sandbox } from "../../kernel/index.js";
import { bashOutputTool, killBashTool } from "./background.js";
import { BackgroundShells } from "./shells.js";
import { bashTool } from "./bash.js";
import { rawOutputTool } from "./raw_output.js";
import { cleanOutput } from "./shell.js";
import { call, makeContext, tempDir, type TestContext } from "./test-context.js";

let root: string;
let cleanup: () => Promise<void>;
let ctx: TestContext;
const shells = new BackgroundShells();
const bash = bashTool(() => shells);
const strays: number[] = [];

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
  ctx = makeContext(root);
});
afterEach(async () => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await cleanup();
});
afterAll(() => shells.killAll());

/** Alive = has a /proc entry that is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Polls `cond` every 20 ms, up to `tries` times. */
async function until(cond: () => boolean | Promise<boolean>, tries = 250): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe("bash", () => {
  it("reports the exit code and interleaves stdout and stderr in order", async () => {
    const r = await call(bash, { command: "echo a; echo b >&2; echo c; exit 3" }, ctx);
    expect(r.is_error).toBeFalsy();
    expect(r.content).toBe("a\nb\nc\n[exit code 3]");
    expect((await call(bash, { command: "true" }, ctx)).content).toBe("(no output)\n[exit code 0]");
  });

  it("runs in cwd with a non-interactive environment", async () => {
    const r = await call(bash, { command: 'pwd; echo "$PAGER $GIT_PAGER $TERM $NO_COLOR $GIT_TERMINAL_PROMPT"' }, ctx);
    expect(r.content).toBe(`${root}\ncat cat dumb 1 0\n[exit code 0]`);
  });

  it("closes stdin so prompts fail at once", async () => {
    const r = await call(bash, { command: 'read -r x; echo "read=$? x=[$x]"', timeout: 20 }, ctx);
    expect(r.is_error).toBeFalsy();
    expect(r.content).toBe("read=1 x=[]\n[exit code 0]");
  });

  it("strips ANSI colours and carriage-return redraws", async () => {
    const r = await call(bash, { command: "printf '\\033[1;31mred\\033[0m plain\\n'; printf 'progress 10%%\\rprogress 100%%\\n'; printf 'crlf\\r\\n'" }, ctx);
    expect(r.content).toBe("red plain\nprogress 100%\ncrlf\n[exit code 0]");
    expect(cleanOutput("\x1b]0;title\x07text\x1b(B")).toBe("text");
  });

  it("does not hang on a backgrounded child that keeps the output pipe open", async () => {
    const r = await call(bash, { command: "sleep 100 & echo $!; echo started", timeout: 20 }, ctx);
    const pid = Number(r.content.split("\n")[0]);
    strays.push(pid);
    expect(r.is_error).toBeFalsy();
    expect(r.content).toContain("started");
    expect(r.content).toContain("[exit code 0]");
    expect(r.content).toContain("still holds its output");
  });

  it("kills the whole process group on timeout", async () => {
    const pidFile = join(root, "child.pid");
    const r = await call(bash, { command: `sleep 60 & echo $! > ${pidFile}; echo waiting; sleep 60`, timeout: 1 }, ctx);
    expect(r.is_error).toBe(true);
    expect(r.content).toBe("waiting\n[timed out after 1 s; the command and its child processes were killed]");
    const pid = Number(await readFile(pidFile, "utf8"));
    strays.push(pid);
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("a timeout kills through the process group a child that dropped the environment (`env -i`), so no marker finds it", async () => {
    const pidFile = join(root, "bare.pid");
    const r = await call(bash, { command: `env -i sleep 60 & echo $! > ${pidFile}; sleep 60`, timeout: 1 }, ctx);
    expect(r.content).toContain("[timed out after 1 s; the command and its child processes were killed]");
    const pid = Number(await readFile(pidFile, "utf8"));
    strays.push(pid);
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("kills with SIGKILL what ignores the SIGTERM of a timeout, after the grace period", async () => {
    const pidFile = join(root, "pids");
    // an ignored signal stays ignored in the children, so neither bash nor sleep stops on SIGTERM
    const running = call(bash, { command: `trap "" TERM; sleep 60 & echo $! $$ > ${pidFile}; sleep 60`, timeout: 1 }, ctx);
    expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").includes(" "))).toBe(true);
    const pids = readFileSync(pidFile, "utf8").trim().split(" ").map(Number);
    strays.push(...pids);
    const r = await running;
    expect(r.is_error).toBe(true);
    expect(r.content).toBe("(no output)\n[timed out after 1 s; the command and its child processes were killed]");
    for (const pid of pids) expect(await until(() => !alive(pid))).toBe(true);
  }, 15_000);

  it("a timeout also kills what left the process group (`setsid`), found by the command's marker", async () => {
    const pidFile = join(root, "daemon.pid");
    // the grandchild starts its own session, so no kill of the command's group reaches it
    const r = await call(bash, { command: `setsid bash -c 'echo $$ > ${pidFile}; exec sleep 60' > /dev/null 2>&1 & sleep 60`, timeout: 1 }, ctx);
    expect(r.content).toContain("[timed out after 1 s; the command and its child processes were killed]");
    const pid = Number(readFileSync(pidFile, "utf8"));
    strays.push(pid);
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("what a finished command left outside its group (`setsid server &`) goes when the shells are killed", async () => {
    const own = new BackgroundShells();
    const pidFile = join(root, "daemon.pid");
    const r = await call(bashTool(() => own), { command: `setsid bash -c 'echo $$ > ${pidFile}; exec sleep 60' > /dev/null 2>&1 &`, timeout: 20 }, ctx);
    expect(r.content).toBe("(no output)\n[exit code 0]");
    expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "")).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    strays.push(pid);
    expect(alive(pid)).toBe(true);
    await own.killAll();
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("kills the whole process group when the call is aborted", async () => {
    const pidFile = join(root, "child.pid");
    const running = call(bash, { command: `sleep 60 & echo $! > ${pidFile}; sleep 60`, timeout: 60 }, ctx);
    expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "")).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    strays.push(pid);
    ctx.controller.abort();
    const r = await running;
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("[interrupted; the command and its child processes were killed]");
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("a call whose turn stopped before it started says why and runs nothing", async () => {
    ctx.controller.abort(new Error("interrupted: --timeout 2s reached"));
    const r = await call(bash, { command: `touch ${join(root, "ran")}` }, ctx);
    expect(r).toMatchObject({ is_error: true, content: "[interrupted: --timeout 2s reached; the command was not started]" });
    expect(existsSync(join(root, "ran"))).toBe(false);
  });

  it("caps long output with head and tail, and raw_output returns every byte", async () => {
    const r = await call(bash, { command: "seq 1 30000" }, ctx, "toolu_seq");
    const full = Array.from({ length: 30000 }, (_, i) => `${i + 1}\n`).join("");
    expect(Buffer.byteLength(r.content)).toBeLessThan(30_000);
    expect(r.content.startsWith("1\n2\n3\n")).toBe(true);
    expect(r.content).toMatch(/29999\n30000\n\[exit code 0\]$/);
    expect(r.content).toContain("bytes omitted");
    expect(r.content).toContain(`full output (${full.length} bytes): raw_output tool_call_id="toolu_seq"`);

    let got = "";
    let offset = 0;
    for (let i = 0; i < 20; i++) {
      const part = await call(rawOutputTool, { tool_call_id: "toolu_seq", offset }, ctx);
      expect(part.is_error).toBeFalsy();
      const m = /^bytes (\d+)-(\d+) of (\d+):\n([\s\S]*)\n\[(next offset: (\d+)|end of output)\]$/.exec(part.content);
      expect(m).not.toBeNull();
      got += m![4];
      if (!m![6]) break;
      offset = Number(m![6]);
    }
    expect(got).toBe(full);
  });

  it("raw_output returns binary output as base64 and explains unknown ids", async () => {
    await call(bash, { command: "printf 'a\\000b'" }, ctx, "toolu_bin");
    const r = await call(rawOutputTool, { tool_call_id: "toolu_bin" }, ctx);
    expect(r.content).toBe(`bytes 0-3 of 3, binary, base64:\n${Buffer.from("a\0b").toString("base64")}\n[end of output]`);
    const none = await call(rawOutputTool, { tool_call_id: "toolu_nope" }, ctx);
    expect(none.is_error).toBe(true);
    expect(none.content).toContain("no captured output for tool call toolu_nope");
  });

  it("builds the command through the sandbox unless sandbox is false", async () => {
    const seen: string[] = [];
    const sandbox: Sandbox = {
      name: "fake",
      probe: async () => ({ ok: true }),
      wrap(command, opts) {
        seen.push(command);
        return { file: "bash", args: ["-c", command], env: { ...opts.env, INSIDE_SANDBOX: "yes" } };
      },
    };
    const sctx = makeContext(root, { sandbox });
    expect((await call(bash, { command: 'echo "[$INSIDE_SANDBOX]"' }, sctx)).content).toBe("[yes]\n[exit code 0]");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('echo "[$INSIDE_SANDBOX]"');
    expect((await call(bash, { command: 'echo "[$INSIDE_SANDBOX]"', sandbox: false }, sctx)).content).toBe("[]\n[exit code 0]");
    expect(seen).toHaveLength(1);
  });

  /**
   * Runs a call through a fake sandbox whose `script` (bash) leaves the process group with
   * `setsid`, writes its pid to `pidFile` and names itself on the info pipe (fd 3), then cancels
   * the call once `settle` resolves; resolves to the call's result and that pid.
   */
  async function killThroughInfoPipe(script: (pidFile: string) => string, settle: () => Promise<unknown>) {
    const pidFile = join(root, "sandbox-init.pid");
    rmSync(pidFile, { force: true });
    const sandbox: Sandbox = {
      name: "fake",
      probe: async () => ({ ok: true }),
      wrap: (_command, opts) => ({ file: "bash", args: ["-c", script(pidFile)], env: opts.env, infoFd: 3, statusFd: 4 }),
    };
    const sctx = makeContext(root, { sandbox });
    const running = call(bash, { command: "true", timeout: 60 }, sctx);
    expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "")).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    strays.push(pid);
    await settle();
    sctx.controller.abort();
    return { r: await running, pid };
  }

  it("a kill reaches the process a sandbox names on its info pipe, also when the name arrives after the kill", async () => {
    // bwrap starts the sandbox in a new session (out of the group's reach) and names its init on
    // --info-fd; a kill in bwrap's first milliseconds can come before that name has been read.
    // Here the "sandbox" leaves the group at once, and says who it is only 0.4 s later.
    const { r, pid } = await killThroughInfoPipe(
      (pidFile) => `setsid bash -c 'echo $$ > ${pidFile}; sleep 0.4; echo "{\\"child-pid\\": $$}" >&3; exec 3>&- 4>&-; exec sleep 60' & exec 3>&- 4>&-; sleep 60`,
      async () => {},
    );
    expect(r.content).toContain("the command and its child processes were killed");
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("a kill reaches the process a sandbox named on its info pipe before the kill", async () => {
    // bwrap's usual case: the sandbox's init is named at once, and lives in its own session; the
    // name was written before the pid file, and the info pipe's reader is given a moment to take it
    const { r, pid } = await killThroughInfoPipe(
      (pidFile) => `setsid bash -c 'echo "{\\"child-pid\\": $$}" >&3; exec 3>&- 4>&-; echo $$ > ${pidFile}; exec sleep 60' & exec 3>&- 4>&-; sleep 60`,
      () => new Promise((res) => setTimeout(res, 300)),
    );
    expect(r.content).toContain("the command and its child processes were killed");
    expect(await until(() => !alive(pid))).toBe(true);
  });

  it("a process the command left running (`cmd &`) outlives the call and goes when the shells are killed", async () => {
    const own = new BackgroundShells();
    const r = await call(bashTool(() => own), { command: "sleep 300 & echo $!", timeout: 20 }, ctx);
    const pid = Number(r.content.split("\n")[0]);
    strays.push(pid);
    expect(r.content).toContain("[exit code 0]");
    await new Promise((res) => setTimeout(res, 200));
    expect(alive(pid)).toBe(true);
    expect(own.leftoverCount()).toBe(1);
    await own.killAll();
    expect(await until(() => !alive(pid))).toBe(true);
    expect(own.leftoverCount()).toBe(0);
  });

  it("forgets a command once what it left running has ended", async () => {
    const own = new BackgroundShells();
    await call(bashTool(() => own), { command: "sleep 1 > /dev/null 2>&1 &", timeout: 20 }, ctx);
    expect(own.leftoverCount()).toBe(1);
    expect(await until(() => own.leftoverCount() === 0)).toBe(true);
    await call(bashTool(() => own), { command: "true", timeout: 20 }, ctx);
    expect(own.leftoverCount()).toBe(0);
  });

  it("checkpoints checkpoint_paths first and refuses ones outside the project", async () => {
    const r = await call(bash, { command: "echo x > build.log", checkpoint_paths: ["build.log"] }, ctx);
    expect(r.content).toBe("(no output)\n[exit code 0]");
    expect(ctx.checkpoints).toEqual([join(root, "build.log")]);
    const out = await call(bash, { command: "echo never > ran.txt", checkpoint_paths: ["../elsewhere.log"] }, ctx);
    expect(out.is_error).toBe(true);
    expect(out.content).toContain("outside the project");
    expect(existsSync(join(root, "ran.txt"))).toBe(false);
  });

  it("says the working directory is gone instead of blaming bash, also in the background", async () => {
    const gone = join(root, "gone");
    mkdirSync(gone);
    const inGone = makeContext(gone, { projectRoot: root, sidecar: join(root, ".sc") });
    rmSync(gone, { recursive: true });
    for (const run_in_background of [false, true]) {
      const r = await call(bash, { command: "echo hi", run_in_background }, inGone);
      expect(r.is_error, r.content).toBe(true);
      expect(r.content).toBe(`could not start the command: the working directory ${gone} no longer exists, so no command can start there; recreate it (write a file into it) or ask the user`);
    }
  });

  it("validates the timeout range", async () => {
    const r = await call(bash, { command: "true", timeout: 601 }, ctx);
    expect(r.content).toMatch(/^INVALID_ARGUMENTS: bash: timeout/);
    // A millisecond value, as some models send, is answered with the unit.
    const ms = await call(bash, { command: "true", timeout: 120000 }, ctx);
    expect(ms.content).toMatch(/^INVALID_ARGUMENTS: bash: timeout: must be in seconds, more than 0 and at most 600 \(default 120\)\./);
    expect((await call(bash, { command: "true", timeout: 0 }, ctx)).content).toMatch(/timeout: must be in seconds/);
  });
});

describe("background shells", () => {
  const output = bashOutputTool(() => shells);
  const kill = killBashTool(() => shells);

  it("show the shell's id on a front end's tool line, not its JSON", () => {
    expect(toolInputSummary(output, { id: "bg-1" })).toBe("bg-1");
    expect(toolInputSummary(kill, { id: "bg-2" })).toBe("bg-2");
  });

  it("returns an id at once, streams new output, and kill_bash stops the group", async () => {
    const pidFile = join(root, "bg.pid");
    const started = await call(bash, { command: `sleep 60 & echo $! > ${pidFile}; echo one; echo two; sleep 60`, run_in_background: true }, ctx, "toolu_bg");
    expect(started.is_error).toBeFalsy();
    const id = /background shell (bg-\d+)/.exec(started.content)![1]!;
    let seen = "";
    let statuses = "";
    expect(
      await until(async () => {
        const r = await call(output, { id }, ctx);
        const nl = r.content.indexOf("\n");
        statuses += r.content.slice(0, nl);
        const body = r.content.slice(nl + 1);
        if (body !== "(no new output)") seen += body;
        return seen.includes("two");
      }),
    ).toBe(true);
    expect(statuses).toContain("status: running");
    expect(seen).toBe("one\ntwo\n");
    // Output already read is not returned again.
    const again = await call(output, { id }, ctx);
    expect(again.content).toMatch(/^status: running \(pid \d+, \d+ s\)\n\(no new output\)$/);

    const pid = Number(readFileSync(pidFile, "utf8"));
    strays.push(pid);
    expect((await call(kill, { id }, ctx)).content).toBe(`${id} killed`);
    expect(await until(() => !alive(pid))).toBe(true);
    expect((await call(output, { id }, ctx)).content.split("\n")[0]).toBe("status: killed");
    expect((await call(kill, { id }, ctx)).content).toBe(`${id} is not running (status: killed)`);
    // The sidecar of the starting call keeps everything for raw_output.
    expect(await until(async () => (await call(rawOutputTool, { tool_call_id: "toolu_bg" }, ctx)).content.includes("one\ntwo"))).toBe(true);
  });

  it("reports the exit code of a finished background shell", async () => {
    const started = await call(bash, { command: "echo done; exit 4", run_in_background: true }, ctx);
    const id = /background shell (bg-\d+)/.exec(started.content)![1]!;
    let last = "";
    expect(
      await until(async () => {
        last = (await call(output, { id }, ctx)).content;
        return last.startsWith("status: exited");
      }),
    ).toBe(true);
    expect(last).toContain("status: exited (exit code 4)");
  });

  it("explains unknown ids", async () => {
    const r = await call(output, { id: "bg-999" }, ctx);
    expect(r.is_error).toBe(true);
    expect(r.content).toMatch(/^no background shell bg-999; known: bg-1/);
    expect((await call(kill, { id: "bg-999" }, ctx)).is_error).toBe(true);
  });
});
