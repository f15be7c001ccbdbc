/**
 * Whether a command line only asks for information (`--help`/`-h`, `--version`/`-v`,
 * `--sessions`), which `main` answers before any front end starts. `cli.ts` runs such a line
 * through the headless bundle and its code cache, about twice as fast as the ES module build,
 * and `main.ts` does not preload Ink for it (in a terminal that kept `larik --help` waiting
 * ~0.6 s for an import nothing used). Flags after `--` are a prompt's words, not flags.
 */
export function isInfoRun(argv: readonly string[]): boolean {
  return hasFlag(argv, INFO_FLAGS);
}

/**
 * Whether a command line asks for the help or the version, which answer even when a config file
 * is broken (the error becomes a notice): the help says where the files are, and a bug report
 * starts with the version.
 */
export function asksHelpOrVersion(argv: readonly string[]): boolean {
  return hasFlag(argv, HELP_OR_VERSION);
}

function hasFlag(argv: readonly string[], flags: ReadonlySet<string>): boolean {
  for (const a of argv) {
    if (a === "--") return false;
    if (flags.has(a)) return true;
  }
  return false;
}

const HELP_OR_VERSION: ReadonlySet<string> = new Set(["--help", "-h", "--version", "-v"]);
const INFO_FLAGS: ReadonlySet<string> = new Set([...HELP_OR_VERSION, "--sessions"]);
