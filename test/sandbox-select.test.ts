/** Sandbox selection at start-up (LARIK-REFERENCE §19 "Startup probe"). */
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../kernel/index.js";
import { selectSandbox } from "../kernel/sandbox.js";

function fake(name: string, probe: Sandbox["probe"]): Sandbox & { probes: number } {
  const s = {
    name,
    probes: 0,
    async probe() {
      s.probes++;
      return probe();
    },
    wrap: (command: string) => ({ file: "bash", args: ["-c", command], env: {} }),
  };
  return s;
}

describe("selectSandbox", () => {
  it("uses the first backend whose probe passes", async () => {
    const a = fake("bubblewrap", async () => ({ ok: true }));
    const b = fake("other", async () => ({ ok: true }));
    const r = await selectSandbox([a, b], {});
    expect(r.sandbox).toBe(a);
    expect(r.notice).toBeUndefined();
    expect(b.probes).toBe(0);
  });

  it("is off without a notice when sandbox.enabled is false, and probes nothing", async () => {
    const a = fake("bubblewrap", async () => ({ ok: true }));
    expect(await selectSandbox([a], { sandbox: { enabled: false } })).toEqual({});
    expect(a.probes).toBe(0);
  });

  it("falls back to none with the reason and fix on one line", async () => {
    const a = fake("bubblewrap", async () => ({ ok: false, reason: "bwrap is not installed", fix: "install bubblewrap: sudo apt-get install bubblewrap" }));
    const r = await selectSandbox([a], { sandbox: { enabled: true } });
    expect(r.sandbox).toBeUndefined();
    expect(r.notice).toBe(
      "no sandbox: bubblewrap: bwrap is not installed; fix: install bubblewrap: sudo apt-get install bubblewrap. Bash commands will ask before running.",
    );
    expect(r.notice).not.toContain("\n");
  });

  it("tries the next backend after a failed one, and skips a registered none", async () => {
    const none = fake("none", async () => ({ ok: true }));
    const a = fake("seatbelt", async () => ({ ok: false, reason: "not macOS" }));
    const b = fake("bubblewrap", async () => ({ ok: true }));
    const r = await selectSandbox([none, a, b], {});
    expect(r.sandbox).toBe(b);
    expect(none.probes).toBe(0);
  });

  it("treats a throwing or hanging probe as failed", async () => {
    const t = fake("thrower", async () => {
      throw new Error("boom\nsecond line");
    });
    expect((await selectSandbox([t], {})).notice).toBe("no sandbox: thrower: boom second line. Bash commands will ask before running.");
    const h = fake("hangs", () => new Promise(() => {}));
    const r = await selectSandbox([h], {}, { timeoutMs: 50 });
    expect(r.sandbox).toBeUndefined();
    expect(r.notice).toMatch(/hangs: the hangs probe did not answer within 0.05 s/);
  });

  it("says what is missing when no backend is registered", async () => {
    expect((await selectSandbox([], {}, { platform: "linux" })).notice).toMatch(/no sandbox plugin is loaded \(add sandbox-bubblewrap\)/);
    expect((await selectSandbox([], {}, { platform: "darwin" })).notice).toMatch(/sandbox-seatbelt/);
    expect((await selectSandbox([], {}, { platform: "win32" })).notice).toMatch(/no OS sandbox exists for win32/);
  });
});

describe("probe cache", () => {
  it("skips the probe when a successful one with the same key is less than a day old, and never caches failures", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const file = join(mkdtempSync(join(tmpdir(), "larik-probe-")), "sandbox-probe.json");
    let probes = 0;
    let ok = true;
    let key = "k1";
    const sb = { name: "fake", probe: async () => (probes++, ok ? { ok: true } : { ok: false, reason: "broken" }), probeKey: () => key, wrap: () => ({ file: "", args: [], env: {} }) };
    const t0 = 1_000_000;
    expect((await selectSandbox([sb], {}, { cacheFile: file, now: t0 })).sandbox).toBe(sb);
    expect((await selectSandbox([sb], {}, { cacheFile: file, now: t0 + 1000 })).sandbox).toBe(sb);
    expect(probes).toBe(1);
    key = "k2"; // the binary changed: probe again
    await selectSandbox([sb], {}, { cacheFile: file, now: t0 + 2000 });
    expect(probes).toBe(2);
    await selectSandbox([sb], {}, { cacheFile: file, now: t0 + 2000 + 25 * 3600_000 }); // older than a day
    expect(probes).toBe(3);
    ok = false;
    key = "k3";
    expect((await selectSandbox([sb], {}, { cacheFile: file, now: t0 + 3000 })).sandbox).toBeUndefined();
    expect((await selectSandbox([sb], {}, { cacheFile: file, now: t0 + 4000 })).sandbox).toBeUndefined();
    expect(probes).toBe(5);
  });
});
