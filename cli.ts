#!/usr/bin/env node
/**
 * The `larik` command, built to the CommonJS file dist/cli.cjs so that starting it does not
 * start Node's ES module loader (about 10 ms on Node 20). `--version` without any config file is
 * answered before anything else loads. A headless run (`-p`) executes the CommonJS bundle
 * dist/headless.cjs through V8's code cache (cli/code-cache.ts), and the plugin modules it loads on
 * demand from dist/headless-lazy.cjs (cli/headless-files.ts); so do `--help`, `--sessions` and a
 * `--version` that a config file sends down the full path (cli/info-flags.ts). Everything else
 * imports the ES module build of `cli/main.ts` on demand. Both run the same `main`.
 */
import { codeCacheDir, saveAfterFirstRequest } from "./cli/code-cache.js";
import { loadHeadless } from "./cli/headless-files.js";
import { isInfoRun } from "./cli/info-flags.js";
import { isPrintRun } from "./cli/print-flag.js";
import { fastVersion } from "./cli/version.js";
import { printAll } from "./kernel/kit/pipe-writer.js";
import { trapStopSignals, type StopSignalTrap } from "./kernel/kit/stop-signals.js";
import { startupMark } from "./kernel/kit/startup-probe.js";
import { exitIfHeldOpen } from "./cli/exit-guard.js";

type Main = (argv: string[], env?: NodeJS.ProcessEnv, cwd?: string, early?: StopSignalTrap) => Promise<number>;

async function start(argv: string[]): Promise<number> {
  startupMark("launcher");
  const quick = fastVersion(argv);
  if (quick !== undefined) return printAll(quick);
  // set before the code loads (tens of ms): a ctrl+c meanwhile is said and exits 130, as later;
  // `main` takes it over
  const early = trapStopSignals(() => {});
  // Only a command line that starts with a flag: a first word may name a subcommand (`serve`),
  // and the front ends other than headless are left out of the bundle. `--help`, `--version` and
  // `--sessions` start none.
  const print = isPrintRun(argv);
  const bundle = (print || isInfoRun(argv)) && argv[0]?.startsWith("-") ? `${import.meta.dirname}/headless.cjs` : undefined;
  if (bundle && process.getBuiltinModule("node:fs").existsSync(bundle)) {
    const { start: loaded, saveLazy } = loadHeadless(bundle, process.env.LARIK_NO_CODE_CACHE === "1" ? false : codeCacheDir());
    startupMark("bundle run");
    // the start file's cache holds what a -p run compiles up to its first request: one written
    // by `--help`, or by a run that stopped before its request, would leave every later -p run
    // compiling the rest of that path from source
    if (print) saveAfterFirstRequest(loaded);
    const status = await (loaded.exports as { main: Main }).main(argv, undefined, undefined, early);
    if (print) saveLazy();
    return status;
  }
  const { main, inkStillLoading } = await import("./cli/main.js");
  const status = await main(argv, undefined, undefined, early);
  // a usage error typed in a terminal is answered in ~0.2 s, not once Ink has loaded for nothing;
  // main has flushed what it wrote
  if (inkStillLoading()) process.exit(status);
  return status;
}

process.env.NODE_ENV ??= "production"; // ink loads React's development build otherwise
void start(process.argv.slice(2)).then((status) => {
  process.exitCode = status;
  exitIfHeldOpen();
});
