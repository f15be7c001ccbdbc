#!/usr/bin/env node
// bench/server-load: `larik serve` under load (LARIK-REFERENCE §21), not a test.
//
//   node bench/server-load.mjs [sessions=50] [prompts=5] [clients=1]
//
// A child process serves a host with the JSONL store, the scripted provider and the test tools
// (TypeScript loaded through jiti). This process opens `sessions` sessions, `clients` SSE
// subscribers on each, and sends `prompts` prompts per session, all sessions in parallel
// (alternating a 2,000-character answer streamed as 250 deltas 2 ms apart, and a tool that emits
// 50 notices). It then
// checks every subscriber received every seq exactly once, and prints lost/duplicated events
// (target 0) and the p50/p99 latency from the agent emitting an event to a subscriber parsing
// it (both clocks are performance.timeOrigin + now() on this machine).
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createParser } from "eventsource-parser";

const root = resolve(import.meta.dirname, "..");
const now = () => performance.timeOrigin + performance.now();

if (process.argv[2] === "--child") await child();
else await parent();

/** The server side: a host with the test plugin and an `event` tap that stamps emit times. */
async function child() {
  const { createJiti } = await import("jiti");
  const jiti = createJiti(import.meta.url);
  const { Host, definePlugin } = await jiti.import(join(root, "kernel/index.ts"));
  const sessions = (await jiti.import(join(root, "plugins/sessions-jsonl/index.ts"))).default;
  const { startServer } = await jiti.import(join(root, "plugins/server/server.ts"));
  const { Gates, testPlugin } = await jiti.import(join(root, "test/server-harness.ts"));
  const stamp = definePlugin({
    name: "bench-stamp",
    setup(ctx) {
      // The kernel passes the same object to this hook and then to the run's stream, so the
      // stamp travels with the event to the SSE subscribers.
      ctx.hooks.event.tap((e) => {
        e.t_emit = now();
      });
    },
  });
  const data = mkdtempSync(join(tmpdir(), "larik-bench-serve-"));
  const host = await Host.create({
    plugins: [sessions, testPlugin(new Gates()), stamp],
    settings: {},
    cwd: data,
    env: { ...process.env, XDG_DATA_HOME: join(data, "data"), XDG_CONFIG_HOME: join(data, "config") },
  });
  const server = await startServer(host, { port: 0, token: "bench-token-0123456789", defaults: { model: "scripted/bench", mode: "yolo" }, log: () => {} });
  process.stdout.write(`${JSON.stringify({ url: server.url, token: server.token })}\n`);
  process.once("SIGTERM", async () => {
    await server.close();
    await host.dispose();
    process.exit(0);
  });
}

async function parent() {
  const [nSessions = 50, nPrompts = 5, nClients = 1] = process.argv.slice(2).map(Number);
  const proc = spawn(process.execPath, [import.meta.filename, "--child"], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const { url, token } = await new Promise((res, rej) => {
    proc.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) res(JSON.parse(out));
    });
    proc.once("exit", (c) => rej(new Error(`server exited ${c}`)));
  });
  const auth = { authorization: `Bearer ${token}` };
  const api = async (method, path, body) => {
    const r = await fetch(url + path, { method, headers: { ...auth, "content-type": "application/json" }, body: body && JSON.stringify(body) });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  const ids = [];
  for (let i = 0; i < nSessions; i++) ids.push((await api("POST", "/v1/sessions", {})).id);

  const latencies = [];
  const subscribers = [];
  for (const id of ids) {
    for (let c = 0; c < nClients; c++) {
      const sub = { id, seqs: [], opened: undefined, ctrl: new AbortController() };
      const parser = createParser({
        onEvent: (e) => {
          const t = now();
          sub.seqs.push(Number(e.id));
          const t0 = JSON.parse(e.data).t_emit;
          if (typeof t0 === "number") latencies.push(t - t0);
        },
      });
      sub.done = (async () => {
        const res = await fetch(`${url}/v1/sessions/${id}/events`, { headers: auth, signal: sub.ctrl.signal });
        sub.opened?.();
        const dec = new TextDecoder();
        try {
          for await (const chunk of res.body) parser.feed(dec.decode(chunk, { stream: true }));
        } catch {
          // aborted at the end
        }
      })();
      await new Promise((r) => (sub.opened = r));
      subscribers.push(sub);
    }
  }

  const t0 = performance.now();
  await Promise.all(
    ids.map(async (id) => {
      for (let p = 0; p < nPrompts; p++) {
        const r = await api("POST", `/v1/sessions/${id}/prompt`, { text: p % 2 ? "spam 50 200" : "stream 2000 2", wait: true });
        if (r.stop_reason !== "end_turn") throw new Error(`session ${id}: ${JSON.stringify(r)}`);
      }
    }),
  );
  const wall = performance.now() - t0;

  // wait until every subscriber has reached its session's last seq (or give up after 10 s)
  const last = new Map();
  for (const id of ids) last.set(id, (await api("GET", `/v1/sessions/${id}`)).last_seq);
  const deadline = Date.now() + 10_000;
  while (subscribers.some((s) => Math.max(0, ...s.seqs) < last.get(s.id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

  let lost = 0;
  let duplicated = 0;
  let total = 0;
  for (const s of subscribers) {
    const seen = new Set();
    for (const q of s.seqs) {
      if (seen.has(q)) duplicated++;
      seen.add(q);
    }
    for (let q = 1; q <= last.get(s.id); q++) if (!seen.has(q)) lost++;
    total += s.seqs.length;
    s.ctrl.abort();
  }
  await Promise.all(subscribers.map((s) => s.done));
  proc.kill("SIGTERM");
  await new Promise((r) => proc.once("exit", r));

  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  const published = [...last.values()].reduce((a, b) => a + b, 0);
  console.log(`sessions ${nSessions}, SSE clients ${subscribers.length}, prompts ${nSessions * nPrompts}`);
  console.log(`events published ${published}, delivered ${total} (${Math.round(total / (wall / 1000))}/s over ${(wall / 1000).toFixed(2)} s)`);
  console.log(`lost ${lost}, duplicated ${duplicated} (target 0)`);
  console.log(`emit → subscriber latency over ${latencies.length} agent events: p50 ${pct(50).toFixed(2)} ms, p99 ${pct(99).toFixed(2)} ms, max ${latencies.at(-1).toFixed(2)} ms`);
  process.exitCode = lost || duplicated ? 1 : 0;
}
