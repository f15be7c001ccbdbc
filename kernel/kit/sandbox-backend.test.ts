import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { SandboxTmpDir } from "./sandbox-backend.js";

const savedTmp = process.env.TMPDIR;
afterEach(() => {
  process.env.TMPDIR = savedTmp;
});

it("names its temp folder after this process, and removes those of processes killed before their exit cleanup", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "larik-tmpdir-test-"));
  const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
  const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 20000)"], { stdio: "ignore" });
  try {
    mkdirSync(join(tmp, `larik-sandbox-${dead}-abc123`));
    writeFileSync(join(tmp, `larik-sandbox-${dead}-abc123`, "left.txt"), "x");
    mkdirSync(join(tmp, `larik-sandbox-${live.pid}-def456`));
    mkdirSync(join(tmp, "larik-sandbox-Q1w2e3")); // the older name, with no pid: left alone
    writeFileSync(join(tmp, `larik-sandbox-${dead}-file`), "not a folder");
    process.env.TMPDIR = tmp;
    const box = new SandboxTmpDir();
    const dir = box.get();
    expect(basename(dir)).toMatch(new RegExp(`^larik-sandbox-${process.pid}-`));
    expect(readdirSync(tmp).sort()).toEqual(
      [basename(dir), `larik-sandbox-${dead}-file`, `larik-sandbox-${live.pid}-def456`, "larik-sandbox-Q1w2e3"].sort(),
    );
    box.dispose();
  } finally {
    live.kill();
    rmSync(tmp, { recursive: true, force: true });
  }
});
