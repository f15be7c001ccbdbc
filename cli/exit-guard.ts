/**
 * The process ends when its run has ended, even if something left an open handle behind: a
 * plugin's `setInterval` or socket that its dispose did not close would otherwise keep `larik -p`
 * running, silently, in a script or a CI job that waits for it.
 */

/** How long after the run has ended (ms) a handle still open is taken as left behind. */
export const LINGER_MS = 1000;

/**
 * Arms an unref'd timer: if the process is still alive `lingerMs` after the run ended, only
 * because something else holds the event loop, it says what (Node's resource types, from
 * `process.getActiveResourcesInfo`) on stderr in one line and exits with the run's status
 * (`process.exitCode`). A process that ends by itself never sees it: an unref'd timer does not
 * keep Node running.
 */
export function exitIfHeldOpen(lingerMs = LINGER_MS): void {
  setTimeout(() => {
    const held = [...new Set(leftOpen())].join(", ") || "an open handle";
    try {
      process.stderr.write(`larik: exiting ${lingerMs / 1000} s after the run ended; still open: ${held} (a plugin that does not close what it opened in its dispose)\n`);
    } catch {
      // stderr's reader has gone: exit all the same
    }
    process.exit();
  }, lingerMs).unref();
}

/**
 * The types of the handles still open (`Timeout`, `TCPSocketWrap`, `ProcessWrap`, …), less the
 * ones stdout and stderr hold themselves (a pipe's `PipeWrap`, a terminal's `TTYWrap`), which
 * never keep the process alive and would send a plugin author looking in the wrong place.
 */
function leftOpen(): string[] {
  const open = process.getActiveResourcesInfo();
  const { fstatSync } = process.getBuiltinModule("node:fs");
  for (const [fd, stream] of [[1, process.stdout], [2, process.stderr]] as const) {
    let type: string | undefined;
    try {
      const st = fstatSync(fd);
      type = stream.isTTY ? "TTYWrap" : st.isFIFO() || st.isSocket() ? "PipeWrap" : undefined;
    } catch {
      continue; // closed: holds nothing
    }
    const at = type ? open.indexOf(type) : -1;
    if (at >= 0) open.splice(at, 1);
  }
  return open;
}
