#!/usr/bin/env node
// bench/startup: start-up time and memory of the built CLI beside bare `node -e 0`, in one run.
//
//   node bench/startup.mjs [runs]
//
// Prints, each as median over `runs` (default 15):
//   - wall time and peak RSS of `node -e 0`, `larik --version`, `larik --help`;
//   - `larik -p` from spawn until the first request byte reaches a local model server;
//   - peak RSS of a whole scripted `-p` run of four requests (three tool rounds and an answer);
//   - the modules `larik -p` loaded, and whether ink, react or h3 were among them.
// Needs `npm run build` first. The model is a local server speaking the OpenAI Chat
// Completions wire format (test/fakes/mock-model-server.ts); no network is used.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createJiti } from "jiti";

const root = resolve(import.meta.dirname, "..");
const CLI = join(root, "dist", "cli.js");
const runs = Number(process.argv[2] ?? 15);
const jiti = createJiti(import.meta.url);
const { startMockModelServer } = await jiti.import(join(root, "test/fakes/mock-model-server.ts"));

const home = mkdtempSync(join(tmpdir(), "larik-bench-home-"));
const project = mkdtempSync(join(tmpdir(), "larik-bench-proj-"));
mkdirSync(join(project, ".git"));
writeFileSync(join(project, "a.txt"), "hello\n");
const rssFile = join(home, "rss");
// A preload that reports the peak RSS of the process at exit (KiB on Linux).
const preload = join(home, "rss.mjs");
writeFileSync(preload, `import { appendFileSync } from "node:fs";\nprocess.on("exit", () => appendFileSync(${JSON.stringify(rssFile)}, process.resourceUsage().maxRSS + "\\n"));\n`);

function run(args, env = {}, onSpawn) {
  return new Promise((res) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ["--import", preload, ...args], {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, "data"), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    onSpawn?.(t0);
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => res({ ms: performance.now() - t0, code, out, err, t0 }));
  });
}

async function lastRss() {
  const { readFileSync } = await import("node:fs");
  const lines = readFileSync(rssFile, "utf8").trim().split("\n");
  return Number(lines.at(-1)) / 1024;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => `${ms.toFixed(1)} ms`;

async function measure(label, args, env) {
  const times = [];
  const rss = [];
  for (let i = 0; i < runs; i++) {
    const r = await run(args, env);
    if (r.code !== 0) throw new Error(`${label} exited ${r.code}: ${r.err}`);
    times.push(r.ms);
    rss.push(await lastRss());
  }
  return { label, ms: median(times), rss: median(rss) };
}

const server = await startMockModelServer();
const modelEnv = { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "bench" };

// warm the file cache once
await run(["-e", "0"]);
await run([CLI, "--version"]);

const bare = await measure("node -e 0", ["-e", "0"]);
const version = await measure("larik --version", [CLI, "--version"]);
const help = await measure("larik --help", [CLI, "--help"]);

// -p: spawn → first request byte at the server
const firstReq = [];
for (let i = 0; i < runs; i++) {
  server.requests.length = 0;
  server.push({ text: "ok" });
  let t0 = 0;
  const r = await run([CLI, "-p", "--model", "openai-compatible/bench", "hi"], modelEnv, (t) => (t0 = t));
  if (r.code !== 0) throw new Error(`-p exited ${r.code}: ${r.err}`);
  // the server runs in this process, so its arrival time is on the same clock as t0
  firstReq.push(server.requests[0].at - t0);
}

// a whole scripted run of four requests
server.push(
  { tools: [{ id: "c1", name: "read", input: { path: "a.txt" } }] },
  { tools: [{ id: "c2", name: "glob", input: { pattern: "*.txt" } }] },
  { tools: [{ id: "c3", name: "bash", input: { command: "echo hi" } }] },
  { text: "done" },
);
const whole = await run([CLI, "-p", "--mode", "yolo", "--model", "openai-compatible/bench", "go"], modelEnv);
if (whole.code !== 0) throw new Error(`scripted run exited ${whole.code}: ${whole.err}`);
const wholeRss = await lastRss();

// which modules -p loads (NODE_DEBUG lists every ESM and CommonJS module as it loads)
server.push({ text: "ok" });
const traced = await run([CLI, "-p", "--model", "openai-compatible/bench", "hi"], { ...modelEnv, NODE_DEBUG: "esm,module" });
const modules = new Set();
for (const m of traced.err.matchAll(/Storing (file:\/\/\S+)|load "([^"]+)" for module/g)) {
  const p = (m[1] ?? m[2]).replace("file://", "");
  if (p.includes("node_modules/")) modules.add(p.split("node_modules/").pop().split("/").slice(0, p.split("node_modules/").pop().startsWith("@") ? 2 : 1).join("/"));
  else if (p.startsWith(root)) modules.add(p.slice(root.length + 1));
}
await server.close();

const ratio = (x) => `${(x / bare.ms).toFixed(2)}x`;
console.log(`runs per figure: ${runs} (median)`);
console.log(`${"node -e 0".padEnd(22)} ${fmt(bare.ms).padStart(10)}  peak RSS ${bare.rss.toFixed(1)} MB`);
console.log(`${"larik --version".padEnd(22)} ${fmt(version.ms).padStart(10)}  peak RSS ${version.rss.toFixed(1)} MB  (${ratio(version.ms)} of bare node; target ≤ 1.2x)`);
console.log(`${"larik --help".padEnd(22)} ${fmt(help.ms).padStart(10)}  peak RSS ${help.rss.toFixed(1)} MB  (${ratio(help.ms)})`);
console.log(`${"-p to first request".padEnd(22)} ${fmt(median(firstReq)).padStart(10)}  (${ratio(median(firstReq))} of bare node; target ≤ 1.6x)`);
console.log(`${"scripted -p, 4 requests".padEnd(22)} ${fmt(whole.ms).padStart(10)}  peak RSS ${wholeRss.toFixed(1)} MB (target < 120 MB)`);
const heavy = [...modules].filter((m) => /^(ink|react|react-reconciler|h3|@modelcontextprotocol\/sdk|vscode-jsonrpc)$/.test(m));
console.log(`modules loaded by -p (${modules.size}): ${[...modules].sort().join(", ")}`);
console.log(`ink/react/h3 loaded by -p: ${heavy.length ? heavy.join(", ") : "none"}`);
