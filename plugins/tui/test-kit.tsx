/**
 * Shared set-up for this plugin's component tests: a real Host with stand-ins for the core
 * tools and a few test commands, a real Agent on the scripted provider, the TuiController with the real helpers,
 * and the App rendered by ink-testing-library. Not part of the plugin.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { render } from "ink-testing-library";
import { readFile, writeFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import {
  definePlugin,
  defineTool,
  Host,
  type Command,
  type ModelRequest,
  type Plugin,
  type Provider,
  type Settings,
  type StreamEvent,
} from "../../kernel/index.js";
import { ScriptedProvider, type Script } from "../../test/fakes/scripted-provider.js";
import { App } from "./app.js";
import { TuiController, type ControllerOptions } from "./controller.js";
import { previewDiff } from "./diff-view.js";
import { PromptHistory } from "./history.js";
import { expandMentions, listProjectFiles } from "./mentions.js";
import { runShell } from "./shell.js";

/** Keys as a terminal sends them. */
export const KEY = {
  enter: "\r",
  esc: "\x1b",
  tab: "\t",
  shiftTab: "\x1b[Z",
  up: "\x1b[A",
  down: "\x1b[B",
  backspace: "\x7f",
  ctrlC: "\x03",
  ctrlD: "\x04",
  ctrlJ: "\n",
  ctrlO: "\x0f",
  ctrlR: "\x12",
  altEnter: "\x1b\r",
  pasteStart: "\x1b[200~",
  pasteEnd: "\x1b[201~",
};

// Any ANSI escape sequence (SGR, cursor moves, OSC), for comparing plain text.
const ANSI = /\x1b(?:\[[0-9;:?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/** `s` without escape sequences. */
export function plain(s: string | undefined): string {
  return (s ?? "").replace(ANSI, "");
}

/** Polls `check` every 10 ms until it returns true; throws with `what` after `ms`. */
export async function waitFor(check: () => boolean, what: string | (() => string), ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A temp project directory with a private HOME/XDG tree beside it. */
export function tempProject(prefix = "larik-tui-"): { dir: string; env: NodeJS.ProcessEnv } {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const dir = join(base, "project");
  mkdirSync(dir);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(base, "home"),
    XDG_CONFIG_HOME: join(base, "home", ".config"),
    XDG_DATA_HOME: join(base, "home", ".local", "share"),
  };
  return { dir, env };
}

/**
 * Small stand-ins for the core tools with the same names, kinds and `display` contract
 * (`{type:"diff"}` from write/edit, `{type:"todos"}` from todo_write): a plugin's tests may not
 * import another plugin, and these are all the TUI needs to render tool rows and prompts.
 */
const testTools: Plugin = definePlugin({
  name: "test-tools",
  setup(ctx) {
    const abs = (cwd: string, p: string) => (isAbsolute(p) ? p : resolve(cwd, p));
    const diffOf = async (path: string, before: string, after: string) => {
      const { structuredPatch } = await import("diff");
      const patch = structuredPatch(path, path, before, after, undefined, undefined, { context: 3 });
      const lines = patch.hunks.flatMap((h) => [`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines]);
      return {
        type: "diff",
        path,
        diff: [`--- ${path}`, `+++ ${path}`, ...lines].join("\n"),
        added: lines.filter((l) => l.startsWith("+")).length,
        removed: lines.filter((l) => l.startsWith("-")).length,
      };
    };
    ctx.tools.register(
      defineTool({
        name: "read",
        description: "Read a file.",
        input: z.object({ path: z.string() }),
        kind: "read",
        async run({ path }, t) {
          return { content: await readFile(abs(t.cwd, path), "utf8") };
        },
      }),
    );
    ctx.tools.register(
      defineTool({
        name: "edit",
        description: "Replace text in a file.",
        input: z.object({ path: z.string(), old_string: z.string(), new_string: z.string() }),
        kind: "write",
        subject: (i) => i.path,
        writePaths: (i) => [i.path],
        async run({ path, old_string, new_string }, t) {
          const before = await readFile(abs(t.cwd, path), "utf8");
          const after = before.replace(old_string, () => new_string);
          await writeFile(abs(t.cwd, path), after);
          return { content: `Edited ${path}`, display: await diffOf(path, before, after) };
        },
      }),
    );
    ctx.tools.register(
      defineTool({
        name: "write",
        description: "Write a file.",
        input: z.object({ path: z.string(), content: z.string() }),
        kind: "write",
        subject: (i) => i.path,
        writePaths: (i) => [i.path],
        async run({ path, content }, t) {
          const before = await readFile(abs(t.cwd, path), "utf8").catch(() => "");
          await writeFile(abs(t.cwd, path), content);
          return { content: `Wrote ${path}`, display: { ...(await diffOf(path, before, content)), created: !before } };
        },
      }),
    );
    ctx.tools.register(
      defineTool({
        name: "bash",
        description: "Run a command (not really: the tests only ask about it).",
        input: z.object({ command: z.string() }),
        kind: "bash",
        subject: (i) => i.command,
        async run({ command }) {
          return { content: `ran ${command}` };
        },
      }),
    );
    ctx.tools.register(
      defineTool({
        name: "todo_write",
        description: "Replace the todo list.",
        input: z.object({ todos: z.array(z.object({ content: z.string(), status: z.enum(["pending", "in_progress", "completed"]), active_form: z.string().optional() })) }),
        kind: "read",
        async run({ todos }) {
          return { content: `Todo list updated: ${todos.length} items.`, display: { type: "todos", todos } };
        },
      }),
    );
  },
});

/** A plugin registering `commands`. */
export function commandsPlugin(commands: Command[]): Plugin {
  return definePlugin({
    name: "test-commands",
    setup(ctx) {
      for (const c of commands) ctx.commands.register(c);
    },
  });
}

/**
 * A provider that streams `first`, then waits for `release()` (or the request's abort), then
 * streams `second` and ends. Lets a test look at the screen in the middle of a reply.
 */
export class GatedProvider implements Provider {
  readonly name = "scripted";
  readonly requests: ModelRequest[] = [];
  #release!: () => void;
  #gate: Promise<void>;
  constructor(
    private readonly first: string,
    private readonly second: string,
    private readonly after: string[] = [],
  ) {
    this.#gate = new Promise((r) => (this.#release = r));
  }
  release(): void {
    this.#release();
  }
  async *stream(req: ModelRequest): AsyncIterable<StreamEvent> {
    this.requests.push(req);
    const n = this.requests.length;
    if (n > 1) {
      const t = this.after[n - 2] ?? "ok";
      yield { type: "text_delta", text: t };
      yield { type: "done", message: { role: "assistant", blocks: [{ type: "text", text: t }] }, usage: { input: 10, output: 2, cache_read: 0, cache_write: 0 }, stop_reason: "end_turn" };
      return;
    }
    yield { type: "text_delta", text: this.first };
    await new Promise<void>((resolve, reject) => {
      void this.#gate.then(resolve);
      req.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
    });
    yield { type: "text_delta", text: this.second };
    const text = this.first + this.second;
    yield { type: "done", message: { role: "assistant", blocks: [{ type: "text", text }] }, usage: { input: 10, output: 5, cache_read: 0, cache_write: 0 }, stop_reason: "end_turn" };
  }
}

/** A provider that records the requests it got (ScriptedProvider, GatedProvider). */
export type RecordingProvider = Provider & { requests: ModelRequest[] };

export interface Rig {
  host: Host;
  controller: TuiController;
  provider: RecordingProvider;
  dir: string;
  env: NodeJS.ProcessEnv;
  history: PromptHistory;
  /** The whole screen as plain text (transcript + live region). */
  screen(): string;
  /** Writes keys/text to stdin, one chunk. */
  press(...chunks: string[]): Promise<void>;
  type(text: string): Promise<void>;
  until(text: string | RegExp, ms?: number): Promise<void>;
  unmount(): void;
}

/**
 * Builds a host ({@link testTools} + `plugins`), an agent on `scripts` (or `provider`) and renders the
 * App at 100×`rows`.
 */
export async function rig(opts: {
  scripts?: Script[];
  provider?: RecordingProvider;
  plugins?: Plugin[];
  settings?: Settings;
  mode?: "default" | "accept-edits" | "plan" | "auto" | "yolo";
  rows?: number;
  setupDir?: (dir: string) => void;
  controller?: Partial<ControllerOptions>;
}): Promise<Rig> {
  const { dir, env } = tempProject();
  opts.setupDir?.(dir);
  const host = await Host.create({ plugins: [testTools, ...(opts.plugins ?? [])], settings: opts.settings ?? {}, cwd: dir, env });
  const provider = opts.provider ?? new ScriptedProvider(opts.scripts ?? []);
  const agent = await host.openAgent({ provider, model: "scripted/x", mode: opts.mode ?? "default" });
  const history = await PromptHistory.load(dir, env);
  const controller = new TuiController(host, agent, {
    history,
    tickMs: 0,
    // a test answers a prompt as soon as it shows; the type-ahead guard has a test of its own
    promptGuardMs: 0,
    listFiles: listProjectFiles,
    runShell,
    expand: expandMentions,
    preview: previewDiff,
    ...opts.controller,
  });
  const r = render(<App controller={controller} columns={100} rows={opts.rows ?? 40} />);
  const screen = () => plain(r.lastFrame());
  const settle = () => new Promise((res) => setTimeout(res, 30));
  return {
    host,
    controller,
    provider,
    dir,
    env,
    history,
    screen,
    async press(...chunks) {
      for (const c of chunks) {
        r.stdin.write(c);
        await settle();
      }
    },
    async type(text) {
      r.stdin.write(text);
      await settle();
    },
    until: (text, ms) => waitFor(() => (typeof text === "string" ? screen().includes(text) : text.test(screen())), () => `screen to show ${String(text)}\n--- screen ---\n${screen()}`, ms),
    unmount: () => r.unmount(),
  };
}
