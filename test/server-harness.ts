/**
 * Shared setup for the server tests: a host with the JSONL session store, a "scripted" provider
 * whose replies depend on the prompt, small test tools (one asks for permission, one waits on
 * a gate, one floods notices), the server on loopback, and HTTP/SSE clients.
 *
 * Prompt language of the scripted model:
 *   `hello` → "hi there"; `ask <name>` → calls ask_write; `gate <name>` → calls gate;
 *   `spam <n> <bytes>` → calls spam; `long <chars>` → a long text reply (deltas in one burst);
 *   `stream <chars> <ms>` → the same with `ms` between 8-character deltas; anything else → echo.
 *   After a tool result it answers `tool said: <result>`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createParser } from "eventsource-parser";
import { z } from "zod";
import { defineTool, definePlugin, Host, type Block, type ModelRequest, type Plugin } from "../kernel/index.js";
import sessionsJsonl from "../plugins/sessions-jsonl/index.js";
import serverPlugin from "../plugins/server/index.js";
import { startServer, type ServerHandle, type StartOptions } from "../plugins/server/server.js";
import { ScriptedProvider, call, text } from "./fakes/scripted-provider.js";

export const TOKEN = "test-token-0123456789abcdef";

let toolSeq = 0;

/** The scripted model: decides each reply from the newest user message. */
export async function brain(req: ModelRequest): Promise<{ blocks: Block[] }> {
  const last = req.messages[req.messages.length - 1];
  const tail = last?.blocks[last.blocks.length - 1];
  // an interrupted turn's results merge into the next prompt's message: the newest block decides
  if (tail?.type === "tool_result") {
    const results = last!.blocks.filter((b) => b.type === "tool_result");
    return { blocks: [text(`tool said: ${results.map((r) => (r as { content: string }).content).join(" | ")}`)] };
  }
  const prompt = tail?.type === "text" ? tail.text : "";
  if (prompt.startsWith("Your context window is nearly full")) return { blocks: [text("<summary>we said hello</summary>")] };
  const [cmd, a, b] = prompt.trim().split(/\s+/);
  const id = `call_${++toolSeq}`;
  switch (cmd) {
    case "hello":
      return { blocks: [text("hi there")] };
    case "ask":
      return { blocks: [text("asking"), call(id, "ask_write", { path: a ?? "out.txt" })] };
    case "gate":
      return { blocks: [call(id, "gate", { name: a ?? "g" })] };
    case "spam":
      return { blocks: [call(id, "spam", { n: Number(a), bytes: Number(b) })] };
    case "long":
      return { blocks: [text("x".repeat(Number(a)))] };
    case "stream": {
      // ScriptedProvider reads delayMs from function replies too; its type just does not say so
      const reply = { blocks: [text("x".repeat(Number(a)))], delayMs: Number(b) };
      return reply;
    }
    default:
      return { blocks: [text(`echo: ${prompt}`)] };
  }
}

/** Gates the `gate` tool waits on: `open(name)` lets it finish. */
export class Gates {
  #waiters = new Map<string, () => void>();
  #entered = new Map<string, () => void>();
  #enteredP = new Map<string, Promise<void>>();
  wait(name: string, signal: AbortSignal): Promise<void> {
    void this.entered(name);
    this.#entered.get(name)!();
    return new Promise((resolve, reject) => {
      this.#waiters.set(name, resolve);
      // a "stubborn…" gate ignores cancellation, like a tool that does not honour its signal
      if (!name.startsWith("stubborn")) signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
    });
  }
  /** Resolves once the tool is waiting on `name`. */
  entered(name: string): Promise<void> {
    let p = this.#enteredP.get(name);
    if (!p) {
      p = new Promise((r) => this.#entered.set(name, r));
      this.#enteredP.set(name, p);
    }
    return p;
  }
  open(name: string): void {
    this.#waiters.get(name)?.();
  }
}

/** A plugin with the scripted provider factory and the test tools. */
export function testPlugin(gates: Gates): Plugin {
  return definePlugin({
    name: "server-test",
    setup(ctx) {
      ctx.providers.register({
        name: "scripted",
        keyEnv: [],
        create: () => new ScriptedProvider(Array.from({ length: 5000 }, () => brain)),
      });
      ctx.tools.register(
        defineTool({
          name: "ask_write",
          description: "Pretends to write a file (asks for permission).",
          input: z.object({ path: z.string() }),
          kind: "write",
          subject: ({ path }) => path,
          writePaths: ({ path }) => [path],
          async run({ path }) {
            return { content: `wrote ${path}` };
          },
        }),
      );
      ctx.tools.register(
        defineTool({
          name: "gate",
          description: "Waits until the test opens the gate.",
          input: z.object({ name: z.string() }),
          kind: "read",
          async run({ name }, tctx) {
            await gates.wait(name, tctx.signal);
            return { content: `gate ${name} passed` };
          },
        }),
      );
      ctx.tools.register(
        defineTool({
          name: "spam",
          description: "Emits n notices of the given size.",
          input: z.object({ n: z.number(), bytes: z.number() }),
          kind: "read",
          async run({ n, bytes }, tctx) {
            const body = "n".repeat(bytes);
            for (let i = 0; i < n; i++) {
              tctx.notice(`${i} ${body}`);
              // let sockets drain between notices, as a real tool's I/O would
              await new Promise((r) => setImmediate(r));
            }
            return { content: `spammed ${n}` };
          },
        }),
      );
    },
  });
}

export function tmp(prefix = "larik-server-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestServer {
  host: Host;
  server: ServerHandle;
  gates: Gates;
  url: string;
  cwd: string;
  logs: string[];
  api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiResult>;
  close(): Promise<void>;
}

export interface ApiResult {
  status: number;
  headers: Headers;
  body: any;
}

/** Builds a host (JSONL store in a temp data dir, scripted provider, test tools) and starts the server. */
export async function startTestServer(
  opts: Partial<StartOptions> & { plugins?: Plugin[]; settings?: Record<string, unknown>; memory?: boolean } = {},
): Promise<TestServer> {
  const cwd = tmp();
  const data = tmp("larik-data-");
  const gates = new Gates();
  const env = { ...process.env, XDG_DATA_HOME: data, XDG_CONFIG_HOME: join(data, "config"), LARIK_SERVER_TOKEN: "" };
  const host = await Host.create({
    plugins: [...(opts.memory ? [] : [sessionsJsonl]), testPlugin(gates), serverPlugin, ...(opts.plugins ?? [])],
    settings: opts.settings ?? {},
    cwd,
    env,
  });
  const logs: string[] = [];
  const server = await startServer(host, {
    port: 0,
    token: TOKEN,
    defaults: { model: "scripted/x" },
    log: (l) => logs.push(l),
    ...opts,
  });
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(server.url, method, path, body, { authorization: `Bearer ${TOKEN}`, ...headers });
  return {
    host,
    server,
    gates,
    url: server.url,
    cwd,
    logs,
    api,
    async close() {
      await server.close();
      await host.dispose();
    },
  };
}

/** One HTTP request; `body` is JSON-encoded unless it is a string. */
export async function request(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResult> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const raw = await res.text();
  let parsed: unknown = raw;
  if ((res.headers.get("content-type") ?? "").includes("json") && raw) parsed = JSON.parse(raw);
  return { status: res.status, headers: res.headers, body: parsed };
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: any;
}

/** An SSE client on fetch + eventsource-parser that records events and comments. */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  status = 0;
  ended = false;
  #ctrl = new AbortController();
  #waiters: (() => void)[] = [];
  #done: Promise<void>;

  constructor(url: string, opts: { token?: string; lastEventId?: number; after?: number; query?: boolean; headers?: Record<string, string> } = {}) {
    const u = new URL(url);
    if (opts.after !== undefined) u.searchParams.set("after", String(opts.after));
    if (opts.query) u.searchParams.set("token", opts.token ?? TOKEN);
    const headers: Record<string, string> = { ...opts.headers };
    if (!opts.query) headers.authorization = `Bearer ${opts.token ?? TOKEN}`;
    if (opts.lastEventId !== undefined) headers["last-event-id"] = String(opts.lastEventId);
    const parser = createParser({
      onEvent: (e) => {
        this.events.push({ id: e.id, event: e.event, data: JSON.parse(e.data) });
        this.#notify();
      },
      onComment: (c) => {
        this.comments.push(c.trim());
        this.#notify();
      },
    });
    this.#done = (async () => {
      try {
        const res = await fetch(u, { headers, signal: this.#ctrl.signal });
        this.status = res.status;
        this.#notify();
        if (!res.ok || !res.body) return;
        const decoder = new TextDecoder();
        for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      } catch {
        // aborted or dropped
      } finally {
        this.ended = true;
        this.#notify();
      }
    })();
  }

  #notify(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Waits until `pred` holds (checked after every event), failing after `ms`. */
  async until(pred: () => boolean, what: string, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${this.events.map((e) => e.event).join(",")}`);
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** Waits for an event of `type` (matching `pred`) and returns it. */
  async next(type: string, pred: (e: SseEvent) => boolean = () => true, ms?: number): Promise<SseEvent> {
    let found: SseEvent | undefined;
    await this.until(() => (found = this.events.find((e) => e.event === type && pred(e))) !== undefined, `event ${type}`, ms);
    return found!;
  }

  /** Waits for the turn to end: a `status` event with busy=false after `fromSeq`. */
  idle(fromSeq = 0, ms?: number): Promise<SseEvent> {
    return this.next("status", (e) => e.data.busy === false && e.data.seq > fromSeq, ms);
  }

  seqs(): number[] {
    return this.events.map((e) => Number(e.id));
  }

  async close(): Promise<void> {
    this.#ctrl.abort();
    await this.#done;
  }
}
