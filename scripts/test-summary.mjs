// The "N passed, N failed" line scripts/test.mjs ends with, from vitest's JSON report.
import { relative } from "node:path";

/**
 * A test file can fail with no failing test: an import error, a throwing beforeAll/afterAll (its
 * tests then count as skipped). Each such file counts as one failure, and `failedFiles` names them,
 * so the line never says "0 failed" for a run that failed. No report, or a report of no tests and
 * no failed file, counts as one failure too.
 */
export function summarize(report, cwd = process.cwd()) {
  if (!report) return { failedFiles: [], summary: "0 passed, 1 failed" };
  const failedFiles = (report.testResults ?? [])
    .filter((f) => f.status === "failed" && !(f.assertionResults ?? []).some((t) => t.status === "failed"))
    .map((f) => relative(cwd, f.name));
  const failed = (report.numFailedTests ?? 0) + failedFiles.length;
  if (!report.numTotalTests && !failed) return { failedFiles, summary: "0 passed, 1 failed" };
  const skipped = report.numPendingTests ? `, ${report.numPendingTests} skipped` : "";
  return { failedFiles, summary: `${report.numPassedTests ?? 0} passed, ${failed} failed${skipped}` };
}
