// The set-up the start-up benches share: a local model server speaking the OpenAI Chat
// Completions wire format (test/fakes/mock-model-server.ts, no network), a temp folder holding a
// project (a git repo, empty) and a HOME with its own config, data and cache folders (so each
// bench keeps its own V8 code cache), and the environment a `-p` run against that server gets.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createJiti } from "jiti";

export const root = resolve(import.meta.dirname, "..");

/**
 * The value below which a `fraction` of `xs` lie (0.5: the median, 0.25: the fastest quarter of
 * timings). The fastest quarter is for a VM whose CPUs differ in speed: it compares runs on the
 * faster one with each other (bench/startup.mjs).
 */
export function percentile(xs, fraction) {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length * fraction)];
}

/**
 * Starts the server and makes the folders; `close()` stops the one and removes the other.
 * @param prefix the temp folder's name prefix
 * @returns `{ server, tmp, project, env, close }`, `env` with PATH, HOME, the XDG folders and
 *   OPENAI_BASE_URL / OPENAI_API_KEY for the server
 */
export async function startBench(prefix) {
  const { startMockModelServer } = await createJiti(import.meta.url).import(join(root, "test/fakes/mock-model-server.ts"));
  const server = await startMockModelServer();
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const project = join(tmp, "project");
  mkdirSync(join(project, ".git"), { recursive: true });
  const home = join(tmp, "home");
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, "data"),
    XDG_CACHE_HOME: join(home, "cache"),
    OPENAI_BASE_URL: `${server.url}/v1`,
    OPENAI_API_KEY: "bench",
  };
  return {
    server,
    tmp,
    project,
    env,
    async close() {
      await server.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
