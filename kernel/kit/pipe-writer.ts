/**
 * Writing to a reader that may go away. `larik -p … | head -1` closes larik's stdout after one
 * line; the next write then fails with EPIPE. A C program dies of SIGPIPE there, silently, and
 * the shell reports status 141. Node ignores SIGPIPE and emits the failure as an `error` event
 * on the stream instead, which, when nothing listens, kills the process with a stack trace,
 * before a `-p` run has written its session. A front end writes through a {@link PipeWriter}:
 * once the reader is gone it drops further output, tells its listeners (headless then ends the
 * turn the way a stop signal does) and exits {@link SIGPIPE_STATUS}.
 */

/** 128 + SIGPIPE (13): the status a shell reports for a command whose output pipe closed. */
export const SIGPIPE_STATUS = 141;

function isBrokenPipe(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | null | undefined)?.code === "EPIPE";
}

/**
 * A text writer to a stream that is built at the first write (`() => process.stdout`: Node makes
 * stdout a socket on first access, loading net and stream, which a `-p` run should not pay for
 * before its first model request) and goes quiet once the stream's reader has gone (EPIPE).
 * Other write errors are rethrown, as Node would have thrown them.
 */
export class PipeWriter {
  #stream: NodeJS.WritableStream | undefined;
  #gone = false;
  #onGone: (() => void)[] = [];
  #pending = 0;
  #onIdle: (() => void)[] = [];

  /** @param open gives the stream, called once, at the first write. */
  constructor(private readonly open: () => NodeJS.WritableStream) {}

  /** True once a write failed because the reader had gone; later writes are dropped. */
  get gone(): boolean {
    return this.#gone;
  }

  /** Calls `fn` once, when the reader goes away (at once if it has). */
  onGone(fn: () => void): void {
    if (this.#gone) fn();
    else this.#onGone.push(fn);
  }

  /** Writes `text` (or bytes), or drops it when the reader has gone. */
  write(text: string | Uint8Array): void {
    const stream = (this.#stream ??= this.#openStream());
    // A write to a reader that has left fails at once, and marks the stream errored; a write
    // queued when the reader leaves fails later. Either way Node emits `error` only on the next
    // tick, and stdout, never destroyed, would keep what is written meanwhile queued for good.
    if (!this.#gone && isBrokenPipe((stream as { errored?: unknown }).errored)) this.#markGone();
    if (this.#gone) return;
    this.#pending++;
    stream.write(text, (err) => {
      // before `flush` resolves: the `error` event that also says so comes a tick later
      if (isBrokenPipe(err)) this.#markGone();
      if (--this.#pending === 0) this.#idle();
    });
    if (isBrokenPipe((stream as { errored?: unknown }).errored)) this.#markGone();
  }

  /**
   * Resolves when everything written has reached the reader or failed: a short-lived command
   * learns only then whether its output arrived (its exit status), since a pipe queues what the
   * reader has not yet taken.
   */
  flush(): Promise<void> {
    if (this.#pending === 0 || this.#gone) return Promise.resolve();
    return new Promise((done) => this.#onIdle.push(done));
  }

  /**
   * Learns that the reader went away without waiting for the next write, where the stream allows
   * it: a socket (what a parent such as Node's child_process gives as stdout) reads end of file
   * when its other end closes, so reading from it says so at once. A turn whose model is silent
   * (a stalled stream, or `--output json`, which prints nothing until a reply ends) is then
   * stopped, not left to run for a reader that is gone. A pipe cannot be read from its writing
   * end: its writer learns only at its next write, as any Unix program does. Call it for a
   * socket only (a terminal's handle may read from the terminal). Returns a function that stops
   * the watch, which otherwise keeps the process alive.
   */
  watchReader(): () => void {
    if (this.#gone) return () => {};
    const stream = (this.#stream ??= this.#openStream());
    // Node's stream handle (libuv): a socket opened for writing only still reads, and calls
    // `onread` with no buffer at end of file or on an error. Anything else gives no watch.
    const handle = (stream as { _handle?: { readStart?(): number; readStop?(): number; onread?: unknown } })._handle;
    if (typeof handle?.readStart !== "function" || typeof handle.readStop !== "function" || handle.readStart() !== 0) return () => {};
    handle.onread = (buf?: ArrayBuffer) => {
      // a reader sends nothing; bytes that do come are not an end
      if (!buf) this.#markGone();
    };
    return () => void handle.readStop?.();
  }

  #openStream(): NodeJS.WritableStream {
    const stream = this.open();
    stream.on("error", (err) => {
      if (!isBrokenPipe(err)) throw err;
      this.#markGone();
    });
    return stream;
  }

  #markGone(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#idle(); // nothing more will reach the reader
    for (const fn of this.#onGone.splice(0)) fn();
  }

  #idle(): void {
    for (const fn of this.#onIdle.splice(0)) fn();
  }
}

/**
 * Prints `lines` to stdout and resolves to the exit status of a command that only prints:
 * {@link SIGPIPE_STATUS} when the reader left before taking it all (as for `ls | head -1`),
 * quietly, else 0. Written as a C program's printf writes, with blocking `write(2)` calls on fd 1:
 * `process.stdout` would first build a stream (net and stream for a pipe or socket, tty for a
 * terminal), ~3 ms that `larik --version` would spend on its one line. Where fd 1 cannot take a
 * blocking write (EAGAIN: a non-blocking pipe whose reader is behind), the rest goes through
 * `process.stdout`, which waits for the reader; so does everything after any other error, which
 * the stream reports as it did before. For a command's whole output: text written before it
 * through `process.stdout` and still queued there would come after it.
 */
export async function printAll(...lines: string[]): Promise<number> {
  const { writeSync } = process.getBuiltinModule("node:fs");
  const bytes = Buffer.from(lines.join(""));
  let done = 0;
  try {
    // a pipe may take part of a write (a signal, a non-blocking fd): go on from there
    while (done < bytes.length) done += writeSync(1, bytes, done);
    return 0;
  } catch (err) {
    if (isBrokenPipe(err)) return SIGPIPE_STATUS;
  }
  const out = new PipeWriter(() => process.stdout);
  out.write(bytes.subarray(done));
  await out.flush();
  return out.gone ? SIGPIPE_STATUS : 0;
}
