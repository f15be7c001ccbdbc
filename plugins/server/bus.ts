/**
 * A session's event bus (LARIK-REFERENCE §21): every published event gets the next `seq`, is
 * formatted once as an SSE message and kept in a ring of the newest {@link RING_SIZE} events
 * for replay. Each subscriber has its own bounded queue; a subscriber that falls
 * {@link SUBSCRIBER_BUFFER} events behind is dropped, so publishing never waits on a client.
 */

/** Events kept per session for `Last-Event-ID` / `?after=` replay. */
const RING_SIZE = 4096;
/** Live events a subscriber may have queued before it is dropped as too slow. */
const SUBSCRIBER_BUFFER = 1024;

/** A published event object: anything with a `type`. */
export type BusEvent = { type: string } & Record<string, unknown>;

/**
 * One client's queue. `publish` appends without waiting; the SSE writer drains it with
 * {@link Subscriber.take}, which coalesces everything queued into one write.
 */
export class Subscriber {
  readonly limit: number;
  #queue: string[] = [];
  /** Live events queued (comments and replay are not counted). */
  #events = 0;
  #wake?: () => void;
  #ending = false;
  #closed = false;
  #dropped = false;
  #onClose: ((dropped: boolean) => void)[] = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  /** True once dropped for being slow. */
  get dropped(): boolean {
    return this.#dropped;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Queues one formatted SSE message; drops the subscriber past its limit. */
  pushEvent(frame: string): void {
    if (this.#closed || this.#ending) return;
    if (this.#events >= this.limit) {
      this.drop();
      return;
    }
    this.#events++;
    this.#queue.push(frame);
    this.#wakeUp();
  }

  /** Queues text that does not count against the limit (comments, a replay block). */
  pushRaw(text: string): void {
    if (this.#closed || this.#ending) return;
    this.#queue.push(text);
    this.#wakeUp();
  }

  /** Queues an SSE comment line (`: text`). */
  comment(text: string): void {
    this.pushRaw(`: ${text}\n\n`);
  }

  /**
   * Everything queued as one string, waiting while the queue is empty; null once the
   * subscriber is closed (after an {@link end}, only when the queue is drained).
   */
  async take(): Promise<string | null> {
    while (this.#queue.length === 0) {
      if (this.#closed || this.#ending) {
        this.#finish(false);
        return null;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
    if (this.#closed) return null;
    const chunk = this.#queue.length === 1 ? this.#queue[0]! : this.#queue.join("");
    this.#queue = [];
    this.#events = 0;
    return chunk;
  }

  /** Ends gracefully: what is queued is still delivered, then the stream closes. */
  end(): void {
    this.#ending = true;
    this.#wakeUp();
  }

  /** Drops at once, discarding the queue (too slow, or the client went away). */
  drop(): void {
    if (this.#closed) return;
    this.#dropped = true;
    this.#queue = [];
    this.#finish(true);
  }

  /** Detaches without marking the subscriber as slow (the client disconnected). */
  detach(): void {
    if (this.#closed) return;
    this.#queue = [];
    this.#finish(false);
  }

  onClose(fn: (dropped: boolean) => void): void {
    if (this.#closed) fn(this.#dropped);
    else this.#onClose.push(fn);
  }

  #finish(dropped: boolean): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#wakeUp();
    for (const fn of this.#onClose.splice(0)) fn(dropped);
  }

  #wakeUp(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }
}

export interface BusOptions {
  /** Ring size in events (default {@link RING_SIZE}). */
  ringSize?: number;
  /** Per-subscriber live buffer in events (default {@link SUBSCRIBER_BUFFER}). */
  subscriberBuffer?: number;
}

/** The bus of one session. Not shared between sessions: `seq` counts per session from 1. */
export class SessionBus {
  readonly session: string;
  readonly ringSize: number;
  readonly subscriberBuffer: number;
  #ring: (string | undefined)[];
  #last = 0;
  #subs = new Set<Subscriber>();
  #listeners = new Set<(event: BusEvent, seq: number) => void>();
  #closed = false;
  /** Subscribers dropped for being slow, since the bus started. */
  droppedCount = 0;

  constructor(session: string, opts: BusOptions = {}) {
    this.session = session;
    this.ringSize = opts.ringSize ?? RING_SIZE;
    this.subscriberBuffer = opts.subscriberBuffer ?? SUBSCRIBER_BUFFER;
    this.#ring = new Array(this.ringSize);
  }

  /** seq of the newest event (0 before the first). */
  get lastSeq(): number {
    return this.#last;
  }

  /** seq of the oldest event still in the ring. */
  get firstSeq(): number {
    return Math.max(1, this.#last - this.ringSize + 1);
  }

  get subscriberCount(): number {
    return this.#subs.size;
  }

  /**
   * Publishes one event: assigns the next seq, formats it as `id:/event:/data:` with `seq` and
   * `session` added to the JSON, stores it in the ring and queues it on every subscriber.
   * Never waits. Returns the seq.
   */
  publish(event: BusEvent): number {
    if (this.#closed) return this.#last;
    const seq = ++this.#last;
    const data = JSON.stringify({ ...event, seq, session: this.session });
    const frame = `id: ${seq}\nevent: ${event.type}\ndata: ${data}\n\n`;
    this.#ring[seq % this.ringSize] = frame;
    for (const s of this.#subs) s.pushEvent(frame);
    for (const l of this.#listeners) l(event, seq);
    return seq;
  }

  /** Calls `fn` synchronously for every event published from now on; returns an unsubscribe. */
  listen(fn: (event: BusEvent, seq: number) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * Adds a subscriber. With `after` (a Last-Event-ID), events newer than it are replayed first;
   * when some were already pushed out of the ring (or `after` is newer than anything this bus
   * published, e.g. after a server restart) a `: gap` comment comes first so the client knows
   * to refetch `/messages`. Without `after` the subscriber gets live events only. Replay and
   * registration happen in one synchronous step, so no event is lost or repeated.
   * `greeting`, when given, is a comment queued before anything else.
   */
  subscribe(after?: number, greeting?: string): Subscriber {
    const sub = new Subscriber(this.subscriberBuffer);
    if (greeting) sub.comment(greeting);
    if (this.#closed) {
      sub.end();
      return sub;
    }
    if (after !== undefined) {
      let from = after + 1;
      if (after > this.#last || from < this.firstSeq) {
        sub.comment("gap");
        from = this.firstSeq;
      }
      const frames: string[] = [];
      for (let s = from; s <= this.#last; s++) frames.push(this.#ring[s % this.ringSize]!);
      if (frames.length) sub.pushRaw(frames.join(""));
    }
    this.#subs.add(sub);
    sub.onClose((dropped) => {
      this.#subs.delete(sub);
      if (dropped) this.droppedCount++;
    });
    return sub;
  }

  /** Ends every subscriber gracefully (after their queues drain) and refuses new events. */
  close(): void {
    this.#closed = true;
    for (const s of [...this.#subs]) s.end();
    this.#listeners.clear();
  }
}
