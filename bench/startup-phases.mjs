#!/usr/bin/env node
// bench/startup-phases: where `larik -p` spends its time from process start to its first model
// request, phase by phase, beside bare `node -e 0`.
//
//   node bench/startup-phases.mjs [runs] [cli.cjs]
//
// Prints, as medians over `runs` (default 21) after two runs that write the V8 code cache, the
// moment each phase ended (ms since the process started, from process.uptime), the CPU time
// used by then (user + system, from process.cpuUsage) and the minor page faults taken by then
// (process.resourceUsage), each with its difference from the phase before. Page faults barely
// vary from run to run, so they show a change in the memory a start touches even on a machine
// too busy for its times to compare. The phases are the marks in the start path (`startupMark`, kernel/kit/startup-probe.ts):
// a preload (-r) installs the probe they call, and marks "request sent" itself when the first
// HTTP request has been written (Node's `http.client.request.start` diagnostics channel). CPU time
// is the steadier figure on a busy machine; wall time is what a user waits.
// Needs `npm run build` first. The model is a local server speaking the OpenAI Chat Completions
// wire format (test/fakes/mock-model-server.ts); no network is used.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { percentile, root, startBench } from "./harness.mjs";

const runs = Number(process.argv[2] ?? 21);
const cli = resolve(process.argv[3] ?? join(root, "dist/cli.cjs"));
if (!(runs > 0)) throw new Error("usage: node bench/startup-phases.mjs [runs] [cli.cjs]");
const { server, tmp, project, env, close } = await startBench("larik-phases-");
const out = join(tmp, "phases.jsonl");
const preload = join(tmp, "probe.cjs");
// process.uptime, not performance.now: the `performance` global loads perf_hooks (~1 ms), which a
// run of larik does not, and the probe must not change what it measures more than it has to
writeFileSync(
  preload,
  `const fs = require("node:fs");
const marks = [];
const mark = (phase) => { const u = process.cpuUsage(); marks.push([phase, process.uptime() * 1000, (u.user + u.system) / 1000, process.resourceUsage().minorPageFault]); };
mark("node started");
globalThis[Symbol.for("larik.startup-probe")] = (phase) => { if (!marks.some((m) => m[0] === phase)) mark(phase); };
let written = false;
const write = () => { if (written) return; written = true; fs.appendFileSync(${JSON.stringify(out)}, JSON.stringify(marks) + "\\n"); };
if (process.argv.includes("-p")) {
  require("node:diagnostics_channel").subscribe("http.client.request.start", ({ request }) => request.once("finish", () => { mark("request sent"); write(); }));
}
process.on("exit", () => { mark("exit"); write(); });
`,
);

function run(args) {
  return new Promise((done) => {
    server.push({ text: "ok" });
    const child = spawn(process.execPath, ["-r", preload, ...args], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.on("close", () => done(JSON.parse(readFileSync(out, "utf8").trim().split("\n").at(-1))));
  });
}

const larik = [cli, "-p", "--model", "openai-compatible/bench", "hi"];
await run(larik);
await run(larik);
const bare = [];
const timed = [];
for (let i = 0; i < runs; i++) {
  bare.push(await run(["-e", "0"]));
  timed.push(await run(larik));
}
await close();

const median = (xs) => percentile(xs, 0.5);
const at = (list, phase, k) => median(list.map((marks) => marks.find((m) => m[0] === phase)?.[k]).filter((v) => v !== undefined));
const fmt = (v) => v.toFixed(2).padStart(7);
console.log(`runs: ${runs} (median); CLI: ${cli}`);
console.log(`${"phase ended".padEnd(16)} ${"ms".padStart(7)} ${"+ms".padStart(7)}   ${"cpu ms".padStart(7)} ${"+cpu".padStart(7)}   ${"faults".padStart(6)} ${"+".padStart(5)}`);
const phases = timed[0].map((m) => m[0]).filter((p) => p !== "exit");
let wall = 0;
let cpu = 0;
let faults = 0;
for (const phase of phases) {
  const w = at(timed, phase, 1);
  const c = at(timed, phase, 2);
  const f = at(timed, phase, 3);
  console.log(`${phase.padEnd(16)} ${fmt(w)} ${fmt(w - wall)}   ${fmt(c)} ${fmt(c - cpu)}   ${String(f).padStart(6)} ${String(f - faults).padStart(5)}`);
  wall = w;
  cpu = c;
  faults = f;
}
const bareWall = at(bare, "exit", 1);
const bareCpu = at(bare, "exit", 2);
console.log(`${"node -e 0 exit".padEnd(16)} ${fmt(bareWall)} ${"".padStart(7)}   ${fmt(bareCpu)} ${"".padStart(7)}   ${String(at(bare, "exit", 3)).padStart(6)}`);
console.log(`first request: ${(wall / bareWall).toFixed(2)}x the wall time and ${(cpu / bareCpu).toFixed(2)}x the CPU time of bare node's whole run, both from process start`);
