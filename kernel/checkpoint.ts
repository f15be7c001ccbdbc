/**
 * The checkpoint interface behind `/undo` (LARIK-REFERENCE §8). A turn begins a unit; the first
 * write to a path in a turn captures the file's bytes and mode (or that it did not exist);
 * undo restores the newest unit that changed files, in reverse order, inside the project.
 */
export interface CheckpointStore {
  /** Starts a new unit for the turn about to run. */
  beginTurn(): Promise<void>;
  /**
   * Captures `absPath` before its first write in this turn; later calls in the same turn are
   * no-ops. Throws when the capture fails (the write must not happen).
   */
  capture(absPath: string): Promise<void>;
  /** Records what a shell command changed (git repos); optional. */
  trackCommand?<T>(cwd: string, run: () => Promise<T>): Promise<T>;
  /** Restores the newest unit that changed files; returns the project-relative paths restored. */
  undo(): Promise<string[]>;
}

/** A store that keeps nothing (embedding without undo, or tests). */
export const noCheckpoints: CheckpointStore = {
  async beginTurn() {},
  async capture() {},
  async undo() {
    return [];
  },
};
