/**
 * Whether a command line asks for a headless run (`-p`, `--print`, or `p` in a cluster of short
 * flags such as `-cp`). `cli.ts` uses it to pick the headless bundle, `main.ts` to skip
 * preloading Ink.
 */
export function isPrintRun(argv: readonly string[]): boolean {
  return argv.some((a) => a === "-p" || a === "--print" || /^-[a-zA-Z]*p/.test(a));
}
