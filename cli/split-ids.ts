/**
 * The ids through which the headless build's two files reach each other (build/headless-split.ts
 * writes them, cli/headless-files.ts answers them): `require("larik-lazy:<id>")` in
 * dist/headless.cjs loads a module of dist/headless-lazy.cjs, and `require("larik-shared:<id>")`
 * in dist/headless-lazy.cjs takes a module of dist/headless.cjs.
 */
export const LAZY_PREFIX = "larik-lazy:";
export const SHARED_PREFIX = "larik-shared:";
