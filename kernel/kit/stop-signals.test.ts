import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { STOP_SIGNALS, trapStopSignals } from "./stop-signals.js";

it("calls back at the first stop signal, reports 128 + its number, and then ignores only SIGHUP", () => {
  const before = STOP_SIGNALS.map((s) => process.listenerCount(s));
  const seen: string[] = [];
  const trap = trapStopSignals((s) => seen.push(s));
  expect(trap.exitStatus(1)).toBe(1);
  process.emit("SIGTERM", "SIGTERM");
  process.emit("SIGHUP", "SIGHUP");
  expect(seen).toEqual(["SIGTERM"]);
  expect(trap.signal).toBe("SIGTERM");
  expect(trap.exitStatus(0)).toBe(143);
  trap.dispose();
  // SIGINT and SIGTERM are Node's again; SIGHUP keeps the one handler that ignores it
  expect(STOP_SIGNALS.map((s) => process.listenerCount(s))).toEqual(before.map((n, i) => (STOP_SIGNALS[i] === "SIGHUP" ? n + 1 : n)));
});

it("raise() stops as the signal would: once, with its exit status, later hangups ignored", () => {
  const seen: string[] = [];
  const trap = trapStopSignals((s) => seen.push(s));
  trap.raise("SIGHUP");
  process.emit("SIGHUP", "SIGHUP");
  trap.raise("SIGTERM");
  expect([seen, trap.signal, trap.exitStatus(0)]).toEqual([["SIGHUP"], "SIGHUP", 129]);
  trap.dispose();
  expect(process.listeners("SIGHUP").length).toBeGreaterThan(0);
});

/** Runs a process that traps stop signals and finishes its clean-up 300 ms after the first. */
function trapped(): { child: ReturnType<typeof spawn>; out: () => string; ready: Promise<void>; closed: Promise<{ code: number | null; signal: string | null }> } {
  const script = [
    `const { createJiti } = require("jiti");`,
    `const { trapStopSignals } = createJiti(${JSON.stringify(import.meta.filename)})(${JSON.stringify(join(import.meta.dirname, "stop-signals.ts"))});`,
    `const trap = trapStopSignals((s) => {`,
    `  console.log("stop " + s);`,
    `  setTimeout(() => trap.dispose(), 50);`, // a front end disposes the trap before its session closes
    `  setTimeout(() => { console.log("finished"); process.exit(trap.exitStatus(0)); }, 300);`,
    `});`,
    `console.log("ready");`,
    `setInterval(() => {}, 1000);`,
  ].join("\n");
  const child = spawn(process.execPath, ["-e", script], { cwd: join(import.meta.dirname, ".."), stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  let onReady: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  child.stdout!.on("data", (d) => {
    out += d;
    if (out.includes("ready")) onReady();
  });
  const closed = new Promise<{ code: number | null; signal: string | null }>((r) => child.on("close", (code, signal) => r({ code, signal })));
  return { child, out: () => out, ready, closed };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("a closed terminal's repeated SIGHUPs do not cut the clean-up short; a second SIGTERM does", async () => {
  // closing a terminal under an interactive shell delivers SIGHUP twice, ~1 ms apart
  const hup = trapped();
  await hup.ready;
  hup.child.kill("SIGHUP");
  await sleep(5);
  hup.child.kill("SIGHUP");
  await sleep(150); // after dispose()
  hup.child.kill("SIGHUP");
  expect(await hup.closed).toEqual({ code: 129, signal: null });
  expect(hup.out()).toBe("ready\nstop SIGHUP\nfinished\n");

  const term = trapped();
  await term.ready;
  term.child.kill("SIGTERM");
  await sleep(20);
  term.child.kill("SIGTERM");
  expect(await term.closed).toEqual({ code: null, signal: "SIGTERM" });
  expect(term.out()).toBe("ready\nstop SIGTERM\n");
}, 20_000);
