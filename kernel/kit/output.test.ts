import { describe, expect, it } from "vitest";
import { capOutput } from "./output.js";

describe("capOutput", () => {
  it("keeps whole characters at both cuts: a multi-byte character is dropped, never split into U+FFFD", () => {
    // 100 three-byte characters; with 101 bytes the head gets 40 (13⅓ characters) and the tail
    // 61 (20⅓): both cuts fall inside a character
    const text = "€".repeat(100);
    const r = capOutput(text, 101);
    expect(r.truncated).toBe(true);
    expect(r.text).not.toContain("\uFFFD");
    expect(r.text).toBe(`${"€".repeat(13)}\n… [201 bytes omitted] …\n${"€".repeat(20)}`);
  });

  it("keeps text within the limit as it is, and names the hint in the marker", () => {
    expect(capOutput("short", 5)).toEqual({ text: "short", truncated: false });
    expect(capOutput("abcdefghij", 5, "see raw_output").text).toBe("ab\n… [5 bytes omitted; see raw_output] …\nhij");
  });
});
