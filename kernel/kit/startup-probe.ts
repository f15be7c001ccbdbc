/**
 * Start-up phase marks, for a probe that measures them: bench/startup-phases.mjs preloads one
 * (`node -r`) that sets `globalThis[Symbol.for("larik.startup-probe")]` to a function taking the
 * name of the phase just ended, and records the time and CPU time of each call. Without a probe a
 * mark is one property lookup: the marks stay in the start path, where the next change to it is
 * measured by the same instrument as the last.
 */
const PROBE = Symbol.for("larik.startup-probe");

/**
 * Says that start-up phase `phase` (a short name: `"config"`, `"host"`) has just ended. Does
 * nothing unless a probe is installed; never throws into the caller (a probe that throws is the
 * bench's bug, not the run's).
 */
export function startupMark(phase: string): void {
  const probe = (globalThis as { [PROBE]?: (phase: string) => void })[PROBE];
  if (probe === undefined) return;
  try {
    probe(phase);
  } catch {
    // a measurement must not change the run it measures
  }
}
