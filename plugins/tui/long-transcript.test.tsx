/**
 * The rendering discipline over a long session: 2,000 messages go through the real App and
 * Ink (not the testing library's debug mode) into a fake 100×40 TTY that records every write.
 * Finished output must be written exactly once and never redrawn, and the bytes of a frame must
 * not grow with the transcript above it.
 */
import { EventEmitter } from "node:events";
import { render } from "ink";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Host } from "../../kernel/index.js";
import { App } from "./app.js";
import { TuiController } from "./controller.js";
import { INK_OPTIONS } from "./frame.js";
import { NoInput } from "./no-input.js";
import { loadMarkdown } from "./markdown.js";
import { ScriptedProvider } from "../../test/fakes/scripted-provider.js";
import { tempProject } from "./test-kit.js";

// Ink decides at import whether it runs in CI (then it prints only <Static> output and no live
// region). This test measures the live region, so it runs Ink as in a user's terminal.
vi.hoisted(() => {
  for (const k of Object.keys(process.env)) if (k === "CI" || k === "CONTINUOUS_INTEGRATION" || k.startsWith("CI_")) delete process.env[k];
});

class FakeTty extends EventEmitter {
  readonly isTTY = true;
  columns = 100;
  rows = 40;
  chunks: string[] = [];
  write = (s: string | Uint8Array) => {
    this.chunks.push(typeof s === "string" ? s : Buffer.from(s).toString("utf8"));
    return true;
  };
  /** Bytes written since the last call. */
  take(): string {
    const out = this.chunks.join("");
    this.chunks = [];
    return out;
  }
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MESSAGES = 2000;
const PER_STEP = 40;
const CLEAR_SCREEN = /\x1b\[2J|\x1b\[3J|\x1bc/;

describe("long transcript", () => {
  let stdout: FakeTty;
  let controller: TuiController;
  let unmount: () => void;

  beforeAll(async () => {
    await loadMarkdown();
    const { dir, env } = tempProject();
    const host = await Host.create({ plugins: [], settings: {}, cwd: dir, env });
    const agent = await host.openAgent({ provider: new ScriptedProvider([]), model: "scripted/x" });
    controller = new TuiController(host, agent, { tickMs: 0 });
    stdout = new FakeTty();
    const inst = render(<App controller={controller} />, {
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: new NoInput() as unknown as NodeJS.ReadStream,
      stderr: new FakeTty() as unknown as NodeJS.WriteStream,
      patchConsole: false,
      exitOnCtrlC: false,
      ...INK_OPTIONS,
    });
    unmount = inst.unmount;
    await sleep(60);
    stdout.take();
  });
  afterAll(() => unmount?.());

  it("writes 2,000 messages once each and keeps frame size independent of their number", async () => {
    const liveBytes: number[] = [];
    const commitBytes: number[] = [];
    let all = "";
    let n = 0;
    for (let step = 0; n < MESSAGES; step++) {
      // a frame that only changes the live region (a streamed token)
      controller.onEvent({ type: "text_delta", text: `streaming token ${String(step).padStart(3, "0")}` });
      await sleep(70);
      const live = stdout.take();
      liveBytes.push(Buffer.byteLength(live));
      all += live;
      // a frame that finishes messages (printed above the live region)
      for (let i = 0; i < PER_STEP; i++, n++) {
        controller.onEvent({
          type: "assistant_message",
          message: { role: "assistant", blocks: [{ type: "text", text: `message ${String(n).padStart(4, "0")} done` }] },
        });
      }
      await sleep(70);
      const commit = stdout.take();
      commitBytes.push(Buffer.byteLength(commit));
      all += commit;
    }
    expect(controller.snapshot().items).toHaveLength(MESSAGES);
    // every finished message reached the terminal exactly once: nothing was redrawn
    for (let i = 0; i < MESSAGES; i += 1) {
      const marker = `message ${String(i).padStart(4, "0")} done`;
      const count = all.split(marker).length - 1;
      if (count !== 1) throw new Error(`${marker} was written ${count} times`);
    }
    expect(all).not.toMatch(CLEAR_SCREEN);
    // the per-frame cost does not depend on how much transcript is above
    const steps = liveBytes.length;
    const early = liveBytes.slice(1, 6);
    const late = liveBytes.slice(steps - 5);
    expect(Math.min(...early)).toBeGreaterThan(0);
    expect(Math.max(...late)).toBeLessThanOrEqual(Math.max(...early) + 16);
    const earlyCommit = commitBytes.slice(1, 6);
    const lateCommit = commitBytes.slice(steps - 5);
    expect(Math.max(...lateCommit)).toBeLessThanOrEqual(Math.max(...earlyCommit) * 1.1 + 64);
  }, 60_000);
});
