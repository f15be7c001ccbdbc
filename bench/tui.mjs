#!/usr/bin/env node
// bench/tui: the interactive UI's cost, in one run.
//
//   node bench/tui.mjs [tokens] [runs]
//
// Prints:
//   1. streaming: bytes written to the terminal and CPU time per streamed token and per frame,
//      with an empty transcript and with 5,000 lines of finished transcript above (the target:
//      per-frame cost independent of transcript length, under 16 ms). The real App and Ink
//      render into a recording 120×40 TTY in this process; tokens arrive every 5 ms as
//      `text_delta` events, with a paragraph break every 60 tokens as a model would write.
//   2. idle: CPU time of a real `larik` TUI process over 10 s with nothing happening (in a
//      pseudo-terminal made by util-linux `script`).
//   3. start-up: spawn → first paint of the TUI, beside spawn → first answer byte of `-p`
//      (median of `runs`, default 7), both in a pseudo-terminal, both against a local mock model.
// Uses dist/cli.cjs when its preset carries `tui`, else a tsup build of the CLI with `tui`
// appended to the default preset (see plugins/tui/launcher-build.ts). No network is used.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

// Ink decides at import whether it runs in CI (no live region then); measure it as a user runs it
for (const k of Object.keys(process.env)) if (k === "CI" || k === "CONTINUOUS_INTEGRATION" || k.startsWith("CI_")) delete process.env[k];
process.env.NODE_ENV = "production"; // as the bin sets it (STACK.md gotcha 19)

const { createJiti } = await import("jiti");
const root = resolve(import.meta.dirname, "..");
const TOKENS = Number(process.argv[2] ?? 600);
const RUNS = Number(process.argv[3] ?? 7);
const jiti = createJiti(import.meta.url);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

// ── 1. streaming cost ─────────────────────────────────────────────────────────────────────
const { buildBenchHarness, tuiProgram } = await jiti.import(join(root, "plugins/tui/launcher-build.ts"));
const { mountApp } = await import(await buildBenchHarness());

async function streaming(transcriptLines) {
  const m = await mountApp(120, 40);
  const c = m.controller;
  const LINES_PER_ITEM = 10;
  for (let i = 0; i < transcriptLines / LINES_PER_ITEM; i++) {
    const text = Array.from({ length: LINES_PER_ITEM }, (_, j) => `Line ${i * LINES_PER_ITEM + j} of the finished transcript, written once.`).join("  \n");
    c.onEvent({ type: "assistant_message", message: { role: "assistant", blocks: [{ type: "text", text }] } });
    if (i % 50 === 49) await sleep(40);
  }
  await sleep(200);
  const items = c.snapshot().items.length;
  const bytes0 = m.tty.bytes;
  const frames0 = m.renderMs.length;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let streamed = "";
  for (let i = 0; i < TOKENS; i++) {
    const tok = i % 60 === 59 ? "end.\n\n" : i % 12 === 11 ? "word\n" : "word ";
    streamed += tok;
    c.onEvent({ type: "text_delta", text: tok });
    await sleep(5);
  }
  c.onEvent({ type: "assistant_message", message: { role: "assistant", blocks: [{ type: "text", text: streamed }] } });
  await sleep(100);
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  const bytes = m.tty.bytes - bytes0;
  const renders = m.renderMs.slice(frames0);
  m.unmount();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return {
    transcriptLines,
    items,
    bytesPerToken: bytes / TOKENS,
    cpuUsPerToken: (cpuMs * 1000) / TOKENS,
    frames: renders.length,
    bytesPerFrame: bytes / Math.max(1, renders.length),
    cpuMsPerFrame: cpuMs / Math.max(1, renders.length),
    renderP50: pct(renders, 0.5),
    renderP95: pct(renders, 0.95),
    renderMax: Math.max(...renders),
    wall,
  };
}

const progress = (s) => process.stderr.write(`… ${s}\n`);
// warm up JIT and module caches, then measure
progress("streaming into the recording terminal");
await streaming(0);
const empty = await streaming(0);
const full = await streaming(5000);

// ── 2 & 3. real processes in a pseudo-terminal ───────────────────────────────────────────
const { startMockModelServer } = await jiti.import(join(root, "test/fakes/mock-model-server.ts"));
const program = await tuiProgram();
const server = await startMockModelServer();
const home = mkdtempSync(join(tmpdir(), "larik-bench-tui-home-"));
const project = mkdtempSync(join(tmpdir(), "larik-bench-tui-proj-"));
mkdirSync(join(project, ".git"));
const env = {
  PATH: process.env.PATH,
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_DATA_HOME: join(home, "data"),
  TERM: "xterm-256color",
  LANG: "C.UTF-8",
  OPENAI_BASE_URL: `${server.url}/v1`,
  OPENAI_API_KEY: "bench",
};
const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/** Runs `args` in a 120×40 pty; resolves when `ready(output)` holds, with the child. */
function inPty(args, ready, pidFile) {
  const cmd = `stty cols 120 rows 40; echo $$ > ${q(pidFile)}; exec ${[process.execPath, program.cli, ...args].map(q).join(" ")}`;
  const t0 = performance.now();
  const child = spawn("script", ["-qfec", cmd, "/dev/null"], { cwd: project, env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  return new Promise((res, rej) => {
    let done = false;
    child.stdout.on("data", (d) => {
      out += d;
      if (!done && ready(out)) {
        done = true;
        res({ child, ms: performance.now() - t0, out: () => out });
      }
    });
    child.on("close", () => {
      if (!done) rej(new Error(`exited before it was ready:\n${out}`));
    });
  });
}

function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (100 per second on Linux)
}

/** ctrl+d on the empty composer; repeated until the app has raw mode on and exits. */
async function quit(child) {
  const closed = new Promise((r) => child.on("close", r));
  for (let i = 0; i < 20; i++) {
    child.stdin.write("\x04");
    if (await Promise.race([closed.then(() => true), sleep(250).then(() => false)])) return;
  }
  child.kill("SIGKILL");
  await closed;
}

// idle CPU over 10 s
progress("idle CPU of a real TUI process over 10 s");
const pidFile = join(home, "pid");
const idleRun = await inPty(["--model", "openai-compatible/bench"], (o) => o.includes("ask anything"), pidFile);
await sleep(1000);
const pid = Number(readFileSync(pidFile, "utf8").trim());
const before = cpuTicks(pid);
await sleep(10_000);
const idleMs = (cpuTicks(pid) - before) * 10;
await quit(idleRun.child);

// start-up to first paint, TUI and headless
progress(`start-up, ${RUNS} runs each`);
const tuiStart = [];
const tuiNotice = [];
const headStart = [];
for (let i = 0; i < RUNS; i++) {
  let notice = 0;
  const t0 = performance.now();
  const r = await inPty(["--model", "openai-compatible/bench"], (o) => {
    if (!notice && o.includes("starting")) notice = performance.now() - t0;
    return o.includes("ask anything");
  }, pidFile);
  tuiStart.push(r.ms);
  tuiNotice.push(notice || r.ms);
  await quit(r.child);
  server.push({ text: "pong" });
  const h = await inPty(["-p", "--model", "openai-compatible/bench", "ping"], (o) => o.includes("pong"), pidFile);
  headStart.push(h.ms);
  await new Promise((r) => h.child.on("close", r));
}
await server.close();

const f1 = (x) => x.toFixed(1);
console.log(`program: ${program.real ? "dist/cli.cjs" : "tsup build of cli.ts with tui appended to the default preset"}`);
console.log(`\nstreaming ${TOKENS} tokens (one every 5 ms) into a 120×40 terminal:`);
console.log("transcript above      bytes/token  CPU µs/token  frames  bytes/frame  CPU ms/frame  Ink render ms p50 / p95 / max");
for (const r of [empty, full]) {
  console.log(
    `${`${r.transcriptLines} lines (${r.items} items)`.padEnd(21)} ${f1(r.bytesPerToken).padStart(11)}  ${f1(r.cpuUsPerToken).padStart(12)}  ${String(r.frames).padStart(6)}  ${f1(r.bytesPerFrame).padStart(11)}  ${r.cpuMsPerFrame.toFixed(2).padStart(12)}  ${r.renderP50.toFixed(2)} / ${r.renderP95.toFixed(2)} / ${r.renderMax.toFixed(2)}`,
  );
}
console.log(`ratio 5,000 lines / empty: bytes per frame ${(full.bytesPerFrame / empty.bytesPerFrame).toFixed(2)}x, CPU per frame ${(full.cpuMsPerFrame / empty.cpuMsPerFrame).toFixed(2)}x (target ≈ 1x, < 16 ms per frame)`);
console.log(`\nidle TUI process: ${idleMs} ms CPU over 10 s (${(idleMs / 100).toFixed(2)}% of one core; clock-tick resolution 10 ms)`);
console.log(`\nstart-up (median of ${RUNS}, in a pty):`);
console.log(`  TUI spawn → "starting…" line  ${f1(median(tuiNotice))} ms`);
console.log(`  TUI spawn → first paint       ${f1(median(tuiStart))} ms (composer and footer drawn, input live)`);
console.log(`  -p  spawn → first answer byte ${f1(median(headStart))} ms (includes one model request to the local mock)`);
process.exit(0);
