/**
 * Runs the built CLI (`dist/cli.cjs`) as a user would, for the tests that drive it end to end.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

/** The built CLI; `npm run build` makes it (`npm run check` and CI build first). */
export const CLI = join(resolve(import.meta.dirname, "..", ".."), "dist", "cli.cjs");

/** What a run of the CLI left: its exit status (-1 when killed) and its whole output. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node dist/cli.cjs ...args` in `cwd` with exactly `env`, writes `input` (or nothing) to
 * its stdin and closes it, and resolves when the process has exited and its output has closed.
 * @throws Error when dist/cli.cjs has not been built.
 */
export function runCli(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string }): Promise<CliRun> {
  if (!existsSync(CLI)) throw new Error("dist/cli.cjs is missing: run npm run build first");
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.stdin.end(opts.input ?? "");
    child.on("close", (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}
