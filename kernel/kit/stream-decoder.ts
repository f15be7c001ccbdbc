/**
 * Decoding a provider's stream into {@link StreamEvent}s: the {@link StreamDecoder} contract an
 * adapter implements, {@link runStreamDecoder} that drives it over the batches of
 * kernel/kit/stream-read.ts, the {@link StreamOutput} it writes to (the text deltas of one network
 * read merged into one event), the {@link TextAccumulator} that keeps a block's text, and
 * {@link parseJsonEvent} for one payload.
 *
 * The wire formats themselves are the adapters' (WIRE-FORMATS.md §1–§5); the merging and the
 * joining here are for speed (bench/providers.mjs).
 */
import { singleLineExcerpt } from "./provider-errors.js";
import { ProviderError, type StreamEvent } from "../types.js";

/** Pieces between two joins in {@link TextAccumulator}. */
const JOIN_EVERY = 256;

// Module-private hooks between StreamOutput and TextAccumulator: a delta's pieces are joined
// once, for the event and the accumulated text alike.
const OPEN = Symbol("open");
const SETTLE = Symbol("settle");

/** A text or thinking delta whose pieces are still being gathered (see {@link StreamOutput}). */
class PendingDelta {
  /** Set once `into` stopped taking these pieces as its end (it was read, appended to or set). */
  detached = false;

  constructor(
    readonly type: "text_delta" | "thinking_delta",
    readonly pieces: string[],
    readonly into: TextAccumulator | undefined,
  ) {}
}

/**
 * A string built from many small appends (a block's text from its deltas, a tool call's
 * arguments from their fragments). `a += piece` per delta would keep one rope node and one tiny
 * string per delta alive until the message is done; for a long answer that is hundreds of
 * thousands of objects the garbage collector copies again and again (a fifth of the decoding
 * time in bench/providers.mjs). Pieces are instead joined into flat strings every
 * {@link JOIN_EVERY} pieces, so they die young; text shown through {@link StreamOutput.delta}
 * is joined once per network read, for the event and the accumulator together.
 */
export class TextAccumulator {
  #text: string;
  readonly #parts: string[] = [];
  // the delta StreamOutput is gathering for this text right now: its pieces are part of the text
  #open: PendingDelta | undefined;

  /** `initial`: the text to start from (a block start's own text). */
  constructor(initial = "") {
    this.#text = initial;
  }

  /** Adds `piece` at the end. */
  append(piece: string): void {
    this.#close();
    this.#parts.push(piece);
    if (this.#parts.length >= JOIN_EVERY) this.#join();
  }

  /** Replaces the whole text (a final value that supersedes the streamed pieces). */
  set(text: string): void {
    if (this.#open) this.#open.detached = true;
    this.#open = undefined;
    this.#parts.length = 0;
    this.#text = text;
  }

  /** The text so far. */
  toString(): string {
    this.#close();
    if (this.#parts.length) this.#join();
    return this.#text;
  }

  #close(): void {
    const open = this.#open;
    if (!open) return;
    // the event joins its pieces again at the flush: rare (the text was read or appended to
    // before the end of the read)
    this.#parts.push(open.pieces.join(""));
    open.detached = true;
    this.#open = undefined;
  }

  #join(): void {
    this.#text += this.#parts.join("");
    this.#parts.length = 0;
  }

  /** StreamOutput starts gathering `delta`'s pieces for this text. */
  [OPEN](delta: PendingDelta): void {
    this.#close();
    this.#open = delta;
  }

  /** `delta`'s pieces were joined into `joined` for its event: take that string too. */
  [SETTLE](delta: PendingDelta, joined: string): void {
    if (this.#open !== delta) return;
    this.#open = undefined;
    if (this.#parts.length) this.#join();
    // one rope node per network read is cheap; joining these larger strings again is not (each
    // join allocates fresh pages for the whole text so far)
    this.#text += joined;
  }
}

/**
 * The events one step of a {@link StreamDecoder} produces, in order. Consecutive text (or
 * thinking) deltas of the same block are merged into one event: what {@link runStreamDecoder}
 * drains at once is what one network read brought, so the pieces arrived together and the user
 * sees the same text at the same moment, and hundreds of events per read become one for
 * everything downstream.
 */
export class StreamOutput {
  readonly #items: (StreamEvent | PendingDelta)[] = [];
  // the last item when it is a delta that may take more pieces
  #last: PendingDelta | undefined;

  /** How many events (merged deltas count once) are waiting. */
  get length(): number {
    return this.#items.length;
  }

  /** Adds a non-delta event (tool start, notice, done); it ends any delta being merged. */
  push(event: StreamEvent): void {
    this.#items.push(event);
    this.#last = undefined;
  }

  /**
   * Adds `text` as a delta of `type`, and to `into` (the block's text) when given: the deltas
   * shown are then exactly the text kept. Merged into the previous delta when that has the same
   * type and block. Empty text is dropped.
   */
  delta(type: "text_delta" | "thinking_delta", text: string, into?: TextAccumulator): void {
    if (!text) return;
    const last = this.#last;
    if (last !== undefined && last.type === type && last.into === into && !last.detached) {
      last.pieces.push(text);
      return;
    }
    const delta = new PendingDelta(type, [text], into);
    this.#items.push(delta);
    this.#last = delta;
    into?.[OPEN](delta);
  }

  /** Takes the waiting events, deltas joined. */
  drain(): StreamEvent[] {
    const items = this.#items;
    const events = new Array<StreamEvent>(items.length);
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (item instanceof PendingDelta) {
        const text = item.pieces.length === 1 ? item.pieces[0]! : item.pieces.join("");
        item.into?.[SETTLE](item, text);
        events[i] = { type: item.type, text };
      } else events[i] = item;
    }
    items.length = 0;
    this.#last = undefined;
    return events;
  }
}

/**
 * A provider's stream decoder as a synchronous state machine, driven by {@link runStreamDecoder}:
 * `T` is one wire item (an {@link SseEvent}, an NDJSON value).
 */
export interface StreamDecoder<T> {
  /**
   * Decodes one item, adding the events it means to `out`. Returns true at the stream's
   * terminator: nothing after it is read.
   * @throws ProviderError for an in-stream error or an invalid payload.
   */
  feed(item: T, out: StreamOutput): boolean;
  /**
   * The body ended before `feed` returned true: adds the closing events (a stream whose end is
   * its terminator, as Gemini's) or throws.
   * @throws ProviderError `truncated` when the terminator is missing.
   */
  end(out: StreamOutput): void;
}

/**
 * Runs `decoder` over `source` (batches from {@link readSseBatches}/{@link readNdjsonBatches}, or
 * single items; `T` must not itself be an array) and yields its events: those of a batch once the
 * batch is decoded, except that the stream's first event is yielded as soon as it exists, so the
 * first text is not held back behind the rest of its read. Events decoded before an error are
 * yielded before it is thrown. Returns after the terminator (the source is closed, which cancels
 * the body) or at the source's end after `decoder.end`.
 * @throws what `decoder.feed`/`decoder.end` throw, and what `source` throws.
 */
export async function* runStreamDecoder<T>(source: AsyncIterable<T | readonly T[]>, decoder: StreamDecoder<T>): AsyncGenerator<StreamEvent> {
  const out = new StreamOutput();
  let first = true;
  for await (const item of source) {
    const batch: readonly T[] = Array.isArray(item) ? item : [item as T];
    let i = 0;
    while (i < batch.length) {
      let finished = false;
      let failed = false;
      let failure: unknown;
      try {
        while (i < batch.length) {
          if (decoder.feed(batch[i++]!, out)) {
            finished = true;
            break;
          }
          if (first && out.length) break;
        }
      } catch (err) {
        failed = true;
        failure = err;
      }
      if (out.length) {
        first = false;
        const events = out.drain();
        for (let k = 0; k < events.length; k++) yield events[k]!;
      }
      if (failed) throw failure;
      if (finished) return;
    }
  }
  let failed = false;
  let failure: unknown;
  try {
    decoder.end(out);
  } catch (err) {
    failed = true;
    failure = err;
  }
  const events = out.drain();
  for (let k = 0; k < events.length; k++) yield events[k]!;
  if (failed) throw failure;
}

/**
 * Parses one stream payload as JSON (whitespace padding inside is fine).
 * @throws ProviderError `server` naming the bad payload.
 */
export function parseJsonEvent(provider: string, data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new ProviderError({ provider, kind: "server", message: `invalid JSON in the response stream: ${singleLineExcerpt(data, 120)}` });
  }
}
