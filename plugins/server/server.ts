/**
 * Starting and stopping the server (LARIK-REFERENCE §21): listen on the address, serve the app
 * for one host, and shut down gracefully — close every session (cancelling runs, expiring
 * permission requests, ending event streams), then the HTTP server.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Host } from "../../kernel/index.js";
import { MAX_BODY_BYTES } from "./body.js";
import type { BusOptions } from "./bus.js";
import { KEEPALIVE_MS } from "./sse.js";
import { SessionManager, type SessionDefaults } from "./sessions.js";
import type { ServerState } from "./routes.js";

/** How long shutdown waits for event streams to write their last events before cutting them (ms). */
const SSE_FLUSH_MS = 2_000;

export interface StartOptions {
  /** Interface to listen on (default `127.0.0.1`). */
  hostname?: string;
  /** TCP port; 0 picks a free one (default 4096). */
  port?: number;
  /** The bearer token (already resolved). */
  token: string;
  /** Serve any Host header and allow non-loopback listening. */
  allowRemote?: boolean;
  defaults?: SessionDefaults;
  /** Ring and per-subscriber buffer sizes in events (defaults 4096 and 1024). */
  bus?: BusOptions;
  /** SSE keepalive interval in ms (default 15 000). */
  keepaliveMs?: number;
  /** Log sink for one-line messages (default: stderr). */
  log?: (line: string) => void;
}

/** A running server. */
export interface ServerHandle {
  /** `http://host:port` (no trailing slash). */
  url: string;
  token: string;
  port: number;
  sessions: SessionManager;
  /**
   * Graceful shutdown: closes every session (`session_closed` is published and event streams
   * end), then stops listening and closes remaining connections. Safe to call twice.
   */
  close(): Promise<void>;
  /** Stops listening and drops every connection now, without waiting for sessions. */
  abort(): Promise<void>;
}

/**
 * Starts serving `host`. The caller has validated `hostname` against `allowRemote`.
 * @throws Error naming the address when it cannot be bound (port in use, no permission).
 */
export async function startServer(host: Host, opts: StartOptions): Promise<ServerHandle> {
  const { serve } = await import("h3");
  const { buildApp } = await import("./app.js");
  const log = opts.log ?? ((line: string) => process.stderr.write(`larik serve: ${line}\n`));
  const sessions = new SessionManager(host, opts.defaults ?? {}, opts.bus ?? {}, log);
  const state: ServerState = { host, sessions, version: packageVersion(), keepaliveMs: opts.keepaliveMs ?? KEEPALIVE_MS, log };
  const app = buildApp(state, { token: opts.token, allowRemote: opts.allowRemote ?? false });
  const hostname = opts.hostname ?? "127.0.0.1";
  const server = serve(app, {
    hostname,
    port: opts.port ?? 4096,
    silent: true,
    // we handle SIGINT/SIGTERM ourselves: sessions close before the listener
    gracefulShutdown: false,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  try {
    await server.ready();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "EADDRINUSE" ? "the port is in use: pick another --addr (port 0 picks a free one)" : (err as Error).message;
    throw new Error(`cannot listen on ${hostname}:${opts.port ?? 4096}: ${why}`);
  }
  const address = server.node?.server?.address();
  const port = typeof address === "object" && address ? address.port : (opts.port ?? 4096);
  const urlHost = hostname.includes(":") ? `[${hostname}]` : hostname;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    token: opts.token,
    port,
    sessions,
    close: () =>
      (closing ??= (async () => {
        await sessions.closeAll("shutdown");
        // each event stream was ended gracefully (its bus closed): let it write what is queued,
        // `session_closed` last, before the sockets are cut; a client that stopped reading holds
        // the exit for SSE_FLUSH_MS at most
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([server.close(false), new Promise((done) => (timer = setTimeout(done, SSE_FLUSH_MS)))]);
        clearTimeout(timer);
        // close(true) also drops idle keep-alive sockets so the process can exit
        await server.close(true);
      })()),
    abort: () => server.close(true),
  };
}

let cachedVersion: string | undefined;

/** The version of the `larik` package this code belongs to, found by walking up to its package.json. */
function packageVersion(): string {
  if (cachedVersion) return cachedVersion;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
        if (pkg.name === "larik" && pkg.version) return (cachedVersion = pkg.version);
      } catch {
        // unreadable: keep walking
      }
    }
    const up = dirname(dir);
    if (up === dir) return (cachedVersion = "0.0.0-dev");
    dir = up;
  }
}
