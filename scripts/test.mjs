// Runs the vitest suite and ends with the plain "N passed, N failed" line CI reads.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { summarize } from "./test-summary.mjs";

const out = ".vitest.json";
rmSync(out, { force: true });
const args = ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${out}`, ...process.argv.slice(2)];
const r = spawnSync("npx", args, { stdio: "inherit", env: { ...process.env, NO_COLOR: "1" } });
let report;
try {
  report = JSON.parse(readFileSync(out, "utf8"));
} catch {
  // vitest crashed before writing its report: summarize counts that as a failure
}
const { failedFiles, summary } = summarize(report);
if (failedFiles.length) console.log(`failed without a failing test (each counted as one failed): ${failedFiles.join(", ")}`);
console.log(summary);
process.exit(r.status ?? 1);
