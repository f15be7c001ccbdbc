/**
 * Where tools keep a session's sidecar files (the exact output behind `raw_output`,
 * LARIK-REFERENCE §5), and their inheritance by branches: §5 keeps them "carried into forks", so
 * a branch's copied history, which tells the model to fetch omitted output with `raw_output`,
 * still finds it.
 */
import { constants, existsSync } from "node:fs";
import { chmod, copyFile, mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { dataDir } from "./paths.js";
import type { SessionHandle, SessionStore } from "./session.js";

/** `<data root>/sidecars/<session id>`: the folder `ToolContext.sidecarDir()` hands out. */
export function sidecarDirOf(env: NodeJS.ProcessEnv, sessionId: string): string {
  return join(dataDir(env), "sidecars", sessionId);
}

/**
 * Gives a branch (`meta.fork_of`) the sidecar files of its source and the source's own sources,
 * the nearest first (a file it already has is kept), once: when its folder does not exist yet.
 * Whichever way the branch was made (`--fork`, `/fork`, `/rewind`, the server), it is opened
 * through here before a tool runs in it. Files are copied, not linked (0600, as written), so
 * pruning one session never touches another's.
 */
export async function inheritSidecars(env: NodeJS.ProcessEnv, store: SessionStore, cwd: string, branch: SessionHandle): Promise<void> {
  const own = sidecarDirOf(env, branch.id);
  if (!branch.meta.fork_of || existsSync(own)) return;
  const forkOf = new Map((await store.list(cwd)).map((s) => [s.id, s.fork_of]));
  const seen = new Set<string>();
  let made = false;
  for (let src: string | undefined = branch.meta.fork_of; src && !seen.has(src); src = forkOf.get(src)) {
    seen.add(src);
    let names: string[];
    try {
      names = await readdir(sidecarDirOf(env, src));
    } catch {
      continue; // that session kept none
    }
    if (!made) await mkdir(own, { recursive: true, mode: 0o700 });
    made = true;
    for (const name of names) {
      const to = join(own, name);
      try {
        await copyFile(join(sidecarDirOf(env, src), name), to, constants.COPYFILE_EXCL);
        await chmod(to, 0o600);
      } catch {
        // kept from a nearer source, or unreadable: raw_output says it has nothing for that call
      }
    }
  }
}
