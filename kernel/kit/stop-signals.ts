/**
 * The signals that ask a run to stop: ctrl+c (SIGINT; in a raw-mode terminal it comes from
 * outside), a polite kill (SIGTERM) and the terminal closing (SIGHUP). A front end traps each
 * once to end its turn cleanly (every tool_use answered, the session written, the sandbox's
 * placeholders removed) and then exits as the signal would have: 128 + its number, the shell's
 * convention. A second SIGINT or SIGTERM finds no handler and kills at once. A second SIGHUP does
 * not: closing a terminal sends more than one (the kernel's hangup, then an interactive shell
 * passes its own on to its jobs, ~1 ms apart), and the process must live to finish writing.
 */

export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
/** One of {@link STOP_SIGNALS}. */
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** Their numbers, the same on Linux and macOS (POSIX). */
const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/** What {@link trapStopSignals} returns. */
export interface StopSignalTrap {
  /** The first stop signal received, if any. */
  readonly signal: StopSignal | undefined;
  /** 128 + the received signal's number, else `status`. */
  exitStatus(status: number): number;
  /**
   * Stops as if `signal` had arrived (when none has yet): a front end that learns of a hangup
   * another way (stdin ended: the terminal is gone, its SIGHUP taken by a parent shell) gets the
   * same clean-up, exit status and protection from later hangups.
   */
  raise(signal: StopSignal): void;
  /** Removes the handlers that have not fired. */
  dispose(): void;
}

/** Takes every SIGHUP after the first stop signal: the terminal is gone, and more hangups follow. */
const ignoreHangup = () => {};

/**
 * Calls `onStop` at the first of {@link STOP_SIGNALS}, instead of Node's default of dying. From
 * then on SIGHUP is ignored until the process exits, also after `dispose()` (a front end disposes
 * the trap before the session is closed); SIGINT and SIGTERM get Node's default again.
 */
export function trapStopSignals(onStop: (signal: StopSignal) => void): StopSignalTrap {
  let received: StopSignal | undefined;
  const off = () => {
    for (const s of STOP_SIGNALS) process.off(s, handler);
  };
  const handler = (signal: StopSignal) => {
    if (received) return;
    received = signal;
    off();
    if (!process.listeners("SIGHUP").includes(ignoreHangup)) process.on("SIGHUP", ignoreHangup);
    onStop(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, handler);
  return {
    get signal() {
      return received;
    },
    exitStatus: (status) => (received ? 128 + SIGNAL_NUMBERS[received] : status),
    raise: handler,
    dispose: off,
  };
}

/**
 * The reason a turn stopped by `signal` is cancelled with (`Agent.cancel`), so that the session
 * and the model read why it stopped, not "interrupted by user": `interrupted: stopped by
 * SIGTERM`. Shared by the front ends; `larik -p` keeps "interrupted by user" for SIGINT, the
 * ctrl+c of its terminal, while the TUI, whose ctrl+c is a key, names every signal.
 */
export function stopSignalReason(signal: StopSignal): string {
  return `interrupted: stopped by ${signal}`;
}
