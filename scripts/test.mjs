// Runs the vitest suite and ends with the plain "N passed, N failed" line CI reads.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";

const out = ".vitest.json";
rmSync(out, { force: true });
const args = ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${out}`, ...process.argv.slice(2)];
const r = spawnSync("npx", args, { stdio: "inherit", env: { ...process.env, NO_COLOR: "1" } });
let summary = "0 passed, 1 failed";
try {
  const j = JSON.parse(readFileSync(out, "utf8"));
  summary = `${j.numPassedTests} passed, ${j.numFailedTests} failed` + (j.numPendingTests ? `, ${j.numPendingTests} skipped` : "");
  if (j.numTotalTests === 0) summary = "0 passed, 1 failed";
} catch {
  // vitest crashed before writing its report: count that as a failure
}
console.log(summary);
process.exit(r.status ?? 1);
