/**
 * An unbounded single-consumer async queue: the loop pushes events, a front end drains them
 * with `for await`. Closing ends the iteration after the queued items are read.
 */
export class Channel<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiters: ((r: IteratorResult<T>) => void)[] = [];
  #closed = false;
  #error: unknown;

  push(item: T): void {
    if (this.#closed) return;
    const w = this.#waiters.shift();
    if (w) w({ value: item, done: false });
    else this.#items.push(item);
  }

  /** Ends the stream; with `error`, the consumer's next read throws it. */
  close(error?: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#error = error;
    for (const w of this.#waiters.splice(0)) {
      if (error) w(Promise.reject(error) as never);
      else w({ value: undefined as never, done: true });
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.#items.length) return Promise.resolve({ value: this.#items.shift()!, done: false });
        if (this.#closed) {
          if (this.#error) return Promise.reject(this.#error);
          return Promise.resolve({ value: undefined as never, done: true });
        }
        return new Promise((resolve) => this.#waiters.push(resolve));
      },
      return: () => Promise.resolve({ value: undefined as never, done: true }),
    };
  }
}
