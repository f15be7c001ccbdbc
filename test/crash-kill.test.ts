/**
 * Crash safety of sessions (issue 5, LARIK-REFERENCE §7, invariant 5): the built CLI is killed
 * with SIGKILL at random points of a scripted multi-round turn (tool calls including slow `bash
 * sleep`s, a write, parallel reads), many times, several at once. After every kill the session
 * (if one was created) must open with the real JSONL store, replay, answer every tool_use once
 * repaired, and `larik -c` must resume it and send a history the provider accepts.
 *
 * Kill points are drawn from a seeded generator: set CRASH_SEED to replay a run, CRASH_RUNS to
 * change the count (default 60). The figures are printed at the end.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repairToolResults, replay, type Message } from "../kernel/index.js";
import { JsonlSessionStore } from "../plugins/sessions-jsonl/store.js";
import { startMockModelServer, type MockReply } from "./fakes/mock-model-server.js";

const root = resolve(import.meta.dirname, "..");
const RUNS = Number(process.env.CRASH_RUNS ?? 50);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
// Mostly waiting (tool sleeps, I/O), so more runs than cores overlap well.
const PARALLEL = Math.min(8, Math.max(4, availableParallelism() * 3));

/** One scripted turn: four model rounds, five tool calls, two of them slow. */
const TURN: MockReply[] = [
  { text: "Step one.", tools: [{ id: "c1", name: "bash", input: { command: "sleep 0.3; echo one" } }] },
  {
    text: "Now write and run.",
    tools: [
      { id: "c2", name: "write", input: { path: "out.txt", content: "x\n" } },
      { id: "c3", name: "bash", input: { command: "sleep 0.2; echo two" } },
    ],
  },
  {
    tools: [
      { id: "c4", name: "read", input: { path: "out.txt" } },
      { id: "c5", name: "glob", input: { pattern: "*.txt" } },
    ],
  },
  { text: "All done." },
];

/** mulberry32: a small seeded generator, so a failing run can be replayed with CRASH_SEED. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Newest mtime (ms) of the sources the CLI is built from. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    if (name.name === "node_modules" || name.name.startsWith(".")) continue;
    const p = join(dir, name.name);
    if (name.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (/\.tsx?$/.test(name.name) && !/\.test\.tsx?$/.test(name.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * `dist/cli.cjs` when it and the bundles it loads are newer than every source; otherwise a
 * private build under node_modules/.cache (so a concurrent `npm run build` cannot pull it away
 * mid-test).
 */
async function cliPath(): Promise<string> {
  const built = ["cli.cjs", "headless.cjs", "headless-lazy.cjs", "main.js"].map((f) => join(root, "dist", f));
  const sources = Math.max(...["kernel", "plugins", "cli", "presets", "build"].map((d) => newestSource(join(root, d))), statSync(join(root, "cli.ts")).mtimeMs);
  if (built.every((f) => existsSync(f) && statSync(f).mtimeMs >= sources)) return built[0]!;
  const out = join(root, "node_modules", ".cache", "larik-crash-kill");
  const { build } = await import("tsup");
  // tsup.config.ts applies (its four builds, bundling, version define); only the output place
  // differs, and no .d.ts. Source maps stay on: the headless build asks terser for a map of its
  // step, which tsup chains onto esbuild's, and without esbuild's map that fails ("reading 'sections'").
  await build({ outDir: out, dts: false, silent: true });
  return join(out, "cli.cjs");
}

interface Outcome {
  /** How the kill point was chosen and where it landed. */
  how: KillPlan["how"];
  killedAfterMs: number;
  eventsSeen: number;
  exitedBeforeKill: boolean;
  session: boolean;
  messages: number;
  toolUses: number;
  unanswered: number;
  recoveries: number;
}

function spawnCli(cli: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
}

function collect(child: ReturnType<typeof spawn>): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  return new Promise((r) => child.on("close", (code, signal) => r({ code, signal, stdout, stderr })));
}

/** Tool uses of `messages` without a tool_result in the following user message. */
function unansweredUses(messages: readonly Message[]): string[] {
  const missing: string[] = [];
  messages.forEach((m, i) => {
    if (m.role !== "assistant") return;
    const answered = new Set((messages[i + 1]?.blocks ?? []).filter((b) => b.type === "tool_result").map((b) => (b as { id: string }).id));
    for (const b of m.blocks) if (b.type === "tool_use" && !answered.has(b.id)) missing.push(b.id);
  });
  return missing;
}

/**
 * Where one run is killed: `startup` at a time after spawn (often before the session exists),
 * `time` at a time after the turn's first event, `event` right after the n-th event line.
 * Anchoring on the first event keeps the kills inside the turn however slow start-up is.
 */
interface KillPlan {
  how: "startup" | "time" | "event";
  atMs: number;
  atEvent: number;
}

/** Draws every run's kill point up front, so CRASH_SEED replays the same plan however runs interleave. */
function plans(seed: number, runs: number): KillPlan[] {
  const random = rng(seed);
  return Array.from({ length: runs }, () => {
    const r = random();
    return {
      how: r < 0.1 ? "startup" : r < 0.55 ? "time" : "event",
      atMs: Math.floor(random() * 1300),
      atEvent: 1 + Math.floor(random() * 24),
    };
  });
}

async function oneRun(cli: string, plan: KillPlan, index: number): Promise<Outcome> {
  const base = mkdtempSync(join(tmpdir(), `larik-crash-${index}-`));
  const cwd = join(base, "project");
  mkdirSync(cwd);
  const server = await startMockModelServer(TURN);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(base, "home"),
    XDG_CONFIG_HOME: join(base, "config"),
    XDG_DATA_HOME: join(base, "data"),
    NO_COLOR: "1",
    OPENAI_BASE_URL: `${server.url}/v1`,
    OPENAI_API_KEY: "test-key",
  };
  try {
    const { how, atMs, atEvent } = plan;
    const started = Date.now();
    const child = spawnCli(cli, ["-p", "--mode", "yolo", "--model", "openai-compatible/m", "--output", "json", "do the scripted task"], cwd, env);
    const done = collect(child);
    let events = 0;
    let killedAt = -1;
    const kill = () => {
      if (killedAt >= 0 || child.exitCode !== null) return;
      killedAt = Date.now() - started;
      child.kill("SIGKILL");
    };
    let timer = how === "startup" ? setTimeout(kill, atMs) : undefined;
    child.stdout!.on("data", (d: Buffer) => {
      const first = events === 0;
      events += d.toString("utf8").split("\n").length - 1;
      if (how === "event" && events >= atEvent) kill();
      if (how === "time" && first) timer = setTimeout(kill, atMs);
    });
    const r = await done;
    clearTimeout(timer);
    // A kill sent as the process was exiting (its exit not yet reported, so exitCode still null)
    // lands on nothing: the run finished, and must have finished well.
    const exitedBeforeKill = killedAt < 0 || r.signal === null;
    if (exitedBeforeKill) expect(r.code, r.stderr).toBe(0);
    else expect(r.signal).toBe("SIGKILL");

    const store = new JsonlSessionStore({ env });
    const list = await store.list(cwd);
    const outcome: Outcome = { how, killedAfterMs: exitedBeforeKill ? -1 : killedAt, eventsSeen: events, exitedBeforeKill, session: list.length > 0, messages: 0, toolUses: 0, unanswered: 0, recoveries: 0 };
    if (!list.length) {
      // Killed before the session file existed: -c says so in one line.
      const c = await collect(spawnCli(cli, ["-c", "-p", "continue"], cwd, env));
      expect(c.code, `run ${index}: ${c.stderr}`).toBe(2);
      expect(c.stderr.trim().split("\n")).toHaveLength(1);
      expect(c.stderr).toMatch(/no session to continue/);
      return outcome;
    }
    expect(list).toHaveLength(1);
    const handle = await store.open(cwd, list[0]!.id); // takes over the dead process's lock
    const rep = replay(handle.entries());
    outcome.messages = rep.all.length;
    outcome.recoveries = handle.entries().filter((e) => e.type === "recovery").length;
    outcome.toolUses = rep.all.flatMap((m) => m.blocks).filter((b) => b.type === "tool_use").length;
    outcome.unanswered = unansweredUses(rep.messages).length;
    const repaired = repairToolResults(rep.messages);
    expect(unansweredUses(repaired), `run ${index}`).toEqual([]);
    // every tool_use is answered exactly once, in order
    repaired.forEach((m, i) => {
      if (m.role !== "assistant") return;
      const uses = m.blocks.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
      if (!uses.length) return;
      const results = repaired[i + 1]!.blocks.filter((b) => b.type === "tool_result").map((b) => (b as { id: string }).id);
      expect(results).toEqual(uses);
    });
    await handle.close();

    // -c resumes it, and what goes over the wire answers every tool call. A fresh server: the
    // killed turn's unused replies stay queued on the first one.
    const resumeServer = await startMockModelServer([{ text: "resumed ok" }]);
    const c = await collect(spawnCli(cli, ["-c", "-p", "continue"], cwd, { ...env, OPENAI_BASE_URL: `${resumeServer.url}/v1` })).finally(() => resumeServer.close());
    expect(resumeServer.requests).toHaveLength(1);
    expect(c.stderr, `run ${index}: ${c.stderr}`).not.toMatch(/error/i);
    expect(c.code).toBe(0);
    expect(c.stdout).toBe("resumed ok\n");
    const sent = resumeServer.requests[0]!.body.messages as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[];
    const callIds = sent.flatMap((m) => (m.tool_calls ?? []).map((t) => t.id));
    const resultIds = sent.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    expect(resultIds.sort()).toEqual(callIds.sort());
    expect(JSON.stringify(sent.at(-1))).toContain("continue");
    return outcome;
  } finally {
    await server.close();
    rmSync(base, { recursive: true, force: true });
  }
}

describe("kill -9 of the CLI mid-turn", () => {
  let cli: string;
  beforeAll(async () => {
    cli = await cliPath();
  }, 120_000);

  it(`leaves sessions that open, replay, answer every tool_use and resume with -c (${RUNS} kills, seed ${SEED})`, async () => {
    const plan = plans(SEED, RUNS);
    const outcomes: Outcome[] = [];
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < RUNS) {
        const i = next++;
        outcomes.push(await oneRun(cli, plan[i]!, i));
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    const ms = Date.now() - started;
    const killed = outcomes.filter((o) => !o.exitedBeforeKill);
    const withSession = killed.filter((o) => o.session);
    const midTool = withSession.filter((o) => o.unanswered > 0);
    const figures = {
      seed: SEED,
      runs: outcomes.length,
      parallel: PARALLEL,
      wall_ms: ms,
      killed: killed.length,
      finished_before_kill: outcomes.length - killed.length,
      killed_before_session_file: killed.length - withSession.length,
      killed_with_session: withSession.length,
      killed_with_unanswered_tool_use: midTool.length,
      killed_in_startup: killed.filter((o) => o.how === "startup").length,
      killed_by_time: killed.filter((o) => o.how === "time").length,
      killed_after_event: killed.filter((o) => o.how === "event").length,
      messages_on_disk_histogram: Object.fromEntries(
        [...new Set(withSession.map((o) => o.messages))].sort((a, b) => a - b).map((n) => [n, withSession.filter((o) => o.messages === n).length]),
      ),
      recovery_entries: withSession.reduce((n, o) => n + o.recoveries, 0),
    };
    console.log(`crash-kill figures: ${JSON.stringify(figures)}`);
    expect(outcomes).toHaveLength(RUNS);
    expect(RUNS).toBeGreaterThanOrEqual(50);
    // the kill points must really land inside turns, including between a tool_use and its result
    expect(withSession.length).toBeGreaterThan(RUNS / 2);
    expect(midTool.length).toBeGreaterThan(0);
  }, 240_000);
});
