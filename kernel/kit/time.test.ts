import { describe, expect, it } from "vitest";
import { isoTime } from "./time.js";

describe("isoTime", () => {
  it("gives what Date#toISOString gives", () => {
    const dates = [new Date(0), new Date(Date.UTC(2026, 10, 30, 17, 5, 9, 7)), new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999)), new Date(Date.UTC(9999, 0, 1)), new Date()];
    for (let i = 0; i < 200; i++) dates.push(new Date(Math.floor(Math.random() * 253402300799999)));
    for (const d of dates) expect(isoTime(d)).toBe(d.toISOString());
  });

  it("falls back to toISOString outside years 0-9999, and throws for an invalid date as it does", () => {
    const far = new Date(Date.UTC(10000, 0, 1));
    expect(isoTime(far)).toBe("+010000-01-01T00:00:00.000Z");
    const early = new Date(Date.UTC(-1, 0, 1));
    expect(isoTime(early)).toBe(early.toISOString());
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });

  it("defaults to now", () => {
    const before = Date.now();
    const t = Date.parse(isoTime());
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
  });
});
