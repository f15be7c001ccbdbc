/**
 * Loads the headless build's two files (build/headless-split.ts): dist/headless.cjs at once, and
 * dist/headless-lazy.cjs at the first `require("larik-lazy:<id>")`, a plugin's import of a module
 * that a `-p` run needs only for some features (MCP, hooks, skills, slash commands, the other
 * providers). Each file gets its own V8 code cache (cli/code-cache.ts). The lazy file takes the
 * modules it shares with the first through `require("larik-shared:<id>")`, which this answers
 * with the first file's `sharedModule(id)`, so both use one instance of each.
 */
import { loadWithCodeCache, type CachedLoad } from "./code-cache.js";
import { LAZY_PREFIX as LAZY, SHARED_PREFIX as SHARED } from "./split-ids.js";

/** The headless build, loaded. */
export interface HeadlessFiles {
  /** dist/headless.cjs: its exports are `main` and `sharedModule`. */
  start: CachedLoad;
  /** Writes the lazy file's code cache if it was loaded and had none (at exit: it then holds what the run compiled). */
  saveLazy(): void;
}

/**
 * Loads `file` (dist/headless.cjs) with the lazy file beside it (`<name>-lazy.cjs`) on demand.
 * @param cacheDir the code cache folder, or false for none
 * @throws whatever dist/headless.cjs throws while it loads; the lazy file's errors (a missing
 *   file: `npm run build` not finished) surface at the import that needed it
 */
export function loadHeadless(file: string, cacheDir: string | false): HeadlessFiles {
  let lazy: CachedLoad | undefined;
  const shared = (id: string) => (id.startsWith(SHARED) ? (start.exports as { sharedModule(id: string): unknown }).sharedModule(id.slice(SHARED.length)) : undefined);
  const start = loadWithCodeCache(file, cacheDir, (id) => {
    if (!id.startsWith(LAZY)) return undefined;
    lazy ??= loadWithCodeCache(file.replace(/\.cjs$/, "-lazy.cjs"), cacheDir, shared);
    return (lazy.exports as { load(id: string): unknown }).load(id.slice(LAZY.length));
  });
  return { start, saveLazy: () => lazy?.save() };
}
