/**
 * The function Node's CommonJS loader wraps a module's source in (`exports, require, module,
 * __filename, __dirname`). dist/headless.cjs is written already wrapped (tsup.config.ts), and
 * cli/code-cache.ts compiles such a file as it is; any other file it wraps itself.
 */
export const CJS_WRAPPER_HEAD = "(function (exports, require, module, __filename, __dirname) {";
export const CJS_WRAPPER_TAIL = "\n});";

/** The build's minifier prints the head without spaces; either spelling counts. */
const WRAPPED = /^\(function ?\(exports, ?require, ?module, ?__filename, ?__dirname\) ?\{/;

/** True when `source` is a file written already wrapped (it then ends with `});`). */
export function isWrapped(source: string): boolean {
  return WRAPPED.test(source);
}
