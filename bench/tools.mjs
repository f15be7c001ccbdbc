#!/usr/bin/env node
// bench/tools: overhead of the tool path (issue 4, "Speed"), in one run.
//
//   node bench/tools.mjs [reads] [bashes] [grepRuns]
//
// Prints median and p90, each beside the direct operation, with the overhead as a difference
// and a ratio:
//   - `read` of a small file through a real Host (core-tools + hooks plugins, yolo mode, cwd a
//     temp git repo) driven by the scripted provider: the tool path alone (from the `tool_start`
//     event to `tool_end`: permission check, hooks, checkpoint, events) and the whole round
//     (prompt → scripted tool call → tool → scripted answer → `done`), beside fs.readFile;
//   - `bash true` the same way, beside spawning `bash -c true` directly;
//   - `grep` over a 50,000-file tree (a .gitignore'd folder included) through the tool's `run`
//     and through an agent round, beside the bundled rg with the tool's flags, and the
//     JavaScript fallback (`ripgrep: false`).
// No network; every temp folder is removed at the end. Defaults: 200 reads, 100 bash, 7 greps.
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createJiti } from "jiti";
import { rgPath } from "@vscode/ripgrep";

const root = resolve(import.meta.dirname, "..");
const N_READ = Number(process.argv[2] ?? 200);
const N_BASH = Number(process.argv[3] ?? 100);
const N_GREP = Number(process.argv[4] ?? 7);
const jiti = createJiti(import.meta.url);
const k = await jiti.import(join(root, "kernel/index.ts"));
const coreTools = (await jiti.import(join(root, "plugins/core-tools/index.ts"))).default;
const hooksPlugin = (await jiti.import(join(root, "plugins/hooks/index.ts"))).default;
const { grepTool } = await jiti.import(join(root, "plugins/core-tools/grep.ts"));
const { makeContext, call: callTool } = await jiti.import(join(root, "plugins/core-tools/test-context.ts"));
const { ScriptedProvider } = await jiti.import(join(root, "test/fakes/scripted-provider.ts"));

const temps = [];
const temp = (prefix) => {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  temps.push(d);
  return d;
};
const cleanup = () => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
};
process.on("exit", cleanup);

// ---- statistics and printing ----
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const pct = (xs, p) => {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const med = (xs) => pct(xs, 50);
const ms = (x) => (x < 1 ? `${(x * 1000).toFixed(0)} µs` : `${x.toFixed(2)} ms`);
const pad = (s, n) => String(s).padEnd(n);
function row(label, xs) {
  console.log(`  ${pad(label, 48)} median ${pad(ms(med(xs)), 10)} p90 ${ms(pct(xs, 90))}`);
}
function overhead(label, xs, base) {
  const d = med(xs) - med(base);
  console.log(`  ${pad(`overhead, ${label}`, 48)} +${ms(d)} per call (median ${(med(xs) / med(base)).toFixed(1)}×)`);
}

// ---- the host ----
const home = temp("larik-bench-tools-home-");
const project = temp("larik-bench-tools-proj-");
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" };
const sample = join(project, "sample.txt");
writeFileSync(sample, Array.from({ length: 100 }, (_, i) => `line ${i + 1} of a small sample file`).join("\n") + "\n");
execFileSync("git", ["init", "-q"], { cwd: project, env: gitEnv });
execFileSync("git", ["add", "-A"], { cwd: project, env: gitEnv });
execFileSync("git", ["commit", "-qm", "init"], { cwd: project, env: gitEnv });

const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, "data") };
const host = await k.Host.create({ plugins: [coreTools, hooksPlugin], cwd: project, settings: {}, env });
if (host.failed.length) throw new Error(`plugins failed: ${host.failed.map((f) => f.error.message).join("; ")}`);
const provider = new ScriptedProvider([]);
const agent = await host.openAgent({ provider, model: "scripted/x", mode: "yolo" });

let seq = 0;
/** One round: the model calls `name` with `input`, then answers "ok". Returns tool and round ms. */
async function round(name, input) {
  const id = `toolu_${++seq}`;
  provider.push({ blocks: [{ type: "tool_use", id, name, input }] }, { blocks: [{ type: "text", text: "ok" }] });
  let tStart;
  let tEnd;
  let result;
  const t0 = performance.now();
  for await (const ev of agent.run("go")) {
    if (ev.type === "tool_start") tStart = performance.now();
    else if (ev.type === "tool_end") {
      tEnd = performance.now();
      result = ev;
    } else if (ev.type === "error") throw new Error(`agent error: ${ev.text}`);
  }
  const total = performance.now() - t0;
  if (!result || tStart === undefined) throw new Error(`no tool_start/tool_end for ${name}`);
  if (result.is_error) throw new Error(`${name} failed: ${result.output.slice(0, 200)}`);
  // a fresh context each round keeps the history (and the fake's request copies) constant
  agent.clear();
  return { tool: tEnd - tStart, total, output: result.output };
}

async function series(n, warm, fn) {
  for (let i = 0; i < warm; i++) await fn();
  const out = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

function spawnTrue() {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const c = spawn("bash", ["-c", "true"], { cwd: project, stdio: ["ignore", "pipe", "pipe"] });
    c.on("error", rej);
    c.on("close", () => res(performance.now() - t0));
  });
}

console.log(`bench/tools — node ${process.version}, ${process.platform}/${process.arch}`);

// ---- read ----
{
  const rounds = await series(N_READ, 10, () => round("read", { path: "sample.txt" }));
  if (!rounds[0].output.includes("line 100")) throw new Error("read returned unexpected output");
  const direct = await series(N_READ, 10, async () => {
    const t0 = performance.now();
    await readFile(sample, "utf8");
    return performance.now() - t0;
  });
  console.log(`\nread of a 100-line file, ${N_READ} calls`);
  row("fs.readFile (direct)", direct);
  row("read tool, tool_start → tool_end", rounds.map((r) => r.tool));
  row("read tool, whole round (scripted model)", rounds.map((r) => r.total));
  overhead("tool path", rounds.map((r) => r.tool), direct);
  overhead("whole round", rounds.map((r) => r.total), direct);
}

// ---- bash true ----
{
  const rounds = await series(N_BASH, 5, () => round("bash", { command: "true" }));
  const direct = await series(N_BASH, 5, spawnTrue);
  console.log(`\nbash true, ${N_BASH} calls (cwd a git repo: the checkpoint runs git status before and after)`);
  row("spawn bash -c true (direct)", direct);
  row("bash tool, tool_start → tool_end", rounds.map((r) => r.tool));
  row("bash tool, whole round (scripted model)", rounds.map((r) => r.total));
  overhead("tool path", rounds.map((r) => r.tool), direct);
  overhead("whole round", rounds.map((r) => r.total), direct);
}

// ---- grep over 50,000 files ----
{
  const tree = temp("larik-bench-tools-grep-");
  const DIRS = 250;
  const PER_DIR = 200; // 250 × 200 = 50,000 files
  const IGNORED_DIRS = 10; // dirs ignored/d000..d009 hold 2,000 of them
  let matching = 0;
  writeFileSync(join(tree, ".gitignore"), "ignored/\n");
  for (let d = 0; d < DIRS; d++) {
    const ignored = d < IGNORED_DIRS;
    const dir = ignored ? join(tree, "ignored", `d${String(d).padStart(3, "0")}`) : join(tree, "src", `m${String(d % 20).padStart(2, "0")}`, `d${String(d).padStart(3, "0")}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < PER_DIR; f++) {
      // one file in 100 carries the needle: 480 matches outside the ignored folder, under the 500-line cap
      const hit = (d * PER_DIR + f) % 100 === 7;
      if (hit && !ignored) matching++;
      const body = `export const value${f} = ${d * PER_DIR + f};\n// plain filler text for file ${f}\n${hit ? "// NEEDLE_marker here\n" : ""}function f${f}() { return value${f}; }\n`;
      writeFileSync(join(dir, `file${f}.ts`), body);
    }
  }
  const FILES = DIRS * PER_DIR;
  const ctx = makeContext(tree);
  const rgTool = grepTool({});
  const jsTool = grepTool({ ripgrep: false });
  const args = { pattern: "NEEDLE_\\w+" };
  const rgArgs = ["--no-require-git", "--line-number", "--no-heading", "--with-filename", "--null", "--color", "never", "--no-messages",
    "--max-count", "50", "--max-columns", "300", "--max-columns-preview", "--sort", "path", "--regexp", args.pattern];
  const countLines = (text) => text.split("\n").filter((l) => l.includes("NEEDLE_marker")).length;

  const runRg = () =>
    new Promise((res, rej) => {
      const t0 = performance.now();
      const c = spawn(rgPath, rgArgs, { cwd: tree, stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      c.stdout.setEncoding("utf8").on("data", (s) => (out += s));
      c.on("error", rej);
      c.on("close", () => res({ ms: performance.now() - t0, lines: countLines(out) }));
    });
  const runTool = async (tool) => {
    const t0 = performance.now();
    const r = await callTool(tool, args, ctx);
    const t = performance.now() - t0;
    if (r.is_error) throw new Error(`grep failed: ${r.content}`);
    return { ms: t, lines: countLines(r.content) };
  };

  // file tools refuse paths outside the project, so a second host rooted at the tree drives the agent round
  const gHost = await k.Host.create({ plugins: [coreTools, hooksPlugin], cwd: tree, settings: {}, env });
  const gProvider = new ScriptedProvider([]);
  const gAgent = await gHost.openAgent({ provider: gProvider, model: "scripted/x", mode: "yolo" });
  const runAgentGrep = async () => {
    const id = `toolu_g${++seq}`;
    gProvider.push({ blocks: [{ type: "tool_use", id, name: "grep", input: args }] }, { blocks: [{ type: "text", text: "ok" }] });
    let tStart, tEnd, out;
    const t0 = performance.now();
    for await (const ev of gAgent.run("go")) {
      if (ev.type === "tool_start") tStart = performance.now();
      else if (ev.type === "tool_end") {
        tEnd = performance.now();
        out = ev;
      } else if (ev.type === "error") throw new Error(`agent error: ${ev.text}`);
    }
    const total = performance.now() - t0;
    if (!out || out.is_error) throw new Error(`grep round failed: ${out?.output}`);
    gAgent.clear();
    return { tool: tEnd - tStart, total, lines: countLines(out.output) };
  };

  const rg = await series(N_GREP, 2, runRg);
  const viaRun = await series(N_GREP, 1, () => runTool(rgTool));
  const viaAgent = await series(N_GREP, 1, runAgentGrep);
  const js = await series(Math.max(3, Math.ceil(N_GREP / 2)), 1, () => runTool(jsTool));
  for (const [label, r] of [["rg", rg[0]], ["tool run", viaRun[0]], ["agent", viaAgent[0]], ["JS fallback", js[0]]]) {
    if (r.lines !== matching) throw new Error(`${label} found ${r.lines} matching lines, expected ${matching}`);
  }
  const rgMs = rg.map((r) => r.ms);
  console.log(`\ngrep "${args.pattern}" over ${FILES.toLocaleString("en")} files (${(IGNORED_DIRS * PER_DIR).toLocaleString("en")} in a .gitignore'd folder), ${matching} matching lines; ${N_GREP} runs (JS fallback ${js.length})`);
  row(`rg alone (${rgPath.includes("node_modules") ? "@vscode/ripgrep" : rgPath}, tool's flags)`, rgMs);
  row("grep tool run() (ripgrep)", viaRun.map((r) => r.ms));
  row("grep tool via agent, tool_start → tool_end", viaAgent.map((r) => r.tool));
  row("grep tool via agent, whole round", viaAgent.map((r) => r.total));
  row("grep tool run(), JS fallback (ripgrep: false)", js.map((r) => r.ms));
  overhead("run() vs rg", viaRun.map((r) => r.ms), rgMs);
  overhead("agent tool path vs rg", viaAgent.map((r) => r.tool), rgMs);
  overhead("JS fallback vs rg", js.map((r) => r.ms), rgMs);
  await gHost.dispose();
}

await host.dispose();
cleanup();
console.log("\ntemp folders removed");
