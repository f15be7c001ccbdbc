/**
 * A stdin for Ink when nothing will type: not a TTY, no data, every stream call a no-op. The
 * long-transcript test and the benchmark harness render the app against it.
 */
import { EventEmitter } from "node:events";

export class NoInput extends EventEmitter {
  readonly isTTY = false;
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
  read() {
    return null;
  }
}
