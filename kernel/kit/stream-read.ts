/**
 * Reading a provider's response body: its byte chunks with the stall guard, server-sent events
 * and NDJSON, each batched per network read for {@link runStreamDecoder}.
 *
 * Sources: WIRE-FORMATS.md §0.1 (SSE parsing), §0.2 (NDJSON parsing); the WHATWG HTML
 * "server-sent events" parsing algorithm (via eventsource-parser); LARIK-REFERENCE §10 (stall
 * guard).
 */
import { singleLineExcerpt, stallError, streamError, truncatedError } from "./provider-errors.js";
import { ProviderError } from "../types.js";

/** How a response body is read. */
export interface StreamReadOptions {
  provider: string;
  /** Seconds of silence (no bytes at all; keep-alive comments count) before giving up; ≤ 0 or undefined waits forever. */
  stallTimeout?: number;
  signal?: AbortSignal;
  /** Named in the error when the connection drops mid-stream. */
  url?: string;
}

/**
 * Yields the body's byte chunks as they arrive, with the stall guard.
 * @throws ProviderError `stall` after `stallTimeout` seconds without a byte; `network` when the
 *   connection drops mid-body (not retried: output may have been shown); the abort reason.
 */
export async function* readChunks(res: Response, opts: StreamReadOptions): AsyncGenerator<Uint8Array> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const limit = stallMs(opts.stallTimeout);
  let finished = false;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      const guards: Promise<never>[] = [];
      if (limit) {
        guards.push(
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(stallError(opts.provider, opts.stallTimeout!, "from the model")), limit);
          }),
        );
      }
      if (opts.signal) {
        const signal = opts.signal;
        if (signal.aborted) throw abortReason(signal);
        guards.push(
          new Promise<never>((_, reject) => {
            onAbort = () => reject(abortReason(signal));
            signal.addEventListener("abort", onAbort, { once: true });
          }),
        );
      }
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = guards.length ? await Promise.race([reader.read(), ...guards]) : await reader.read();
      } catch (err) {
        if (opts.signal?.aborted) throw abortReason(opts.signal);
        if (err instanceof ProviderError) throw err;
        const cause = (err as { cause?: { message?: string; code?: string } }).cause;
        const detail = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
        throw new ProviderError({
          provider: opts.provider,
          kind: "network",
          message: `connection lost mid-response${opts.url ? ` from ${opts.url}` : ""}: ${singleLineExcerpt(detail, 200)}`,
          retryable: true,
        });
      } finally {
        if (timer) clearTimeout(timer);
        if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
      }
      if (r.done) {
        finished = true;
        return;
      }
      yield r.value;
    }
  } finally {
    if (!finished) reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
}

/** One server-sent event. `event` is undefined when the server sent no `event:` field. */
export interface SseEvent {
  event?: string;
  data: string;
  id?: string;
}

/**
 * Decodes a `text/event-stream` body per the WHATWG algorithm (eventsource-parser 3) and yields,
 * for each network read, the events that read completed, in order (never an empty array): lines
 * end at CRLF, LF or CR, even when split across chunks; `:` comments are skipped; multi-line
 * `data:` is joined with `\n`; UTF-8 is decoded with a streaming decoder so a character split
 * between chunks survives. An event not closed by a blank line at EOF is dropped, as the spec
 * says; adapters detect truncation by their own terminator. A body with no event at all that is
 * not an event stream (a JSON error with status 200, a gateway's page) is reported as what it is.
 *
 * Batches exist for speed: a fast stream brings hundreds of events per read, and one async step
 * per read instead of one per event is most of what an adapter costs (bench/providers.mjs).
 * Feed them to {@link runStreamDecoder}.
 * @throws as {@link readChunks}; at the end of a body without events, the error a JSON error body
 *   stands for ({@link streamError}), or ProviderError `server` quoting a body that is no event
 *   stream.
 */
export async function* readSseBatches(res: Response, opts: StreamReadOptions): AsyncGenerator<SseEvent[]> {
  const { createParser } = await import("eventsource-parser");
  let batch: SseEvent[] = [];
  // the parser's messages already have the SseEvent shape: no copy per event
  const parser = createParser({ onEvent: (e) => void batch.push(e) });
  const decoder = new TextDecoder("utf-8");
  const streaming = { stream: true };
  let continues = false;
  // the body's start while no event has come, to explain a body that is no event stream at all
  let head: string | undefined = "";
  const feed = (text: string) => {
    if (head !== undefined && head.length < HEAD_CHARS) head += text;
    parser.feed(text);
  };
  for await (const chunk of readChunks(res, opts)) {
    // a short read (the usual one from a network) is decoded whole
    if (chunk.length <= PIECE_BYTES) feed(decoder.decode(chunk, streaming));
    else for (const piece of linePieces(chunk, continues)) feed(decoder.decode(piece, streaming));
    if (chunk.length) continues = chunk[chunk.length - 1] !== LF;
    if (batch.length) {
      head = undefined;
      const done = batch;
      batch = [];
      yield done;
    }
  }
  const rest = decoder.decode();
  if (rest) feed(rest);
  if (batch.length) {
    yield batch;
    return;
  }
  const notStream = head === undefined ? undefined : notAnEventStream(opts.provider, head);
  if (notStream) throw notStream;
}

/** How much of a body without events {@link readSseBatches} keeps to explain it (characters). */
const HEAD_CHARS = 65_536;

/**
 * The error for a 2xx body that held no event: a JSON error object (OpenRouter documents errors
 * "emitted in the response body" with status 200) as that error, other JSON or text (a gateway's
 * page, a server that ignored `stream: true`) as a `server` error quoting its start. Undefined
 * for an empty body or one that is an event stream without events (keep-alive comments only):
 * the adapter reports the missing terminator.
 */
function notAnEventStream(provider: string, text: string): ProviderError | undefined {
  const body = text.trim();
  if (!body) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const first = Array.isArray(parsed) ? parsed[0] : parsed;
  if (first && typeof first === "object" && "error" in first) return streamError(provider, parsed);
  if (parsed === undefined && /^(:|(data|event|id|retry)(:|$))/.test(body.split(/\r\n|\r|\n/, 1)[0]!)) return undefined;
  return new ProviderError({
    provider,
    kind: "server",
    message: `the server answered with ${parsed === undefined ? "text" : "JSON"} instead of an event stream: ${singleLineExcerpt(body, 200)}`,
  });
}

/** Longest piece {@link linePieces} cuts, in bytes. */
const PIECE_BYTES = 16384;
const LF = 10;

/**
 * A read longer than {@link PIECE_BYTES} cut into pieces of at most that size that end right
 * after an LF where there is one; when the previous read ended inside a line (`continues`), the
 * first piece ends at the chunk's first LF. Where the cuts fall changes nothing in what is decoded (one streaming
 * TextDecoder sees the bytes in order, and the SSE parser and the NDJSON reader take any split);
 * it is for speed. A piece that ends a line leaves the parser no partial line, which it would
 * otherwise copy together with the whole next read; only the first piece continues a partial
 * line, and it is short. Small pieces also decode into strings that V8 keeps in its young
 * generation instead of its large-object space (over 128 KB, which a 64 KB read of non-Latin-1
 * text reaches).
 */
function linePieces(chunk: Uint8Array, continues: boolean): Uint8Array[] {
  const n = chunk.length;
  const pieces: Uint8Array[] = [];
  let start = 0;
  if (continues) {
    const first = chunk.indexOf(LF);
    if (first >= 0 && first < PIECE_BYTES && first < n - 1) {
      pieces.push(chunk.subarray(0, first + 1));
      start = first + 1;
    }
  }
  while (start < n) {
    let end = n;
    if (n - start > PIECE_BYTES) {
      const lf = chunk.lastIndexOf(LF, start + PIECE_BYTES - 1);
      end = lf >= start ? lf + 1 : start + PIECE_BYTES;
    }
    pieces.push(chunk.subarray(start, end));
    start = end;
  }
  return pieces;
}

/**
 * {@link readSseBatches} one event at a time, for callers that want no batches.
 * @throws as {@link readChunks}.
 */
export async function* readSse(res: Response, opts: StreamReadOptions): AsyncGenerator<SseEvent> {
  for await (const batch of readSseBatches(res, opts)) yield* batch;
}

/**
 * Decodes an `application/x-ndjson` body (Ollama) and yields, for each network read, the JSON
 * values of the lines that read completed, in order (never an empty array): one value per
 * LF-terminated line, CR and surrounding whitespace stripped, empty lines skipped. A final line
 * without LF is accepted when it parses. Values decoded before a bad line are yielded before the
 * error is thrown, so output already received is still shown.
 * @throws ProviderError `server` for a line that is not JSON, `truncated` for an unparsable
 *   partial last line, and as {@link readChunks}.
 */
export async function* readNdjsonBatches(res: Response, opts: StreamReadOptions): AsyncGenerator<unknown[]> {
  const decoder = new TextDecoder("utf-8");
  const streaming = { stream: true };
  let buf = "";
  for await (const chunk of readChunks(res, opts)) {
    const batch: unknown[] = [];
    let failure: ProviderError | undefined;
    for (const piece of chunk.length <= PIECE_BYTES ? [chunk] : linePieces(chunk, buf !== "")) {
      const text = decoder.decode(piece, streaming);
      buf = buf ? buf + text : text;
      let start = 0;
      let nl: number;
      // one slice per line and one per piece, instead of re-slicing the whole buffer per line
      while ((nl = buf.indexOf("\n", start)) >= 0) {
        const line = buf.slice(start, nl);
        start = nl + 1;
        if (!line) continue;
        const value = parseNdjsonLine(line);
        if (value === SKIP) continue;
        if (value === BAD) {
          failure = new ProviderError({ provider: opts.provider, kind: "server", message: `invalid JSON line in the response stream: ${singleLineExcerpt(line, 120)}` });
          break;
        }
        batch.push(value);
      }
      if (failure) break;
      buf = start ? buf.slice(start) : buf;
    }
    if (batch.length) yield batch;
    if (failure) throw failure;
  }
  buf += decoder.decode();
  const last = buf.trim();
  if (last) {
    let value: unknown;
    try {
      value = JSON.parse(last);
    } catch {
      throw truncatedError(opts.provider, "its last line was complete");
    }
    yield [value];
  }
}

const SKIP: unique symbol = Symbol("blank line");
const BAD: unique symbol = Symbol("invalid line");

/**
 * One NDJSON line (without its LF) as a value, {@link SKIP} when blank, {@link BAD} when not JSON.
 * JSON.parse already allows the CR and the spaces around a value, so the common line is parsed as
 * it is; only a failure pays for `trim()`, whose wider notion of white space (NBSP, BOM…) the line
 * format has always accepted.
 */
function parseNdjsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    const t = line.trim();
    if (!t) return SKIP;
    try {
      return JSON.parse(t);
    } catch {
      return BAD;
    }
  }
}

/**
 * {@link readNdjsonBatches} one value at a time, for callers that want no batches.
 * @throws as {@link readNdjsonBatches}.
 */
export async function* readNdjson(res: Response, opts: StreamReadOptions): AsyncGenerator<unknown> {
  for await (const batch of readNdjsonBatches(res, opts)) yield* batch;
}

/** The abort reason of `signal`, or an `AbortError` when it has none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** `stall_timeout` seconds in ms; undefined (wait forever) for ≤ 0 or unset. */
export function stallMs(seconds: number | undefined): number | undefined {
  return seconds !== undefined && seconds > 0 ? seconds * 1000 : undefined;
}
