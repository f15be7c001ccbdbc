/** The parts of vitest's JSON report that `summarize` reads. */
export interface VitestJsonReport {
  numTotalTests?: number;
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  testResults?: { name: string; status: string; assertionResults?: { status: string }[] }[];
}

export function summarize(report: VitestJsonReport | undefined, cwd?: string): { failedFiles: string[]; summary: string };
