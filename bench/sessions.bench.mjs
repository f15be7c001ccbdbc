// Session store benchmark (not a test): appends a 10,000-message session, then opens and
// replays it, printing wall times, the append cost per entry and peak RSS.
// Run: node bench/sessions.bench.mjs [messages] [--fsync]   (loads the TypeScript source through jiti)
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createJiti } from "jiti";

const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10_000);
const jiti = createJiti(import.meta.url);
const { JsonlSessionStore } = await jiti.import("../plugins/sessions-jsonl/store.ts");
const { replay } = await jiti.import("../kernel/session.ts");

const base = mkdtempSync(join(tmpdir(), "larik-bench-sessions-"));
const cwd = base;
const fsync = process.argv.includes("--fsync");
const store = new JsonlSessionStore({ root: join(base, "data"), fsync });
const usage = { input: 1200, output: 300, cache_read: 9000, cache_write: 0 };
const filler = "The quick brown fox jumps over the lazy dog. ".repeat(8);

/** A realistic mix per turn: prompt, tool call, tool result, answer. */
function message(i) {
  switch (i % 4) {
    case 0:
      return { role: "user", blocks: [{ type: "text", text: `prompt ${i}: ${filler}` }] };
    case 1:
      return { role: "assistant", model: "m1", blocks: [{ type: "text", text: "Reading it." }, { type: "tool_use", id: `t${i}`, name: "read", input: { path: `src/file${i}.ts` } }] };
    case 2:
      return { role: "user", blocks: [{ type: "tool_result", id: `t${i - 1}`, content: `${filler}\n`.repeat(4) }] };
    default:
      return { role: "assistant", model: "m1", blocks: [{ type: "text", text: `Answer ${i}. ${filler}` }] };
  }
}

try {
  const h = await store.create({ cwd, provider: "bench", model: "m1" });
  const entries = Array.from({ length: N }, (_, i) => {
    const m = message(i);
    return m.role === "assistant" ? { type: "message", message: m, usage } : { type: "message", message: m };
  });
  let t0 = performance.now();
  for (const e of entries) h.append(e);
  const appendMs = performance.now() - t0;
  await h.close();
  const bytes = statSync(h.location).size;

  t0 = performance.now();
  const r = await store.open(cwd, h.id);
  const openMs = performance.now() - t0;
  t0 = performance.now();
  const rep = replay(r.entries());
  const replayMs = performance.now() - t0;
  await r.close();
  if (rep.all.length !== N) throw new Error(`replayed ${rep.all.length} messages, expected ${N}`);

  t0 = performance.now();
  const list = await store.list(cwd);
  const listMs = performance.now() - t0;

  const fmt = (ms) => `${ms.toFixed(1)} ms`;
  console.log(`session: ${N} messages, ${(bytes / 1024 / 1024).toFixed(2)} MiB`);
  console.log(`append${fsync ? " (fsync)" : ""}:  ${fmt(appendMs)} total, ${((appendMs * 1000) / N).toFixed(1)} µs per entry`);
  console.log(`open:    ${fmt(openMs)} (read + parse + validate ${r.entries().length} entries)`);
  console.log(`replay:  ${fmt(replayMs)} (${rep.messages.length} context messages)`);
  console.log(`list:    ${fmt(listMs)} (${list.length} session)`);
  console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(1)} MiB`);
} finally {
  rmSync(base, { recursive: true, force: true });
}
