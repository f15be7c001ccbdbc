/**
 * The `larik serve` front end (LARIK-REFERENCE §21): start the server, print one JSON line
 * `{"url","token"}` on stdout (logs go to stderr), and on SIGINT, SIGTERM or SIGHUP (the terminal
 * closing) shut down gracefully: close every session, then the server. A second SIGINT or SIGTERM
 * stops waiting; further SIGHUPs do not, since a closing terminal often sends two (see the
 * kernel's stop-signals.ts).
 */
import type { EventEmitter } from "node:events";
import type { CliArgs, Host } from "../../kernel/index.js";
import { serveConfig } from "./options.js";
import { startServer, type StartOptions } from "./server.js";

export interface ServeIO {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  /** Where SIGINT, SIGTERM and SIGHUP arrive (default `process`). */
  signals: Pick<EventEmitter, "on" | "off">;
  /** Extra server options (tests: small buffers, short keepalive). */
  server?: Partial<StartOptions>;
}

const defaultIO = (): ServeIO => ({ stdout: process.stdout, stderr: process.stderr, signals: process });

/**
 * Runs the server until a signal; resolves to the exit status (0 after a clean shutdown).
 * @throws ConfigError for bad options (the CLI prints it and exits 2).
 */
export async function runServe(host: Host, args: CliArgs, io: ServeIO = defaultIO()): Promise<number> {
  const log = (line: string) => io.stderr.write(`larik serve: ${line}\n`);
  // first: a refused option ends the run here, and the notices must not go with it
  for (const n of host.notices) log(n);
  const cfg = serveConfig(host, args);
  const server = await startServer(host, {
    hostname: cfg.hostname,
    port: cfg.port,
    token: cfg.token,
    allowRemote: cfg.allowRemote,
    defaults: cfg.defaults,
    log,
    ...io.server,
  });
  io.stdout.write(`${JSON.stringify({ url: server.url, token: server.token })}\n`);
  log(`listening on ${server.url}${cfg.allowRemote ? " (remote access allowed)" : ""}`);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: string) => {
      if (stopping) {
        log(`${signal} again: closing the server without waiting for sessions`);
        cleanup();
        server.abort().finally(() => resolve(130));
        return;
      }
      stopping = true;
      log(`${signal}: closing ${server.sessions.loaded.length} session(s), then the server`);
      server.close().then(
        () => {
          log("stopped");
          cleanup();
          resolve(0);
        },
        (err: unknown) => {
          log(`shutdown failed: ${(err as Error).message}`);
          cleanup();
          resolve(1);
        },
      );
    };
    const onInt = () => onSignal("SIGINT");
    const onTerm = () => onSignal("SIGTERM");
    // stays until the process exits: a hangup with no listener would kill it mid-shutdown
    const onHup = () => {
      if (!stopping) onSignal("SIGHUP");
    };
    const cleanup = () => {
      io.signals.off("SIGINT", onInt);
      io.signals.off("SIGTERM", onTerm);
    };
    io.signals.on("SIGINT", onInt);
    io.signals.on("SIGTERM", onTerm);
    io.signals.on("SIGHUP", onHup);
  });
}
