/**
 * Bad plugins and bad plugin lists, as a user meets them: the built CLI (`dist/cli.cjs`) as a
 * subprocess with a personal `larik.config.ts` in a temporary XDG_CONFIG_HOME, and the embedding
 * API's `Host.create`. Each problem is one line that names the plugin and says what to fix, and
 * nothing else is lost.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { definePlugin, Host, type Plugin } from "../kernel/index.js";
import { startMockModelServer, type MockModelServer } from "./fakes/mock-model-server.js";

const CLI = join(resolve(import.meta.dirname, ".."), "dist", "cli.cjs");

let base: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "larik-plugin-notices-"));
  mkdirSync(join(base, "work"));
  env = {
    PATH: process.env.PATH,
    HOME: join(base, "home"),
    XDG_CONFIG_HOME: join(base, "home", ".config"),
    XDG_DATA_HOME: join(base, "home", ".local", "share"),
    NO_COLOR: "1",
  };
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** Writes the personal `larik.config.ts`. */
function personalConfig(text: string): void {
  const dir = join(env.XDG_CONFIG_HOME!, "larik");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "larik.config.ts"), text);
}

function larik(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: join(base, "work"), env: { ...env, ...extraEnv }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.stdin.end();
    child.on("close", (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}

const lines = (s: string) => s.split("\n").filter(Boolean);

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error("dist/cli.cjs is missing: run npm run build first");
});

describe("larik with a config that has bad plugins", () => {
  it("a setup error of several lines is a one-line notice", async () => {
    personalConfig(`export default { plugins: [{ name: "boom", setup() { throw new Error("first line\\n    at setup (boom.ts:1:1)\\n    at load"); } }] };\n`);
    const r = await larik(["--version"]);
    expect(r.code).toBe(0);
    expect(lines(r.stderr)).toEqual(['! plugin "boom" failed in setup: first line; started without it']);
  });

});


describe("an event tap that throws", () => {
  let server: MockModelServer;
  beforeAll(async () => {
    server = await startMockModelServer();
  });
  afterAll(() => server?.close());

  it("is reported once, naming the plugin and the hook; later taps still see every event and the run goes on", async () => {
    const seen = join(base, "seen.txt");
    personalConfig(
      [
        'import { appendFileSync } from "node:fs";',
        "export default { plugins: [",
        '  { name: "trace", setup(ctx) { ctx.hooks.event.tap(() => { throw new Error("tap broke\\n    at trace.ts:1"); }); } },',
        `  { name: "counter", setup(ctx) { ctx.hooks.event.tap((e) => appendFileSync(${JSON.stringify(seen)}, e.type + "\\n")); } },`,
        "] };",
        "",
      ].join("\n"),
    );
    server.push({ text: "the answer" });
    const r = await larik(["-p", "--model", "openai-compatible/m", "hi"], { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: "k" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("the answer\n");
    expect(lines(r.stderr)).toEqual(['! plugin "trace" failed in hook "event": tap broke; further errors from it are not shown']);
    const types = lines(readFileSync(seen, "utf8"));
    expect(types.length).toBeGreaterThan(2);
    expect(types.at(-1)).toBe("done");
  }, 20_000);
});
