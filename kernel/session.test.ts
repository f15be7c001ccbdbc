import { describe, expect, it } from "vitest";
import { SessionMetaSchema, sessionMetaProblem, repairToolResults } from "./session.js";

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
});
