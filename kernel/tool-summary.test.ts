import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, toolInputSummary } from "./tools.js";

const grepLike = defineTool({
  name: "search",
  description: "test",
  input: z.object({ pattern: z.string() }),
  kind: "read",
  summary: (i) => `«${(i as { pattern: string }).pattern}»`,
  run: async () => ({ content: "" }),
});

describe("toolInputSummary (the tool line of every front end)", () => {
  it("takes the tool's own summary, folded and cut to 120 characters", () => {
    expect(toolInputSummary(grepLike, { pattern: "a\n  b" })).toBe("«a b»");
    expect(toolInputSummary(grepLike, { pattern: "x".repeat(300) })).toHaveLength(120);
  });

  it("falls back to the most telling argument for a tool without one", () => {
    expect(toolInputSummary(undefined, { command: "npm   test\n-- --watch" })).toBe("npm test -- --watch");
    expect(toolInputSummary(undefined, { path: "src/a.ts", old_string: "x" })).toBe("src/a.ts");
    expect(toolInputSummary(undefined, { file_path: "src/b.ts", content: "x" })).toBe("src/b.ts");
    expect(toolInputSummary(undefined, { pattern: "TODO", path: "src" })).toBe("TODO in src");
    expect(toolInputSummary(undefined, { description: "find the bug", prompt: "long text" })).toBe("find the bug");
    expect(toolInputSummary(undefined, { files: [{ path: "a.ts" }, { content: "no path" }] })).toBe("a.ts, ?");
    expect(toolInputSummary(undefined, { todos: [{}, {}, {}] })).toBe("3 items");
    expect(toolInputSummary(undefined, { n: 1 })).toBe('{"n":1}');
  });

  it("drops the model's escape sequences, which would otherwise reach the terminal", () => {
    expect(toolInputSummary(undefined, { command: "echo \x1b[2Jhi\x07 there" })).toBe("echo [2Jhi there");
  });
});
