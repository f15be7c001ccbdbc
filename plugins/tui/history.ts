/**
 * Prompt history per project (LARIK-REFERENCE §24 composer: "history ↑/↓ and ctrl+r (≤500 per
 * project)"). Stored as JSON lines, one prompt per line, in
 * `$XDG_DATA_HOME/larik/history/<project key>.jsonl` (the per-project key of §31), file 0600.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { dataDir, projectKey } from "../../kernel/index.js";

/** Prompts kept per project. */
export const HISTORY_LIMIT = 500;

/** Where the history of `cwd` lives. */
export function historyFile(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(dataDir(env), "history", `${projectKey(cwd)}.jsonl`);
}

/** Navigable, persisted prompt history; index `entries.length` is "the draft being typed". */
export class PromptHistory {
  readonly entries: string[];
  #pos: number;
  #draft = "";
  #writing: Promise<void> = Promise.resolve();

  constructor(
    entries: string[],
    private readonly file?: string,
  ) {
    this.entries = entries.slice(-HISTORY_LIMIT);
    this.#pos = this.entries.length;
  }

  /** Reads the history of `cwd`; a missing or damaged file gives what could be read. */
  static async load(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<PromptHistory> {
    const file = historyFile(cwd, env);
    const text = await readFile(file, "utf8").catch(() => "");
    const entries: string[] = [];
    for (const line of text.split("\n")) {
      if (!line) continue;
      try {
        const v: unknown = JSON.parse(line);
        if (typeof v === "string" && v) entries.push(v);
      } catch {
        // a torn last line from a crash: skip it
      }
    }
    return new PromptHistory(entries, file);
  }

  /** Records a submitted prompt (not repeating the previous one) and saves the file. */
  add(text: string): Promise<void> {
    this.#pos = this.entries.length;
    this.#draft = "";
    if (!text.trim() || this.entries[this.entries.length - 1] === text) {
      this.#pos = this.entries.length;
      return this.#writing;
    }
    this.entries.push(text);
    if (this.entries.length > HISTORY_LIMIT) this.entries.splice(0, this.entries.length - HISTORY_LIMIT);
    this.#pos = this.entries.length;
    const file = this.file;
    if (!file) return this.#writing;
    const body = this.entries.map((e) => JSON.stringify(e)).join("\n") + "\n";
    // writes are chained so an older snapshot never lands after a newer one
    this.#writing = this.#writing.then(async () => {
      try {
        await mkdir(dirname(file), { recursive: true, mode: 0o700 });
        const tmp = `${file}.${process.pid}.tmp`;
        await writeFile(tmp, body, { mode: 0o600 });
        await rename(tmp, file);
      } catch {
        // history is a convenience: a read-only data dir must not break the composer
      }
    });
    return this.#writing;
  }

  /** ↑: the previous prompt, remembering `current` as the draft. Undefined at the oldest. */
  prev(current: string): string | undefined {
    if (this.#pos === 0) return undefined;
    if (this.#pos === this.entries.length) this.#draft = current;
    this.#pos--;
    return this.entries[this.#pos];
  }

  /** ↓: the next prompt, or the draft after the newest. Undefined when already at the draft. */
  next(): string | undefined {
    if (this.#pos >= this.entries.length) return undefined;
    this.#pos++;
    return this.#pos === this.entries.length ? this.#draft : this.entries[this.#pos];
  }

  /** Leaves history navigation (after an edit or a submit). */
  reset(): void {
    this.#pos = this.entries.length;
  }

  /**
   * ctrl+r: the newest prompt before index `before` containing `query` (case-insensitive), or
   * undefined.
   */
  search(query: string, before = this.entries.length): { index: number; text: string } | undefined {
    const q = query.toLowerCase();
    for (let i = Math.min(before, this.entries.length) - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.toLowerCase().includes(q)) return { index: i, text: e };
    }
    return undefined;
  }

  /** Resolves when pending writes are on disk. */
  flush(): Promise<void> {
    return this.#writing;
  }
}
