import { expect, it } from "vitest";
import { STOP_SIGNALS, trapStopSignals } from "./stop-signals.js";

it("calls back at the first stop signal, reports 128 + its number, and leaves no handler behind", () => {
  const before = STOP_SIGNALS.map((s) => process.listenerCount(s));
  const seen: string[] = [];
  const trap = trapStopSignals((s) => seen.push(s));
  expect(trap.exitStatus(1)).toBe(1);
  process.emit("SIGTERM", "SIGTERM");
  expect(seen).toEqual(["SIGTERM"]);
  expect(trap.signal).toBe("SIGTERM");
  expect(trap.exitStatus(0)).toBe(143);
  trap.dispose();
  expect(STOP_SIGNALS.map((s) => process.listenerCount(s))).toEqual(before);
});
