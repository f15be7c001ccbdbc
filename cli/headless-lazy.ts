/**
 * The entry of dist/headless-lazy.cjs. The build replaces this file's content with a `load` that
 * requires each plugin module the headless build moved there (build/headless-split.ts); as
 * written here, it is what a build without that step would give.
 */
export function load(id: string): unknown {
  throw new Error(`dist/headless-lazy.cjs has no module ${id}: rebuild (npm run build)`);
}
