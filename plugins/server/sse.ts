/**
 * The SSE response of `GET /v1/sessions/{id}/events` (LARIK-REFERENCE §21). A pull-based
 * `ReadableStream` drains one {@link Subscriber}: the HTTP layer pulls only when the socket
 * accepts more, so a slow client makes its queue grow instead of blocking the agent, and
 * queued events are written together (coalesced). A keepalive comment goes out every
 * {@link KEEPALIVE_MS}.
 *
 * h3's `EventStream` is not used: its `close()` waits for pending writes, so a client that
 * stopped reading could never be dropped; erroring our own stream makes srvx destroy the socket.
 */
import type { SessionBus, Subscriber } from "./bus.js";

/** Keepalive comment interval in ms. */
export const KEEPALIVE_MS = 15_000;

export interface SseOptions {
  /** Keepalive interval in ms (default {@link KEEPALIVE_MS}). */
  keepaliveMs?: number;
  /** Called when the subscriber is dropped for being slow. */
  onDrop?: () => void;
}

/** Subscribes to `bus` (replaying after `after` when given) and returns the streaming response. */
export function sseResponse(bus: SessionBus, after: number | undefined, opts: SseOptions = {}): Response {
  const encoder = new TextEncoder();
  let sub: Subscriber | undefined;
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Headers are only flushed with the first bytes: say hello so clients see the stream open.
        sub = bus.subscribe(after, "connected");
        sub.onClose((dropped) => {
          stop();
          if (dropped) {
            opts.onDrop?.();
            // Erroring (not closing) makes the HTTP layer destroy the socket even when it is
            // stuck waiting for the client to read.
            try {
              controller.error(new Error("slow subscriber dropped"));
            } catch {
              // already closed
            }
          }
        });
        timer = setInterval(() => sub!.comment("keepalive"), opts.keepaliveMs ?? KEEPALIVE_MS);
        timer.unref();
      },
      async pull(controller) {
        const chunk = await sub!.take();
        if (chunk === null) {
          stop();
          if (!sub!.dropped) {
            try {
              controller.close();
            } catch {
              // errored by a drop meanwhile
            }
          }
          return;
        }
        controller.enqueue(encoder.encode(chunk));
      },
      cancel() {
        stop();
        sub?.detach();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(stream, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-store, no-transform",
      "x-accel-buffering": "no",
    },
  });
}

/**
 * The replay point of a request: `Last-Event-ID` wins over `?after=`; neither means live only.
 * Returns an error message for a value that is not a non-negative integer.
 */
export function replayPoint(req: Request, url: URL): { after?: number; error?: string } {
  const header = req.headers.get("last-event-id");
  const raw = header !== null && header.trim() !== "" ? header.trim() : url.searchParams.get("after");
  if (raw === null || raw === "") return {};
  if (!/^\d+$/.test(raw)) return { error: `invalid ${header ? "Last-Event-ID" : "after"} "${raw}": use the seq (id:) of the last event received` };
  return { after: Number(raw) };
}
