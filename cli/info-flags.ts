/**
 * Whether a command line only asks for information (`--help`/`-h`, `--version`/`-v`,
 * `--sessions`), which `main` answers before any front end starts. `cli.ts` runs such a line
 * through the headless bundle and its code cache, about twice as fast as the ES module build,
 * and `main.ts` does not preload Ink for it (in a terminal that kept `larik --help` waiting
 * ~0.6 s for an import nothing used). Flags after `--` are a prompt's words, not flags.
 */
export function isInfoRun(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === "--") return false;
    if (INFO_FLAGS.has(a)) return true;
  }
  return false;
}

const INFO_FLAGS: ReadonlySet<string> = new Set(["--help", "-h", "--version", "-v", "--sessions"]);
