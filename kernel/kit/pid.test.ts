import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import { pidAlive } from "./pid.js";

it("tells a running process from one that has exited", () => {
  expect(pidAlive(process.pid)).toBe(true);
  const gone = spawnSync(process.execPath, ["-e", "0"]).pid!;
  expect(pidAlive(gone)).toBe(false);
});
