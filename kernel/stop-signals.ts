/**
 * The signals that ask a run to stop: ctrl+c (SIGINT; in a raw-mode terminal it comes from
 * outside), a polite kill (SIGTERM) and the terminal closing (SIGHUP). A front end traps each
 * once to end its turn cleanly (every tool_use answered, the session written, the sandbox's
 * placeholders removed) and then exits as the signal would have: 128 + its number, the shell's
 * convention. A second signal finds no handler and kills at once.
 */

export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** Their numbers, the same on Linux and macOS (POSIX). */
const SIGNAL_NUMBERS: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/** What {@link trapStopSignals} returns. */
export interface StopSignalTrap {
  /** The first stop signal received, if any. */
  readonly signal: StopSignal | undefined;
  /** 128 + the received signal's number, else `status`. */
  exitStatus(status: number): number;
  /** Removes the handlers that have not fired. */
  dispose(): void;
}

/** Calls `onStop` at the first of {@link STOP_SIGNALS}, instead of Node's default of dying. */
export function trapStopSignals(onStop: (signal: StopSignal) => void): StopSignalTrap {
  let received: StopSignal | undefined;
  const handler = (signal: StopSignal) => {
    received ??= signal;
    onStop(signal);
  };
  for (const s of STOP_SIGNALS) process.once(s, handler);
  return {
    get signal() {
      return received;
    },
    exitStatus: (status) => (received ? 128 + SIGNAL_NUMBERS[received] : status),
    dispose: () => {
      for (const s of STOP_SIGNALS) process.off(s, handler);
    },
  };
}
