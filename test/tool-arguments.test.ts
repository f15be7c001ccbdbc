/**
 * LARIK-REFERENCE §3: "a `null` for an unused argument is tolerated" — at the top level and inside
 * nested objects (multi_edit's edits, todo_write's items), through the real agent loop and the
 * real core tools; a schema that accepts `null` still receives it.
 */
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, definePlugin, Host, toolErrorLine } from "../kernel/index.js";
import coreTools from "../plugins/core-tools/index.js";
import { call, ScriptedProvider, text } from "./fakes/scripted-provider.js";
import { drain } from "./fakes/drain.js";


describe("tool arguments with null for unused optional ones", () => {
  it("multi_edit and todo_write accept nested nulls; a nullable field keeps its null; a null required field is still refused", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "larik-args-")));
    writeFileSync(join(cwd, "a.txt"), "alpha\nbeta\n");
    const seen: unknown[] = [];
    const probe = definePlugin({
      name: "probe",
      setup(ctx) {
        ctx.tools.register(
          defineTool({
            name: "probe",
            description: "Records its input.",
            input: z.object({ filter: z.object({ tag: z.string().nullable(), limit: z.number().optional() }) }),
            kind: "read",
            async run(input) {
              seen.push(input);
              return { content: "ok" };
            },
          }),
        );
      },
    });
    const host = await Host.create({ plugins: [coreTools, probe], cwd, settings: {} });
    const provider = new ScriptedProvider([
      { blocks: [call("t1", "read", { path: "a.txt", offset: null, limit: null })] },
      {
        blocks: [
          call("t2", "multi_edit", { path: "a.txt", edits: [{ old_string: "alpha", new_string: "ALPHA", replace_all: null }] }),
          call("t3", "todo_write", { todos: [{ content: "Edit a.txt", status: "in_progress", active_form: null }] }),
          call("t4", "probe", { filter: { tag: null, limit: null } }),
          call("t5", "edit", { path: "a.txt", old_string: null, new_string: "x" }),
        ],
      },
      { blocks: [text("done")] },
    ]);
    const agent = await host.openAgent({ provider, model: "scripted/test", mode: "yolo" });
    await drain(agent.run("go"));
    const results = provider.requests[2]!.messages[4]!.blocks as { content: string; is_error?: boolean }[];
    expect(results[0]!.is_error, results[0]!.content).toBeFalsy();
    expect(results[0]!.content).toMatch(/^Applied 1 edits to a\.txt/);
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("ALPHA\nbeta\n");
    expect(results[1]!.is_error, results[1]!.content).toBeFalsy();
    expect(results[2]!.is_error, results[2]!.content).toBeFalsy();
    expect(seen).toEqual([{ filter: { tag: null } }]);
    expect(results[3]!.is_error).toBe(true);
    expect(results[3]!.content).toMatch(/^INVALID_ARGUMENTS: edit: old_string: /);
    await host.dispose?.();
  });
});

describe("a malformed call's result, as a front end shows it (toolErrorLine)", () => {
  it("reads for the user: what is wrong, without the instructions the model gets", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "larik-args-")));
    const host = await Host.create({ plugins: [coreTools], cwd, settings: {} });
    const provider = new ScriptedProvider([
      {
        blocks: [
          call("c1", "read", { path: 42 }),
          { type: "tool_use", id: "c2", name: "read", input: {}, raw_input: '{"path": "a.t' },
          { type: "tool_use", id: "c3", name: "read", input: {}, raw_input: '["a.txt"]' },
          call("c4", "raed", { path: "a.txt" }),
        ],
      },
      { blocks: [text("done")] },
    ]);
    const agent = await host.openAgent({ provider, model: "scripted/x", mode: "yolo" });
    const ends = (await drain(agent.run("go"))).filter((e) => e.type === "tool_end") as { output: string }[];
    // the model is told what to resend
    expect(ends[0]!.output).toMatch(/^INVALID_ARGUMENTS: read: .*Fix the arguments/);
    expect(ends.map((e) => toolErrorLine(e.output))).toEqual([
      "invalid arguments: path: Invalid input: expected string, received number",
      'arguments not complete JSON: {"path": "a.t',
      'arguments not a JSON object (an array): ["a.txt"]',
      expect.stringMatching(/^unknown tool "raed" \(did you mean "read"\?\): available tools are /),
    ]);
    await host.dispose();
  });
});
