/**
 * Mounts the real App on a fake TTY that records every write, for `bench/tui.mjs` (loaded there
 * through jiti). Not part of the plugin's run path.
 */
import { EventEmitter } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { render } from "ink";
import { Host, type Provider } from "../../kernel/index.js";
import { App } from "./app.js";
import { TuiController } from "./controller.js";
import { INK_OPTIONS } from "./frame.js";
import { NoInput } from "./no-input.js";
import { loadMarkdown } from "./markdown.js";

/** A terminal stand-in: a TTY of the given size that keeps what was written. */
export class RecordingTty extends EventEmitter {
  readonly isTTY = true;
  bytes = 0;
  writes = 0;
  constructor(
    public columns: number,
    public rows: number,
  ) {
    super();
  }
  write = (s: string | Uint8Array): boolean => {
    this.bytes += typeof s === "string" ? Buffer.byteLength(s) : s.byteLength;
    this.writes++;
    return true;
  };
}


const idle: Provider = {
  name: "scripted",
  // the benchmark feeds events to the controller directly; no model request is made
  async *stream() {
    throw new Error("the benchmark makes no model requests");
  },
};

/** The mounted app with its recording terminal and Ink's per-frame render times (ms). */
export interface Mounted {
  controller: TuiController;
  tty: RecordingTty;
  renderMs: number[];
  unmount(): void;
}

/** Mounts the App at `columns`×`rows` with an in-memory session. */
export async function mountApp(columns = 120, rows = 40): Promise<Mounted> {
  await loadMarkdown();
  const dir = mkdtempSync(join(tmpdir(), "larik-tui-bench-"));
  const env = { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: join(dir, "c"), XDG_DATA_HOME: join(dir, "d") };
  const host = await Host.create({ plugins: [], settings: {}, cwd: dir, env });
  const agent = await host.openAgent({ provider: idle, model: "scripted/bench" });
  const controller = new TuiController(host, agent, { tickMs: 0 });
  const tty = new RecordingTty(columns, rows);
  const renderMs: number[] = [];
  const inst = render(<App controller={controller} />, {
    stdout: tty as unknown as NodeJS.WriteStream,
    stdin: new NoInput() as unknown as NodeJS.ReadStream,
    stderr: new RecordingTty(columns, rows) as unknown as NodeJS.WriteStream,
    patchConsole: false,
    exitOnCtrlC: false,
    onRender: ({ renderTime }) => renderMs.push(renderTime),
    ...INK_OPTIONS,
  });
  return { controller, tty, renderMs, unmount: () => inst.unmount() };
}
