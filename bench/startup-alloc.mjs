#!/usr/bin/env node
// bench/startup-alloc: what `larik -p` allocates on the V8 heap from process start to its first
// model request, and where. The young generation holds about 1 MB; every time a start fills it,
// a scavenge (1–4 ms) and the page faults of the pages it copies into come before the request
// (docs/architecture.md, "How `larik` starts"), so this is where to look for start-up time that
// bench/startup-phases.mjs shows as spread thin over every phase.
//
//   node bench/startup-alloc.mjs [runs] [cli.cjs]
//
// Each of `runs` (default 3) runs, after two that write the V8 code cache, records V8's sampling
// heap profile (one sample per 128 bytes allocated, counting objects that a GC has since
// collected) through node:inspector, from a preload (-r) until the first HTTP request has been
// written (Node's `http.client.request.start` diagnostics channel). Prints the KB allocated per
// run, as averages: the total, by phase (the first frame of each sample's stack that is one of the
// start path's functions, below), and the sites that allocate the most themselves, each placed in
// our sources through dist/headless.cjs.map. The code cache (deserialized into old space) and
// the bundle's source string are in the total and shown apart; most of the rest is young.
// The profiler's own session costs some allocation too (node:inspector), counted under "other".
// Needs `npm run build` first. The model is a local server speaking the OpenAI Chat Completions
// wire format (test/fakes/mock-model-server.ts); no network is used.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join, resolve } from "node:path";
import { root, startBench } from "./harness.mjs";

const runs = Number(process.argv[2] ?? 3);
const cli = resolve(process.argv[3] ?? join(root, "dist/cli.cjs"));
if (!(runs > 0)) throw new Error("usage: node bench/startup-alloc.mjs [runs] [cli.cjs]");
const { server, tmp, project, env, close } = await startBench("larik-alloc-");
const profiles = join(tmp, "profiles");
mkdirSync(profiles);
const preload = join(tmp, "heap.cjs");
writeFileSync(
  preload,
  `const session = new (require("node:inspector").Session)();
session.connect();
session.post("HeapProfiler.enable");
session.post("HeapProfiler.startSampling", { samplingInterval: 128, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
let done = false;
require("node:diagnostics_channel").subscribe("http.client.request.start", ({ request }) => request.once("finish", () => {
  if (done) return;
  done = true;
  session.post("HeapProfiler.stopSampling", (err, r) => { if (!err) require("node:fs").writeFileSync(${JSON.stringify(profiles)} + "/" + process.pid + ".json", JSON.stringify(r.profile)); });
}));
`,
);

function run(flags) {
  return new Promise((done, fail) => {
    server.push({ text: "ok" });
    const child = spawn(process.execPath, [...flags, cli, "-p", "--model", "openai-compatible/bench", "hi"], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => (code === 0 ? done() : fail(new Error(`-p exited ${code}: ${err}`))));
  });
}
await run([]);
await run([]);
for (let i = 0; i < runs; i++) await run(["-r", preload]);

// The start path's functions, by name and source file: a sample belongs to the innermost one on
// its stack, and to "other" (Node's bootstrap, the launcher, the profiler's session) under none.
const PHASES = [
  ["Script", "node:vm", "the bundle's code cache, deserialized (old space)"],
  ["readSourceAndCache", "cli.cjs", "the bundle's source, read (one string)"],
  ["loadWithCodeCache", "cli.cjs", "the bundle's top level (its modules' set-up)"],
  ["loadConfig", "kernel/config.ts", "config"],
  ["create", "kernel/host.ts", "plugins (Host.create)"],
  ["dispatch", "cli/main.ts", "flags and the front end"],
  ["open", "kernel/agent.ts", "the agent (Agent.open)"],
  ["watchReader", "kernel/kit/pipe-writer.ts", "stdout (watching its reader)"],
  ["context", "kernel/agent.ts", "the system prompt and tools"],
  ["nodeFetch", "kernel/kit/http-node.ts", "node:http and the request"],
];
const map = new SourceMap(JSON.parse(readFileSync(join(root, "dist/headless.cjs.map"), "utf8")));
const headless = join(root, "dist/headless.cjs");
/** The source a frame is in: ours (through the source map) for dist/headless.cjs, else its file's name. */
function source(frame) {
  if (frame.url !== headless && frame.url !== `file://${headless}`) return { file: frame.url.split("/").pop() || "native", line: frame.lineNumber + 1 };
  const e = map.findEntry(frame.lineNumber, frame.columnNumber);
  return { file: e?.originalSource?.replace(/^.*?(node_modules\/|(?:\.\.\/)+)/, "") ?? "?", line: (e?.originalLine ?? -1) + 1 };
}
const byPhase = new Map();
const bySite = new Map();
let total = 0;
const files = readdirSync(profiles);
if (!files.length) throw new Error("no heap profile was written: did the run send a request?");
for (const f of files) {
  const walk = (node, phase) => {
    const src = source(node.callFrame);
    const name = node.callFrame.functionName;
    const mine = PHASES.find(([fn, file]) => fn === name && src.file.endsWith(file))?.[2] ?? phase;
    if (node.selfSize) {
      total += node.selfSize;
      const p = mine ?? "other (Node's bootstrap, the launcher, the profiler's session)";
      byPhase.set(p, (byPhase.get(p) ?? 0) + node.selfSize);
      const site = `${name || "(anonymous)"} (${src.file}:${src.line})`;
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, mine);
  };
  walk(JSON.parse(readFileSync(join(profiles, f), "utf8")).head, undefined);
}
await close();
const kb = (b) => `${(b / files.length / 1024).toFixed(0).padStart(6)} KB`;
console.log(`runs: ${files.length}; CLI: ${cli}`);
console.log(`allocated from process start to the first request: ${kb(total).trim()}`);
console.log("by phase:");
for (const [p, b] of [...byPhase].sort((a, b) => b[1] - a[1])) console.log(`  ${kb(b)}  ${p}`);
console.log("the 25 sites that allocate the most themselves:");
for (const [s, b] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${kb(b)}  ${s}`);
