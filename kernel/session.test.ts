import { describe, expect, it } from "vitest";
import { SessionMetaSchema, sessionMetaProblem } from "./session.js";

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
