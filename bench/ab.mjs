#!/usr/bin/env node
// bench/ab: `larik -p` from spawn to the first request at a local model server, for several builds
// of the CLI taking turns run by run, beside bare `node -e 0`.
//
//   [BENCH_CPU=<n>] node bench/ab.mjs <runs> <cli.cjs> [<cli.cjs> ...]
//
// Prints the median per build and its ratio to bare node, then the same for the fastest quarter
// (see bench/startup.mjs). For comparing builds (a change and the commit before it:
// `git worktree add /tmp/before <rev> && cd /tmp/before && npm run build`), where
// bench/startup.mjs run twice would compare two runs that each have their own bare-node figure.
// Each build gets its own HOME, so each keeps its own V8 code cache (cli/code-cache.ts removes
// the caches of other builds it finds). The model is test/fakes/mock-model-server.ts; no network.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createJiti } from "jiti";
import { percentile } from "./harness.mjs";
const root = resolve(import.meta.dirname, "..");
const jiti = createJiti(import.meta.url);
const { startMockModelServer } = await jiti.import(join(root, "test/fakes/mock-model-server.ts"));
const clis = process.argv.slice(3).map((c) => resolve(c));
const runs = Number(process.argv[2]);
if (!(runs > 0) || !clis.length) throw new Error("usage: node bench/ab.mjs <runs> <cli.cjs> [<cli.cjs> ...]");
const server = await startMockModelServer();
const home = mkdtempSync(join(tmpdir(), "ab-home-")); const project = mkdtempSync(join(tmpdir(), "ab-proj-")); mkdirSync(join(project, ".git"));
const env = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, "data"), OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "b" };
const homes = new Map(); const envFor = (cli) => { if (!homes.has(cli)) { const h = mkdtempSync(join(tmpdir(), "ab-h-")); homes.set(cli, { ...env, HOME: h, XDG_CONFIG_HOME: join(h, ".config"), XDG_DATA_HOME: join(h, "data") }); } return homes.get(cli); };
// BENCH_CPU=<n> runs every child on CPU n alone (taskset; the server is not pinned): on a VM
// whose CPUs differ in speed, comparisons then agree within a millisecond or two between runs
const node = (args) => (process.env.BENCH_CPU ? ["taskset", ["-c", process.env.BENCH_CPU, process.execPath, ...args]] : [process.execPath, args]);
function one(cli) { return new Promise((res) => { server.requests.length = 0; server.push({ text: "ok" }); const t0 = performance.now(); const c = spawn(...node([cli, "-p", "--model", "openai-compatible/b", "hi"]), { cwd: project, env: envFor(cli), stdio: ["ignore", "pipe", "pipe"] }); c.on("close", () => res(server.requests[0].at - t0)); }); }
function bare() { return new Promise((res) => { const t0 = performance.now(); spawn(...node(["-e", "0"]), { cwd: project, env, stdio: "ignore" }).on("close", () => res(performance.now() - t0)); }); }
// warm the file cache, and let each build's first run write its code cache
for (const c of clis) { await one(c); await one(c); }
const t = clis.map(() => []); const b = [];
for (let i = 0; i < runs; i++) { b.push(await bare()); for (let k = 0; k < clis.length; k++) t[k].push(await one(clis[k])); }
await server.close(); for (const e of homes.values()) rmSync(e.HOME, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true }); rmSync(project, { recursive: true, force: true });
const med = (xs) => percentile(xs, 0.5);
const q1 = (xs) => percentile(xs, 0.25);
console.log(`node -e 0: median ${med(b).toFixed(1)} ms, fastest quarter ${q1(b).toFixed(1)} ms`);
const line = (xs, b) => `${xs.toFixed(1)} ms (${(xs / b).toFixed(3)}x bare node)`;
clis.forEach((c, k) => console.log(`${c} -p to first request: median ${line(med(t[k]), med(b))}, fastest quarter ${line(q1(t[k]), q1(b))}`));
