// scripts/test-summary.mjs: the final line of `npm test`.
import { describe, expect, it } from "vitest";
import { summarize } from "../scripts/test-summary.mjs";

const file = (name: string, status: string, tests: string[]) => ({ name: `/repo/${name}`, status, assertionResults: tests.map((s) => ({ status: s })) });

describe("summarize", () => {
  it("counts passed, failed and skipped tests", () => {
    const r = summarize(
      { numTotalTests: 4, numPassedTests: 2, numFailedTests: 1, numPendingTests: 1, testResults: [file("a.test.ts", "failed", ["passed", "failed"]), file("b.test.ts", "passed", ["passed", "skipped"])] },
      "/repo",
    );
    expect(r).toEqual({ failedFiles: [], summary: "2 passed, 1 failed, 1 skipped" });
  });

  it("counts a file that failed with no failing test (import error, throwing beforeAll) as one failed, and names it", () => {
    const r = summarize(
      {
        numTotalTests: 3,
        numPassedTests: 1,
        numFailedTests: 0,
        numPendingTests: 2,
        testResults: [file("ok.test.ts", "passed", ["passed"]), file("import.test.ts", "failed", []), file("before-all.test.ts", "failed", ["skipped", "skipped"])],
      },
      "/repo",
    );
    expect(r).toEqual({ failedFiles: ["import.test.ts", "before-all.test.ts"], summary: "1 passed, 2 failed, 2 skipped" });
  });

  it("a failed file that has a failing test is counted by its tests only", () => {
    const r = summarize({ numTotalTests: 2, numPassedTests: 0, numFailedTests: 2, testResults: [file("a.test.ts", "failed", ["failed", "failed"])] }, "/repo");
    expect(r).toEqual({ failedFiles: [], summary: "0 passed, 2 failed" });
  });

  it("no report, or no tests at all, is a failure", () => {
    expect(summarize(undefined).summary).toBe("0 passed, 1 failed");
    expect(summarize({ numTotalTests: 0, numPassedTests: 0, numFailedTests: 0, testResults: [] }).summary).toBe("0 passed, 1 failed");
    expect(summarize({ numTotalTests: 0, numPassedTests: 0, numFailedTests: 0, testResults: [file("import.test.ts", "failed", [])] }, "/repo").summary).toBe("0 passed, 1 failed");
  });
});
