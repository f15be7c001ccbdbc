import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Host, toolSpec, type AgentEvent } from "../../kernel/index.js";
import { call as use, ScriptedProvider, text } from "../../test/fakes/scripted-provider.js";
import plugin from "./index.js";
import { call, makeContext, tempDir } from "./test-context.js";
import { todoWriteTool } from "./todo_write.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
});
afterEach(() => cleanup());

describe("core-tools plugin", () => {
  it("registers every built-in tool with a described schema", async () => {
    const host = await Host.create({ plugins: [plugin], cwd: root });
    try {
      expect(host.failed).toEqual([]);
      const names = host.tools.list().map((t) => t.name).sort();
      expect(names).toEqual([
        "bash",
        "bash_output",
        "edit",
        "glob",
        "grep",
        "kill_bash",
        "multi_edit",
        "raw_output",
        "read",
        "todo_write",
        "write",
        "write_files",
      ]);
      // the description is what `larik --version` says this plugin contributes
      expect(plugin.description!.replace(/^Built-in tools: /, "").split(", ").sort()).toEqual(names);
      for (const tool of host.tools.list()) {
        const spec = toolSpec(tool);
        expect(spec.description.length, tool.name).toBeGreaterThan(20);
        const props = spec.input_schema.properties as Record<string, { description?: string }>;
        for (const [field, schema] of Object.entries(props)) expect(schema.description, `${tool.name}.${field}`).toBeTruthy();
      }
      const kinds = Object.fromEntries(host.tools.list().map((t) => [t.name, t.kind]));
      expect(kinds).toMatchObject({ read: "read", glob: "read", grep: "read", todo_write: "read", raw_output: "read", write: "write", edit: "write", multi_edit: "write", write_files: "write", bash: "bash" });
      // Inputs are exactly §3's.
      expect(Object.keys(toolSpec(host.tools.get("read")!).input_schema.properties as object)).toEqual(["path", "offset", "limit"]);
      expect(Object.keys(toolSpec(host.tools.get("edit")!).input_schema.properties as object)).toEqual(["path", "old_string", "new_string", "replace_all"]);
      expect(Object.keys(toolSpec(host.tools.get("grep")!).input_schema.properties as object)).toEqual(["pattern", "path", "glob", "ignore_case"]);
      expect(host.tools.get("bash")!.subject!({ command: "npm test" })).toBe("npm test");
      expect(host.tools.get("edit")!.subject!({ path: "./src/../src/a.ts" })).toBe("src/a.ts");
    } finally {
      await host.dispose();
    }
  });
});

describe("through the agent loop", () => {
  it("reads, edits and runs bash with the agent's own tracker and sidecar folder", async () => {
    await writeFile(join(root, "a.txt"), "hello world\n");
    const host = await Host.create({ plugins: [plugin], cwd: root, env: { ...process.env, XDG_DATA_HOME: join(root, ".data") } });
    const provider = new ScriptedProvider([
      { blocks: [use("t1", "edit", { path: "a.txt", old_string: "world", new_string: "there" })] },
      { blocks: [use("t2", "read", { path: "a.txt" })] },
      { blocks: [use("t3", "edit", { path: "a.txt", old_string: "world", new_string: "there" })] },
      { blocks: [use("t4", "bash", { command: "cat a.txt; seq 1 20000 | tail -1" })] },
      { blocks: [use("t5", "raw_output", { tool_call_id: "t4" })] },
      { blocks: [text("done")] },
    ]);
    try {
      const agent = await host.openAgent({ provider, model: "scripted/x", mode: "yolo" });
      const ends: Record<string, string> = {};
      for await (const e of agent.run("go") as AsyncIterable<AgentEvent>) if (e.type === "tool_end") ends[e.tool_id] = e.output;
      expect(ends.t1).toContain("has not been read yet");
      expect(ends.t2).toBe("     1\thello world");
      expect(ends.t3).toBe("Edited a.txt: 1 replacement at line 1");
      expect(ends.t4).toBe("hello there\n20000\n[exit code 0]");
      expect(ends.t5).toBe("bytes 0-18 of 18:\nhello there\n20000\n\n[end of output]");
      expect(await readFile(join(root, "a.txt"), "utf8")).toBe("hello there\n");
    } finally {
      await host.dispose();
    }
  });
});

describe("the host's disposal", () => {
  it("kills what a bash call left running (`cmd &`), as larik -p ending or the TUI quitting does", async () => {
    const host = await Host.create({ plugins: [plugin], cwd: root, env: { ...process.env, XDG_DATA_HOME: join(root, ".data") } });
    const provider = new ScriptedProvider([{ blocks: [use("t1", "bash", { command: "sleep 300 > /dev/null 2>&1 & echo $!" })] }, { blocks: [text("done")] }]);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    let pid = 0;
    try {
      const agent = await host.openAgent({ provider, model: "scripted/x", mode: "yolo" });
      for await (const e of agent.run("go") as AsyncIterable<AgentEvent>) if (e.type === "tool_end") pid = Number(e.output.split("\n")[0]);
      expect(pid).toBeGreaterThan(0);
      expect(alive(pid)).toBe(true);
    } finally {
      await host.dispose();
    }
    try {
      // the exit hook would kill it only when this process exits: disposal must not wait for that
      for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
      expect(alive(pid)).toBe(false);
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });
});

describe("asking only for calls that can succeed", () => {
  it("in default mode, an edit or write that would be refused is answered without a permission request", async () => {
    await writeFile(join(root, "a.txt"), "hello world\n");
    const host = await Host.create({ plugins: [plugin], cwd: root, env: { ...process.env, XDG_DATA_HOME: join(root, ".data") } });
    const provider = new ScriptedProvider([
      {
        blocks: [
          use("t1", "edit", { path: "a.txt", old_string: "world", new_string: "there" }),
          use("t2", "write", { path: "a.txt", content: "new\n" }),
          use("t3", "multi_edit", { path: "a.txt", edits: [{ old_string: "world", new_string: "x" }] }),
        ],
      },
      { blocks: [use("t4", "read", { path: "a.txt" })] },
      { blocks: [use("t5", "edit", { path: "a.txt", old_string: "nowhere", new_string: "x" }), use("t6", "edit", { path: "a.txt", old_string: "world", new_string: "there" })] },
      { blocks: [text("done")] },
    ]);
    try {
      const agent = await host.openAgent({ provider, model: "scripted/x", mode: "default" });
      const ends: Record<string, string> = {};
      const asked: string[] = [];
      for await (const e of agent.run("go") as AsyncIterable<AgentEvent>) {
        if (e.type === "tool_end") ends[e.tool_id] = e.output;
        if (e.type === "permission_request") {
          asked.push(e.tool_id);
          agent.respond(e.request_id, { allow: true });
        }
      }
      const results = provider.requests[1]!.messages.at(-1)!.blocks as { id: string; content: string }[];
      expect(results.map((b) => b.content)).toEqual([
        "refused: a.txt exists and has not been read yet; read it first",
        "refused: a.txt exists and has not been read yet; read it first",
        "refused: a.txt exists and has not been read yet; read it first",
      ]);
      const third = provider.requests[3]!.messages.at(-1)!.blocks as { id: string; content: string }[];
      expect(third[0]!.content).toMatch(/^old_string not found in a\.txt/);
      // only the edit that can apply was asked about, and it ran
      expect(asked).toEqual(["t6"]);
      expect(ends.t6).toBe("Edited a.txt: 1 replacement at line 1");
    } finally {
      await host.dispose();
    }
  });
});

describe("precheck and calls that depend on earlier ones in the same reply", () => {
  it("asks for an edit after a read of the same file, and for a second edit of what the first made", async () => {
    await writeFile(join(root, "a.txt"), "hello world\n");
    const host = await Host.create({ plugins: [plugin], cwd: root, env: { ...process.env, XDG_DATA_HOME: join(root, ".data") } });
    const provider = new ScriptedProvider([
      {
        blocks: [
          use("t1", "read", { path: "a.txt" }),
          use("t2", "edit", { path: "a.txt", old_string: "world", new_string: "there" }),
          use("t3", "edit", { path: "a.txt", old_string: "hello there", new_string: "hi there" }),
        ],
      },
      { blocks: [text("done")] },
    ]);
    try {
      const agent = await host.openAgent({ provider, model: "scripted/x", mode: "default" });
      const asked: string[] = [];
      for await (const e of agent.run("go") as AsyncIterable<AgentEvent>) {
        if (e.type === "permission_request") {
          asked.push(e.tool_id);
          agent.respond(e.request_id, { allow: true });
        }
      }
      expect(asked).toEqual(["t2", "t3"]);
      expect(await readFile(join(root, "a.txt"), "utf8")).toBe("hi there\n");
    } finally {
      await host.dispose();
    }
  });
});

describe("todo_write", () => {
  it("accepts a list without echoing it and carries it in display", async () => {
    const todos = [
      { content: "Write the parser", status: "completed" },
      { content: "Run the tests", status: "in_progress", active_form: "Running the tests" },
      { content: "Update the docs", status: "pending" },
    ];
    const r = await call(todoWriteTool, { todos }, makeContext(root));
    expect(r.is_error).toBeFalsy();
    expect(r.content).toBe("Todo list updated: 3 items (1 completed, 1 in progress, 1 pending).");
    expect(r.content).not.toContain("parser");
    expect(r.display).toEqual({ type: "todos", todos });
  });

  it("refuses two items in progress and more than 50 items", async () => {
    const two = await call(
      todoWriteTool,
      { todos: [{ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }] },
      makeContext(root),
    );
    expect(two.is_error).toBe(true);
    expect(two.content).toContain("at most one item may be in_progress");
    const many = Array.from({ length: 51 }, (_, i) => ({ content: `t${i}`, status: "pending" }));
    expect((await call(todoWriteTool, { todos: many }, makeContext(root))).is_error).toBe(true);
  });
});
