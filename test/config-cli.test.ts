/**
 * `larik.config.ts` through the built CLI (`dist/cli.cjs`) as a user runs it, in a temp git repo
 * with temp XDG directories: a project config's approval pins the files it loads (an auditor
 * approves, then the plugin or a helper changes, a link it imports through is retargeted, or a
 * module is added beside one an import found), and a syntax error names its place.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockModelServer, type MockModelServer } from "./fakes/mock-model-server.js";
import { CLI, runCli as run } from "./fakes/run-cli.js";


/** The built CLI in `cwd` with exactly `env` (test/fakes/run-cli.ts). */
const runCli = (args: string[], cwd: string, env: NodeJS.ProcessEnv) => run(args, { cwd, env });

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

let server: MockModelServer;
let base: string;
let repo: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error("dist/cli.cjs is missing: run npm run build first");
  server = await startMockModelServer();
  base = mkdtempSync(join(tmpdir(), "larik-cfg-cli-"));
  repo = join(base, "repo");
  mkdirSync(repo);
  execFileSync("git", ["init", "-q", repo]);
  const home = join(base, "home");
  env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    NO_COLOR: "1",
    OPENAI_BASE_URL: `${server.url}/v1`,
    OPENAI_API_KEY: "k",
  };
});
afterAll(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

/** One headless run answered "ok"; returns its stderr (notices) after checking it succeeded. */
async function ask(cwd = repo): Promise<string> {
  server.push({ text: "ok" });
  const r = await runCli(["-p", "--model", "openai-compatible/m", "hi"], cwd, env);
  expect(r.stdout).toBe("ok\n");
  expect(r.code).toBe(0);
  return r.stderr;
}

describe("larik config approve, then larik -p", () => {
  it("runs the approved config; a changed plugin or helper skips it, until approved again", async () => {
    const marker = join(repo, "plugin-ran.txt");
    const pwned = join(base, "pwned.txt");
    write(
      join(repo, "larik.config.ts"),
      `import { defineConfig } from "larik";\nimport { label } from "./helpers.ts";\nexport default defineConfig({ plugins: ["./lp/p.ts"], my_label: label });\n`,
    );
    const helper = `export const label: string = "v1";\n`;
    write(join(repo, "helpers.ts"), helper);
    const plugin = [
      `import { writeFileSync } from "node:fs";`,
      `import { join } from "node:path";`,
      `import { definePlugin } from "larik";`,
      `export default definePlugin({ name: "p", setup(ctx) { writeFileSync(join(ctx.cwd, "plugin-ran.txt"), "ran"); } });`,
      ``,
    ].join("\n");
    write(join(repo, "lp", "p.ts"), plugin);
    const review = "review it, then run `larik config approve`";

    expect(await ask()).toContain(`larik.config.ts not loaded: a project config runs code, so it needs your approval; ${review}`);
    expect(existsSync(marker)).toBe(false);

    const approved = await runCli(["config", "approve"], repo, env);
    expect(approved.stderr).toBe("");
    expect(approved.stdout).toMatch(/^approved .*\/repo\/larik\.config\.ts \(sha256 [0-9a-f]{16}\), with the 2 files it loads: helpers\.ts, lp\/p\.ts; a module file added, removed or relinked in its \d+ folders needs approving again\nit runs from the next start of larik \(a session already open keeps what it loaded\)\n$/);
    expect(await ask()).not.toContain("larik.config.ts");
    expect(readFileSync(marker, "utf8")).toBe("ran");
    rmSync(marker);

    // the auditor's case: the plugin module now writes a file of its own
    write(join(repo, "lp", "p.ts"), `import { writeFileSync as w } from "node:fs";\nw(${JSON.stringify(pwned)}, "x");\n${plugin}`);
    expect(await ask()).toContain(`larik.config.ts not loaded: lp/p.ts, which it loads, changed since you approved it; ${review}`);
    expect(existsSync(pwned)).toBe(false);
    expect(existsSync(marker)).toBe(false);

    // back as approved: it runs again
    write(join(repo, "lp", "p.ts"), plugin);
    expect(await ask()).not.toContain("larik.config.ts");
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);

    // a module the config itself imports
    write(join(repo, "helpers.ts"), `import { writeFileSync as w } from "node:fs";\nw(${JSON.stringify(pwned)}, "x");\n${helper}`);
    expect(await ask()).toContain(`larik.config.ts not loaded: helpers.ts, which it loads, changed since you approved it; ${review}`);
    expect(existsSync(pwned)).toBe(false);
    expect(existsSync(marker)).toBe(false);

    // approved again, as it is now
    expect((await runCli(["config", "approve"], repo, env)).code).toBe(0);
    rmSync(pwned); // approving ran the config once
    expect(await ask()).not.toContain("larik.config.ts");
    expect(existsSync(marker)).toBe(true);
    expect(existsSync(pwned)).toBe(true);
  });
});

/** A new git repository under the temp folder, for a scenario of its own. */
function newRepo(name: string): string {
  const dir = join(base, name);
  mkdirSync(dir);
  execFileSync("git", ["init", "-q", dir]);
  return dir;
}

describe("an approval also holds the folders the config loads from", () => {
  const review = "review it, then run `larik config approve`";
  const evil = (pwned: string) => `import { writeFileSync as w } from "node:fs";\nw(${JSON.stringify(pwned)}, "x");\nexport const label: string = "evil";\n`;

  it("a symlink it imports through, retargeted, skips it (Node loads the link's target, the file pinned)", async () => {
    const dir = newRepo("sym");
    const pwned = join(base, "pwned-sym.txt");
    write(join(dir, "larik.config.ts"), `import { label } from "./lib.ts";\nimport { other } from "./sub/lib";\nexport default { my_label: label + other };\n`);
    write(join(dir, "real.ts"), `export const label: string = "v1";\nexport const other: string = "v1";\n`);
    write(join(dir, "other.ts"), evil(pwned));
    symlinkSync("real.ts", join(dir, "lib.ts"));
    // a link in a folder that holds no file it loads: sub/lib.ts → ../real.ts
    mkdirSync(join(dir, "sub"));
    symlinkSync("../real.ts", join(dir, "sub", "lib.ts"));
    const approved = await runCli(["config", "approve"], dir, env);
    expect(approved.stdout).toMatch(/with the file it loads: real\.ts; a module file added, removed or relinked in its 2 folders needs approving again\nit runs from the next start of larik \(a session already open keeps what it loaded\)\n$/);
    expect(await ask(dir)).not.toContain("larik.config.ts");

    unlinkSync(join(dir, "lib.ts"));
    symlinkSync("other.ts", join(dir, "lib.ts"));
    expect(await ask(dir)).toContain(`larik.config.ts not loaded: lib.ts, in a folder it loads modules from, changed (now a link to other.ts) since you approved it; ${review}`);
    expect(existsSync(pwned)).toBe(false);

    unlinkSync(join(dir, "lib.ts"));
    symlinkSync("real.ts", join(dir, "lib.ts"));
    expect(await ask(dir)).not.toContain("larik.config.ts");

    unlinkSync(join(dir, "sub", "lib.ts"));
    symlinkSync("../other.ts", join(dir, "sub", "lib.ts"));
    expect(await ask(dir)).toContain(`larik.config.ts not loaded: sub/lib.ts, in a folder it loads modules from, changed (now a link to ../other.ts) since you approved it; ${review}`);
    expect(existsSync(pwned)).toBe(false);
  });

  it("a module added beside the one an extensionless import found (lib.js, lib.mjs before lib.ts) skips it", async () => {
    const dir = newRepo("ext");
    const pwned = join(base, "pwned-ext.txt");
    write(join(dir, "larik.config.ts"), `import { label } from "./lib";\nexport default { my_label: label };\n`);
    write(join(dir, "lib.ts"), `export const label: string = "v1";\n`);
    const approved = await runCli(["config", "approve"], dir, env);
    expect(approved.stdout).toMatch(/with the file it loads: lib\.ts; a module file added, removed or relinked in its folder needs approving again\nit runs from the next start of larik \(a session already open keeps what it loaded\)\n$/);
    expect(await ask(dir)).not.toContain("larik.config.ts");

    for (const name of ["lib.js", "lib.mjs", "lib"]) {
      write(join(dir, name), evil(pwned).replace(": string", ""));
      expect(await ask(dir)).toContain(`larik.config.ts not loaded: ${name}, in a folder it loads modules from, appeared since you approved it; ${review}`);
      expect(existsSync(pwned)).toBe(false);
      rmSync(join(dir, name));
    }
    expect(await ask(dir)).not.toContain("larik.config.ts");
  });
});

describe("larik config with anything but approve", () => {
  it("names the near miss, and otherwise gives the usage, exit 2", async () => {
    const typo = await runCli(["config", "aprove"], repo, env);
    expect([typo.code, typo.stderr]).toEqual([2, "larik: unknown config command 'aprove': did you mean larik config approve?\n"]);
    for (const args of [["config"], ["config", "list"], ["config", "approve", "now"]]) {
      const r = await runCli(args, repo, env);
      expect([args, r.code, r.stderr]).toEqual([args, 2, "larik: usage: larik config approve   (trust this project's larik.config.ts and the files it loads, as they are now)\n"]);
    }
  });
});

describe("a config file with a syntax error", () => {
  it("stops larik with one line that names the line and column", async () => {
    const cfg = join(env.XDG_CONFIG_HOME!, "larik", "larik.config.ts");
    write(cfg, "export default { max_turns:");
    try {
      const r = await runCli(["-p", "--model", "openai-compatible/m", "hi"], repo, env);
      expect(r.stderr).toBe("larik: ~/.config/larik/larik.config.ts: failed to load: ParseError: Unexpected token at line 1, column 28\n");
      expect(r.code).toBe(2);
      // --version still answers (a bug report starts with it), and says why the config is left out
      const v = await runCli(["--version"], repo, env);
      expect([v.code, v.stdout.split("\n")[0]]).toEqual([0, expect.stringMatching(/^larik \d+\.\d+\.\d+$/)]);
      expect(v.stderr).toBe("! ~/.config/larik/larik.config.ts: failed to load: ParseError: Unexpected token at line 1, column 28\n");
    } finally {
      rmSync(cfg);
    }
  });
});

describe("a plugin of the same name in the personal and the project config", () => {
  it("keeps the personal one and names both files in the notice", async () => {
    const dir = join(base, "dup");
    mkdirSync(dir, { recursive: true });
    execFileSync("git", ["init", "-q", dir]);
    const plugin = (from: string) => `export default { plugins: [{ name: "word-count", setup() {} , from: ${JSON.stringify(from)} }] };\n`;
    const personal = join(env.XDG_CONFIG_HOME!, "larik", "larik.config.ts");
    write(personal, plugin("personal"));
    write(join(dir, "larik.config.ts"), plugin("project"));
    try {
      expect((await runCli(["config", "approve"], dir, env)).code).toBe(0);
      // "the config's plugins" twice told the user nothing: which file keeps it, which lost it
      expect(await ask(dir)).toContain(
        'plugin "word-count" from larik.config.ts skipped: the plugin of that name from ~/.config/larik/larik.config.ts came first and keeps it',
      );
    } finally {
      rmSync(personal);
    }
  });
});

describe("a project config approved at the project root, run from a subfolder", () => {
  it("says where it is approved and that approvals hold per working folder", async () => {
    const dir = join(base, "sub-approve");
    mkdirSync(join(dir, "src"), { recursive: true });
    execFileSync("git", ["init", "-q", dir]);
    write(join(dir, "larik.config.ts"), `export default { max_turns: 7 };\n`);
    expect((await runCli(["config", "approve"], dir, env)).code).toBe(0);
    expect(await ask(dir)).not.toContain("larik.config.ts");
    // "needs your approval" read as if nothing was ever approved
    expect(await ask(join(dir, "src"))).toContain(
      `../larik.config.ts not loaded: it is approved for ${dir}, and approvals hold per working folder; to run it here too, run \`larik config approve\` in this folder`,
    );
  });
});
