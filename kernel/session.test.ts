import { describe, expect, it } from "vitest";
import { repairToolResults, SessionMetaSchema, sessionMetaProblem } from "./session.js";
import type { Message } from "./types.js";

describe("sessionMetaProblem", () => {
  const samples: unknown[] = [
    { cwd: "/p", provider: "openai", model: "m" },
    { cwd: "/p", provider: "openai", model: "m", fork_of: "20250101-000000-abcdef", fork_at: 3, title: "t", extra: 1 },
    { cwd: "/p", provider: "openai" },
    { cwd: 1, provider: "openai", model: "m" },
    { cwd: "/p", provider: "openai", model: "m", fork_at: "3" },
    { cwd: "/p", provider: "openai", model: "m", fork_at: Number.NaN },
    { cwd: "/p", provider: "openai", model: "m", fork_at: Number.POSITIVE_INFINITY },
    { cwd: "/p", provider: "openai", model: "m", title: null },
    { cwd: "/p", provider: "openai", model: "m", fork_of: 7 },
    null,
    [],
    "meta",
  ];

  it("agrees with SessionMetaSchema, and says which field is wrong", () => {
    for (const meta of samples) expect([meta, sessionMetaProblem(meta) === undefined]).toEqual([meta, SessionMetaSchema.safeParse(meta).success]);
    expect(sessionMetaProblem({ cwd: "/p", provider: "p" })).toBe("model: expected string");
    expect(sessionMetaProblem({ cwd: "/p", provider: "p", model: "m", fork_at: "3" })).toBe("fork_at: expected number");
  });
});

describe("repairToolResults", () => {
  it("answers a call left without a result (a crash mid-call) without claiming it never ran", () => {
    const repaired = repairToolResults([
      { role: "user", blocks: [{ type: "text", text: "commit it" }] },
      { role: "assistant", blocks: [{ type: "tool_use", id: "t1", name: "bash", input: { command: "git commit -am wip" } }] },
      { role: "user", blocks: [{ type: "text", text: "go on" }] },
    ]);
    const result = repaired[2]!.blocks[0] as { type: string; id: string; content: string; is_error: boolean };
    expect(result).toMatchObject({ type: "tool_result", id: "t1", is_error: true });
    // the model must not take a killed `git commit` for one that never started
    expect(result.content).not.toMatch(/never run/);
    expect(result.content).toMatch(/^interrupted: .*may have run .*check its effects before running it again$/);
    expect(repaired[2]!.blocks[1]).toEqual({ type: "text", text: "go on" });
  });

  const use = (id: string) => ({ type: "tool_use" as const, id, name: "read", input: {} });
  const result = (id: string) => ({ type: "tool_result" as const, id, content: `r${id}` });
  const say = (text: string) => ({ type: "text" as const, text });

  it("answers a tool_use left without a result, in order, and drops results whose tool_use is not right before them", () => {
    const history: Message[] = [
      // a result whose call was compacted away, beside a prompt: the result goes, the prompt stays
      { role: "user", blocks: [result("gone"), say("next prompt")] },
      { role: "assistant", blocks: [use("a"), use("b")] },
      // b answered, a not (a crash between them); a stray one for a call of another turn
      { role: "user", blocks: [result("b"), result("old")] },
      // a message of stray results only disappears
      { role: "assistant", blocks: [say("done")] },
      { role: "user", blocks: [result("x")] },
    ];
    expect(repairToolResults(history)).toEqual([
      { role: "user", blocks: [say("next prompt")] },
      { role: "assistant", blocks: [use("a"), use("b")] },
      {
        role: "user",
        blocks: [{ type: "tool_result", id: "a", content: expect.stringMatching(/^interrupted: .*may have run in part/), is_error: true }, result("b")],
      },
      { role: "assistant", blocks: [say("done")] },
    ]);
  });
});
