/**
 * A tiny loopback HTTP server for provider adapter tests: it answers each request with the next
 * queued reply (status, headers, body written whole, one byte at a time or in random-sized
 * pieces, optionally cut or left hanging) and records every request (method, path, headers,
 * body). Listens on 127.0.0.1 port 0; nothing leaves the machine.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** How a reply body is written to the socket. */
export type Chunking =
  | "whole"
  /** One byte per write, each flushed before the next. */
  | "bytes"
  /** Pieces of 1..max bytes from a seeded PRNG (splits land inside UTF-8 sequences and CRLF). */
  | { seed: number; max?: number }
  /** Explicit piece sizes, repeated while bytes remain. */
  | number[];

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  chunking?: Chunking;
  /** Destroy the connection after this many body bytes (a connection cut mid-stream). */
  cutAfter?: number;
  /** After writing the body, keep the connection open and silent (for stall tests). */
  hang?: boolean;
  /** Wait this long (ms) before sending the headers. */
  headerDelayMs?: number;
  /** Wait this long (ms) between body pieces. */
  delayMs?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON. */
  json(): any;
}

/** A deterministic PRNG (mulberry32) so a failing split can be replayed by its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits `bytes` the way `chunking` says. */
export function split(bytes: Uint8Array, chunking: Chunking = "whole"): Uint8Array[] {
  if (chunking === "whole") return [bytes];
  const sizes: () => number =
    chunking === "bytes"
      ? () => 1
      : Array.isArray(chunking)
        ? (() => {
            let i = 0;
            return () => Math.max(1, chunking[i++ % chunking.length]!);
          })()
        : (() => {
            const r = prng(chunking.seed);
            const max = chunking.max ?? 40;
            return () => 1 + Math.floor(r() * max);
          })();
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; ) {
    const n = sizes();
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const tick = () => new Promise<void>((r) => setImmediate(r));

/**
 * Writes one piece and lets the event loop turn before the next, so the client really receives
 * it as its own chunk (the client usually runs in the same process; without the turn, pieces
 * coalesce into 100-byte reads). That costs ~0.2 ms per piece: 1-byte writes of a 68 KB
 * recording take seconds.
 */
async function write(res: ServerResponse, chunk: Uint8Array): Promise<void> {
  await new Promise<void>((resolve, reject) => res.write(chunk, (err) => (err ? reject(err) : resolve())));
  await tick();
}

export class ReplayServer {
  readonly requests: RecordedRequest[] = [];
  readonly #queue: Reply[] = [];
  readonly #server: Server;
  #url = "";

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Starts a server on 127.0.0.1 with an OS-assigned port. */
  static async start(): Promise<ReplayServer> {
    const server = createServer();
    const rs = new ReplayServer(server);
    server.on("request", (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        rs.requests.push({
          method: req.method ?? "",
          path: req.url ?? "",
          headers: req.headers,
          body,
          json: () => JSON.parse(body),
        });
        void rs.#answer(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    rs.#url = `http://127.0.0.1:${port}`;
    return rs;
  }

  /** `http://127.0.0.1:<port>` (no trailing slash). */
  get url(): string {
    return this.#url;
  }

  /** Queues replies, answered in order, one per request. */
  enqueue(...replies: Reply[]): void {
    this.#queue.push(...replies);
  }

  /** Replies not yet used. */
  get pending(): number {
    return this.#queue.length;
  }

  async #answer(res: ServerResponse): Promise<void> {
    // 418 so that no retry policy repeats a request the test did not plan for
    const reply = this.#queue.shift() ?? {
      status: 418,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ error: { message: "replay-server: no reply queued" } }),
    };
    try {
      if (reply.headerDelayMs) await pause(reply.headerDelayMs);
      const bytes = typeof reply.body === "string" ? new TextEncoder().encode(reply.body) : (reply.body ?? new Uint8Array());
      res.writeHead(reply.status ?? 200, reply.headers ?? {});
      res.flushHeaders();
      let sent = 0;
      for (const piece of split(bytes, reply.chunking)) {
        let p = piece;
        if (reply.cutAfter !== undefined && sent + p.length > reply.cutAfter) p = p.subarray(0, reply.cutAfter - sent);
        if (p.length) await write(res, p);
        sent += p.length;
        if (reply.cutAfter !== undefined && sent >= reply.cutAfter) {
          await tick();
          res.socket?.destroy();
          return;
        }
        if (reply.delayMs) await pause(reply.delayMs);
      }
      if (reply.cutAfter !== undefined) {
        res.socket?.destroy();
        return;
      }
      if (reply.hang) return;
      res.end();
    } catch {
      res.socket?.destroy();
    }
  }

  /** Stops listening and drops open connections (hanging replies included). */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** Builds an SSE body from events (`event:` line only when given). */
export function sseBody(events: { event?: string; data: string }[]): string {
  return events.map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${e.data}\n\n`).join("");
}

/**
 * Re-frames a `.chunks.ndjson` recording (one JSON payload per line, SSE framing stripped by
 * the recorder) as an SSE body with `event: <type>` lines.
 */
export function ndjsonToSse(text: string): string {
  return sseBody(
    text
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => ({ event: (JSON.parse(l) as { type?: string }).type, data: l })),
  );
}

/** What one `provider.stream()` produced: every event, the `done` event, or the thrown error. */
export interface Collected<E> {
  events: E[];
  done?: Extract<E, { type: "done" }>;
  error?: unknown;
}

/** Drains a provider stream, catching the error instead of throwing. */
export async function collect<E extends { type: string }>(stream: AsyncIterable<E>): Promise<Collected<E>> {
  const out: Collected<E> = { events: [] };
  try {
    for await (const e of stream) {
      out.events.push(e);
      if (e.type === "done") out.done = e as Extract<E, { type: "done" }>;
    }
  } catch (err) {
    out.error = err;
  }
  return out;
}

/**
 * Checks a manifest descriptor such as `<636 chars, starts 'EtYDCkYICxgCKkAV'>` against a
 * value; plain strings must match exactly.
 */
export function matchesDescriptor(value: string | undefined, descriptor: string): boolean {
  const m = /^<(\d+) chars, starts '(.*)'>$/.exec(descriptor);
  if (!m) return value === descriptor;
  return value !== undefined && value.length === Number(m[1]) && value.startsWith(m[2]!);
}
