import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { pidAlive, pidsWithEnvIn } from "./pid.js";

it("tells a running process from one that has exited", () => {
  expect(pidAlive(process.pid)).toBe(true);
  const gone = spawnSync(process.execPath, ["-e", "0"]).pid!;
  expect(pidAlive(gone)).toBe(false);
});

/** A process in a copy of /proc: its stat (state, flags), environ and cmdline. */
function fakeProcess(proc: string, pid: number, p: { state?: string; flags?: number; environ?: string; cmdline?: string }): string {
  const dir = join(proc, String(pid));
  mkdirSync(dir);
  // proc(5): pid (comm) state ppid pgrp session tty_nr tpgid flags …
  writeFileSync(join(dir, "stat"), `${pid} (a (b) c) ${p.state ?? "S"} 1 ${pid} ${pid} 0 -1 ${p.flags ?? 4194560} 0 0\n`);
  writeFileSync(join(dir, "environ"), p.environ ?? "");
  writeFileSync(join(dir, "cmdline"), p.cmdline ?? "");
  return dir;
}

it("finds a process by its environment, reading again one caught in execve, whose environ and arguments read empty for a moment", () => {
  const proc = mkdtempSync(join(tmpdir(), "larik-proc-"));
  fakeProcess(proc, 901, { environ: "A=1\0LARIK_TEST_MARK=m-1\0", cmdline: "sleep\0" });
  fakeProcess(proc, 902, { environ: "LARIK_TEST_MARK=m-2\0" });
  fakeProcess(proc, 903, { environ: "LARIK_TEST_MARKER=m-1\0B=LARIK_TEST_MARK=m-1\0", cmdline: "x\0" }); // a longer name, a value
  // execve in progress: its environment appears a few ms after the scan begins
  const exec = fakeProcess(proc, 904, {});
  // a program that cleared its environment (`env -i`), a kernel thread and a zombie: empty for good
  fakeProcess(proc, 905, { cmdline: "sleep\0" });
  fakeProcess(proc, 906, { flags: 0x00200000 });
  fakeProcess(proc, 907, { state: "Z" });
  spawn("sh", ["-c", `printf 'LARIK_TEST_MARK=m-4\\0' > ${join(exec, "environ")}; printf 'sleep\\0' > ${join(exec, "cmdline")}`], { stdio: "ignore" });
  // a long window, for a loaded machine: the writer above may start late
  expect(pidsWithEnvIn(proc, "LARIK_TEST_MARK", "m-", true, 10_000).sort()).toEqual([901, 902, 904]);
  expect(pidsWithEnvIn(proc, "LARIK_TEST_MARK", "m-4")).toEqual([904]);
  expect(pidsWithEnvIn(proc, "LARIK_TEST_MARK", "m-")).toEqual([]); // a whole value, unless prefix
});
