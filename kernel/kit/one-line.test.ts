import { describe, expect, it } from "vitest";
import { oneLine } from "./one-line.js";

describe("oneLine", () => {
  it("keeps the first line of an error whose later lines are a stack", () => {
    const err = new Error("boom\n    at setup (/home/u/p/plugin.js:12:4)\n    at /home/u/p/plugin.js:12:4");
    expect(oneLine(err)).toBe("boom");
    expect(oneLine("two\nlines")).toBe("two");
  });

  it("adds the place of a syntax error that jiti puts on a line of its own, counting columns from 1", () => {
    const parse = Object.assign(new Error("ParseError: Unexpected token\n/p/larik.config.ts:2:53\n"), { name: "ParseError" });
    expect(oneLine(parse, "/p/larik.config.ts")).toBe("ParseError: Unexpected token at line 2, column 54");
    expect(oneLine(parse, "/p/other.ts")).toBe("ParseError: Unexpected token at /p/larik.config.ts:2:54");
    // a stack frame is not the place, even under a syntax error
    expect(oneLine(new SyntaxError("Unexpected identifier\n    at /p/x.mjs:3:1"))).toBe("Unexpected identifier");
  });
});
