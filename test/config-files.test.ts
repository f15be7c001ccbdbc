/**
 * `larik.config.ts` loading, plugin specs and project-config approval (docs/config.md), with real
 * files evaluated by jiti in a temporary HOME and a real git repository.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  approveProjectConfig,
  ConfigError,
  findProjectConfig,
  hashConfigContent,
  Host,
  loadConfig,
  privateProjectFile,
} from "../kernel/index.js";

const here = dirname(fileURLToPath(import.meta.url));
let base: string;
let home: string;
let repo: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "larik-cfgts-"));
  home = join(base, "home");
  repo = join(base, "repo");
  mkdirSync(home, { recursive: true });
  mkdirSync(repo, { recursive: true });
  execFileSync("git", ["init", "-q", repo]);
  env = { HOME: home, PATH: process.env.PATH };
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function write(file: string, text: string): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}
const cfgDir = () => join(home, ".config", "larik");

/** A project config that leaves a marker file when its code runs. */
function projectConfig(extra = "", dir = repo): string {
  const marker = join(base, "project-config-ran");
  return write(
    join(dir, "larik.config.ts"),
    `import { writeFileSync } from "node:fs";
import { defineConfig } from "larik";
writeFileSync(${JSON.stringify(marker)}, "ran");
export default defineConfig({
  plugins: ["./tools/team.ts"],
  mode: "accept-edits",
  permissions: { allow: ["bash(make *)"] },
  ${extra}
});
`,
  );
}
const ran = () => existsSync(join(base, "project-config-ran"));
function teamPlugin(): void {
  write(
    join(repo, "tools", "team.ts"),
    `import { definePlugin } from "larik";
const name: string = "team";
export default definePlugin({ name, setup(ctx) { ctx.notice("team plugin set up"); } });
`,
  );
}

describe("personal larik.config.ts", () => {
  it("always runs: plugins in order, settings trusted, config.json wins over it", async () => {
    write(
      join(cfgDir(), "larik.config.ts"),
      `import { defineConfig, definePlugin } from "larik";
const inline = definePlugin({ name: "inline", setup() {} });
const turns: number = await Promise.resolve(42);
export default defineConfig({
  plugins: [inline, "./local-plugin.ts"],
  disable: ["web"],
  model: "from-code",
  mode: "yolo",
  max_turns: turns,
  my_plugin_option: { colour: "teal" },
});
`,
    );
    write(join(cfgDir(), "local-plugin.ts"), `export default { name: "local", setup() {} };\n`);
    write(join(cfgDir(), "config.json"), JSON.stringify({ model: "from-json" }));
    const cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual([]);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["inline", "local"]);
    expect(cfg.disable).toEqual(["web"]);
    expect(cfg.preset).toBeUndefined();
    expect(cfg.settings.model).toBe("from-json");
    expect(cfg.settings.mode).toBe("yolo");
    expect(cfg.settings.max_turns).toBe(42);
    expect(cfg.settings.my_plugin_option).toEqual({ colour: "teal" });
    expect(cfg.settings.plugins).toBeUndefined();
    expect(cfg.configFiles).toEqual([join(cfgDir(), "larik.config.ts")]);
  });

  it("a broken personal config stops Larik with a one-line error naming the file", async () => {
    write(join(cfgDir(), "larik.config.ts"), `export default defineConfig({ max_turns: "ten" });\n`);
    await expect(loadConfig(repo, env)).rejects.toThrow(/^~\/\.config\/larik\/larik\.config\.ts: failed to load: .*defineConfig/);
    write(join(cfgDir(), "larik.config.ts"), `export default { max_turns: "ten" };\n`);
    const err = await loadConfig(repo, env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe('~/.config/larik/larik.config.ts: "max_turns": expected a positive integer, got "ten"');
  });

  it("a syntax error names its line and column, in the config or in a module it imports", async () => {
    write(join(cfgDir(), "larik.config.ts"), "export default { max_turns:");
    await expect(loadConfig(repo, env)).rejects.toThrow(
      /^~\/\.config\/larik\/larik\.config\.ts: failed to load: ParseError: Unexpected token at line 1, column 28$/,
    );
    write(join(cfgDir(), "larik.config.ts"), `import x from "./helper.ts";\nexport default { x };\n`);
    const helper = write(join(cfgDir(), "helper.ts"), "const a = 1;\nconst = 2;\n");
    const err = await loadConfig(repo, env).catch((e: unknown) => e);
    expect((err as Error).message).toBe(`~/.config/larik/larik.config.ts: failed to load: ParseError: Unexpected token at ${helper}:2:7`);
  });

  it("skips a plugin spec that cannot load, with a notice, and keeps the others", async () => {
    write(
      join(cfgDir(), "larik.config.ts"),
      `export default { plugins: ["./missing.ts", "./not-a-plugin.ts", "no-such-package-xyz", { name: "ok", setup() {} }, 42] };\n`,
    );
    write(join(cfgDir(), "not-a-plugin.ts"), `export default { hello: 1 };\n`);
    const cfg = await loadConfig(repo, env);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["ok"]);
    expect(cfg.notices).toHaveLength(4);
    expect(cfg.notices[0]).toMatch(/^~\/\.config\/larik\/larik\.config\.ts: plugin "\.\/missing\.ts" skipped: /);
    expect(cfg.notices[1]).toContain('plugin "./not-a-plugin.ts" skipped: its default export is not a plugin');
    expect(cfg.notices[2]).toContain('plugin "no-such-package-xyz" skipped: cannot find package "no-such-package-xyz"');
    expect(cfg.notices[3]).toContain("plugin #5 skipped");
  });

  it("gives a plugin beside it the kernel's zod and zod/mini when it has none of its own", async () => {
    write(join(cfgDir(), "larik.config.ts"), `export default { plugins: ["./mini.ts", "./classic.ts"] };\n`);
    write(
      join(cfgDir(), "mini.ts"),
      `import { z } from "zod/mini";\nimport { definePlugin, lazySchema } from "larik";\nconst input = lazySchema(() => z.object({ n: z.number() }));\nexport default definePlugin({ name: "mini", setup(ctx) { ctx.tools.register({ name: "m", description: "m", input, readOnly: true, run: async () => "ok" }); } });\n`,
    );
    write(join(cfgDir(), "classic.ts"), `import { z } from "zod/v4";\nexport default { name: "classic", setup() { z.string().parse("x"); } };\n`);
    const cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual([]);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["mini", "classic"]);
  });

  it("names a settings key that looks like a typo of a known one, and keeps plugin options quietly", async () => {
    write(join(cfgDir(), "larik.config.ts"), `export default { modle: "x", plugin: [], disabled: [], my_plugin_option: 1 };\n`);
    const cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual([
      '~/.config/larik/larik.config.ts: unknown key "modle" (did you mean "model"?)',
      '~/.config/larik/larik.config.ts: unknown key "plugin" (did you mean "plugins"?)',
      '~/.config/larik/larik.config.ts: unknown key "disabled" (did you mean "disable"?)',
    ]);
    expect(cfg.settings.my_plugin_option).toBe(1);
  });

  it("resolves a preset module (a list of plugins)", async () => {
    write(join(cfgDir(), "my-preset.ts"), `export default [{ name: "a", setup() {} }, { name: "b", setup() {} }];\n`);
    write(join(cfgDir(), "larik.config.ts"), `export default { preset: ["./my-preset.ts"] };\n`);
    const cfg = await loadConfig(repo, env);
    expect(cfg.preset?.map((p) => p.name)).toEqual(["a", "b"]);
  });
});

describe("project larik.config.ts", () => {
  it("is skipped, without running, until approved; approval pins its hash", async () => {
    const file = projectConfig();
    teamPlugin();
    let cfg = await loadConfig(repo, env);
    expect(ran()).toBe(false);
    expect(cfg.plugins).toEqual([]);
    expect(cfg.settings.mode).toBeUndefined();
    expect(cfg.notices).toEqual([
      "larik.config.ts not loaded: a project config runs code, so it needs your approval; review it, then run `larik config approve`",
    ]);

    const approved = await approveProjectConfig(repo, env);
    const team = join(repo, "tools", "team.ts");
    expect(approved).toEqual({ path: file, hash: hashConfigContent(readFileSync(file)), files: [team], dirs: [repo, join(repo, "tools")] });
    const saved = JSON.parse(readFileSync(privateProjectFile(repo, env), "utf8"));
    expect(saved.approved_configs).toEqual({
      [file]: {
        sha256: approved!.hash,
        files: { [team]: hashConfigContent(readFileSync(team)) },
        // the folders it loads from, with the entries there that an import could find instead
        dirs: { [repo]: { "larik.config.ts": "file" }, [join(repo, "tools")]: { "team.ts": "file" } },
      },
    });

    cfg = await loadConfig(repo, env);
    expect(ran()).toBe(true);
    expect(cfg.notices).toEqual([]);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["team"]);
    // approved project config is trusted: it may set mode and allow rules
    expect(cfg.settings.mode).toBe("accept-edits");
    expect(cfg.settings.permissions?.allow).toEqual(["bash(make *)"]);
    expect(cfg.configFiles).toEqual([file]);
  });

  it("is skipped again once its content changes", async () => {
    projectConfig();
    teamPlugin();
    await approveProjectConfig(repo, env);
    rmSync(join(base, "project-config-ran")); // approving ran it once
    projectConfig(`model: "someone/else",`);
    const cfg = await loadConfig(repo, env);
    expect(ran()).toBe(false);
    expect(cfg.settings.model).toBeUndefined();
    expect(cfg.plugins).toEqual([]);
    expect(cfg.notices).toEqual(["larik.config.ts not loaded: it changed since you approved it; review it, then run `larik config approve`"]);
  });

  it("cannot approve itself or anything else", async () => {
    projectConfig(`approved_configs: { "/elsewhere/larik.config.ts": "00" }, approved_mcp_servers: { db: "11" },`);
    teamPlugin();
    await approveProjectConfig(repo, env);
    const cfg = await loadConfig(repo, env);
    expect(ran()).toBe(true);
    expect(cfg.settings.approved_mcp_servers).toBeUndefined();
    expect(Object.keys(cfg.settings.approved_configs ?? {})).toEqual([join(repo, "larik.config.ts")]);
    expect(cfg.notices).toEqual([
      'larik.config.ts: ignored "approved_mcp_servers", "approved_configs": approvals are read only from the private project file',
    ]);
  });

  it("is found from a subdirectory up to the git root, never above it", async () => {
    const sub = join(repo, "a", "b");
    mkdirSync(sub, { recursive: true });
    const file = projectConfig();
    expect(await findProjectConfig(sub, env)).toBe(file);
    const cfg = await loadConfig(sub, env);
    expect(cfg.notices[0]).toMatch(/^\.\.\/\.\.\/larik\.config\.ts not loaded/);

    const inner = join(base, "outer", "inner");
    mkdirSync(inner, { recursive: true });
    execFileSync("git", ["init", "-q", inner]);
    write(join(base, "outer", "larik.config.ts"), "export default {};\n");
    expect(await findProjectConfig(inner, env)).toBeUndefined();
    expect(await approveProjectConfig(inner, env)).toBeUndefined();
  });

  it("refuses an approval whose reviewed hash is stale", async () => {
    projectConfig();
    await expect(approveProjectConfig(repo, env, { hash: "0".repeat(64) })).rejects.toThrow(/changed while you were reviewing it/);
    expect(existsSync(privateProjectFile(repo, env))).toBe(false);
  });

  it("a failing approved project config is skipped with a notice, not an error", async () => {
    const flag = join(base, "fail-now");
    write(join(repo, "larik.config.ts"), `import { existsSync } from "node:fs";\nif (existsSync(${JSON.stringify(flag)})) throw new Error("boom");\nexport default {};\n`);
    await approveProjectConfig(repo, env);
    write(flag, "");
    const cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual(["larik.config.ts: failed to load: boom (config not loaded)"]);
  });

  it("run from the personal config folder, the personal larik.config.ts is loaded once, as personal, and asks for no approval", async () => {
    const file = write(join(cfgDir(), "larik.config.ts"), `export default { plugins: [{ name: "mine", setup() {} }] };\n`);
    expect(await findProjectConfig(cfgDir(), env)).toBeUndefined();
    const cfg = await loadConfig(cfgDir(), env);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["mine"]);
    expect(cfg.notices).toEqual([]);
    expect(cfg.configFiles).toEqual([file]);
  });

  it("combines with the personal config: plugins in order, project preset wins, disable adds up", async () => {
    write(join(cfgDir(), "larik.config.ts"), `export default { plugins: [{ name: "mine", setup() {} }], preset: [{ name: "p1", setup() {} }], disable: ["x"] };\n`);
    write(join(repo, "larik.config.ts"), `export default { plugins: [{ name: "theirs", setup() {} }], preset: [{ name: "p2", setup() {} }], disable: ["y"] };\n`);
    await approveProjectConfig(repo, env);
    const cfg = await loadConfig(repo, env);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["mine", "theirs"]);
    expect(cfg.preset?.map((p) => p.name)).toEqual(["p2"]);
    expect(cfg.disable).toEqual(["x", "y"]);
  });
});

describe("what a project config approval pins", () => {
  /** A project whose config loads files every way jiti and Node load them, plus a package and a file outside. */
  function projectLoadingFiles(): string[] {
    write(join(base, "outside.ts"), `export default "outside";\n`);
    write(join(repo, "node_modules", "some-pkg", "package.json"), JSON.stringify({ name: "some-pkg", main: "index.js" }));
    write(join(repo, "node_modules", "some-pkg", "index.js"), `module.exports = "pkg";\n`);
    write(
      join(repo, "larik.config.ts"),
      `import { defineConfig } from "larik";
import { greeting } from "./helpers.ts";
import pkg from "some-pkg";
import outside from ${JSON.stringify(join(base, "outside.ts"))};
export default defineConfig({ plugins: ["./lp/p.ts", "./lp/q.mjs"], my_option: greeting + pkg + outside });
`,
    );
    write(join(repo, "helpers.ts"), `import deep from "./lib/deep.mjs";\nimport data from "./lib/data.json";\nimport legacy from "./lib/legacy.cjs";\nexport const greeting: string = deep + data.word + legacy;\n`);
    write(join(repo, "lib", "deep.mjs"), `import deeper from "./deeper.mjs";\nexport default "deep" + deeper;\n`);
    write(join(repo, "lib", "deeper.mjs"), `export default "!";\n`);
    write(join(repo, "lib", "data.json"), `{ "word": "w" }\n`);
    write(join(repo, "lib", "legacy.cjs"), `module.exports = require("./legacy2.cjs");\n`);
    write(join(repo, "lib", "legacy2.cjs"), `module.exports = "old";\n`);
    write(join(repo, "lp", "p.ts"), `import { definePlugin } from "larik";\nimport { tag } from "./p-dep.ts";\nimport "vendored";\nexport default definePlugin({ name: "p" + tag, setup() {} });\n`);
    write(join(repo, "lp", "p-dep.ts"), `export const tag = "";\n`);
    // a node_modules directory committed to the repository: its code, not an installed package
    write(join(repo, "lp", "node_modules", "vendored", "package.json"), JSON.stringify({ name: "vendored", main: "index.js" }));
    write(join(repo, "lp", "node_modules", "vendored", "index.js"), `module.exports = {};\n`);
    execFileSync("git", ["add", "lp/node_modules/vendored"], { cwd: repo });
    write(join(repo, "lp", "q.mjs"), `import "./q-dep.mjs";\nexport default { name: "q", setup() {} };\n`);
    write(join(repo, "lp", "q-dep.mjs"), `export {};\n`);
    return [
      "helpers.ts",
      "lib/data.json",
      "lib/deep.mjs",
      "lib/deeper.mjs",
      "lib/legacy.cjs",
      "lib/legacy2.cjs",
      "lp/node_modules/vendored/index.js",
      "lp/p-dep.ts",
      "lp/p.ts",
      "lp/q-dep.mjs",
      "lp/q.mjs",
    ];
  }

  it("every project file it loads, however loaded, but no installed package or outside file; a change to one skips it, naming the file", async () => {
    const loaded = projectLoadingFiles();
    const approved = await approveProjectConfig(repo, env);
    expect(approved!.files).toEqual(loaded.map((f) => join(repo, f)));
    let cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual([]);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["p", "q"]);
    expect(cfg.settings.my_option).toBe("deep!woldpkgoutside");

    for (const f of loaded) {
      const before = readFileSync(join(repo, f), "utf8");
      writeFileSync(join(repo, f), `${before}\n`);
      cfg = await loadConfig(repo, env);
      expect(cfg.notices).toEqual([`larik.config.ts not loaded: ${f}, which it loads, changed since you approved it; review it, then run \`larik config approve\``]);
      expect(cfg.plugins).toEqual([]);
      expect(cfg.settings.my_option).toBeUndefined();
      writeFileSync(join(repo, f), before);
    }
    // not pinned: a package installed under node_modules, a file outside the project
    writeFileSync(join(repo, "node_modules", "some-pkg", "index.js"), `module.exports = "PKG";\n`);
    writeFileSync(join(base, "outside.ts"), `export default "OUTSIDE";\n`);
    cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual([]);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["p", "q"]);

    rmSync(join(repo, "lp", "p-dep.ts"));
    writeFileSync(join(repo, "lib", "deeper.mjs"), `export default "?";\n`);
    cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual([
      "larik.config.ts not loaded: lib/deeper.mjs, which it loads, changed since you approved it (and 1 more); review it, then run `larik config approve`",
    ]);
  });

  it("outside a git repository, pins what it loads under node_modules too (nothing tells an install from the project's code)", async () => {
    const dir = join(base, "plain");
    write(join(dir, "node_modules", "some-pkg", "package.json"), JSON.stringify({ name: "some-pkg", main: "index.js" }));
    write(join(dir, "node_modules", "some-pkg", "index.js"), `module.exports = "pkg";\n`);
    write(join(dir, "larik.config.ts"), `import pkg from "some-pkg";\nexport default { my_option: pkg };\n`);
    const approved = await approveProjectConfig(dir, env);
    expect(approved!.files).toEqual([join(dir, "node_modules", "some-pkg", "index.js")]);
    writeFileSync(join(dir, "node_modules", "some-pkg", "index.js"), `module.exports = "PKG";\n`);
    const cfg = await loadConfig(dir, env);
    expect(cfg.notices).toEqual([
      "larik.config.ts not loaded: node_modules/some-pkg/index.js, which it loads, changed since you approved it; review it, then run `larik config approve`",
    ]);
  });

  it("names a pinned file that is gone", async () => {
    projectConfig();
    teamPlugin();
    await approveProjectConfig(repo, env);
    rmSync(join(repo, "tools", "team.ts"));
    const cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual(["larik.config.ts not loaded: tools/team.ts, which it loads, is gone since you approved it; review it, then run `larik config approve`"]);
  });

  it("an approval of the older form (the config's hash alone) asks again", async () => {
    const file = projectConfig();
    teamPlugin();
    write(privateProjectFile(repo, env), JSON.stringify({ approved_configs: { [file]: hashConfigContent(readFileSync(file)) } }));
    const cfg = await loadConfig(repo, env);
    expect(ran()).toBe(false);
    expect(cfg.plugins).toEqual([]);
    expect(cfg.notices).toEqual([
      "larik.config.ts not loaded: it was approved by an older Larik, which did not pin the files it loads; review them too, then run `larik config approve` again",
    ]);
  });

  it("an approval without folder listings (an older Larik's) asks again", async () => {
    const file = projectConfig();
    teamPlugin();
    await approveProjectConfig(repo, env);
    const saved = JSON.parse(readFileSync(privateProjectFile(repo, env), "utf8"));
    delete saved.approved_configs[file].dirs;
    write(privateProjectFile(repo, env), JSON.stringify(saved));
    const cfg = await loadConfig(repo, env);
    expect(cfg.plugins).toEqual([]);
    expect(cfg.notices).toEqual([
      "larik.config.ts not loaded: it was approved by an older Larik, which did not pin the folders it loads from; review them too, then run `larik config approve` again",
    ]);
  });

  it("a malformed approval in the private file stops Larik with one line naming it", async () => {
    const file = projectConfig();
    write(privateProjectFile(repo, env), JSON.stringify({ approved_configs: { [file]: { sha256: 1 } } }));
    const err = await loadConfig(repo, env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/: "approved_configs\..*larik\.config\.ts": expected \{sha256, files\} as `larik config approve` records it, got an object$/);
    expect(ran()).toBe(false);
  });

  it("is refused while the config fails to load", async () => {
    write(join(repo, "larik.config.ts"), `throw new Error("boom");\n`);
    await expect(approveProjectConfig(repo, env)).rejects.toThrow(/^larik\.config\.ts: failed to load: boom; fix it, then run `larik config approve`$/);
    expect(existsSync(privateProjectFile(repo, env))).toBe(false);
  });

  it("is refused while the config names a plugin module that does not load", async () => {
    write(join(repo, "larik.config.ts"), `export default { plugins: ["./tools/team.ts", "./later.ts"] };\n`);
    teamPlugin();
    const err = await approveProjectConfig(repo, env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/^larik\.config\.ts: plugin "\.\/later\.ts" skipped: .*, so it is not approved: fix it, then run `larik config approve`$/);
    expect(existsSync(privateProjectFile(repo, env))).toBe(false);
  });

  it("is refused in a process that loaded the config already", async () => {
    projectConfig();
    teamPlugin();
    await approveProjectConfig(repo, env);
    await expect(approveProjectConfig(repo, env)).rejects.toThrow(
      "larik.config.ts: this process has loaded it before, and Node does not show again the modules it kept from then: run `larik config approve` in a new process",
    );
  });
});

describe("docs/config.md example", () => {
  it("loads as written and its plugins set up in a host", async () => {
    const doc = readFileSync(join(here, "..", "docs", "config.md"), "utf8");
    const blocks = [...doc.matchAll(/```ts\n(\/\/ ~\/\.config\/larik\/([\w.-]+)\n[\s\S]*?)```/g)];
    expect(blocks.map((b) => b[2])).toEqual(["larik.config.ts", "word-count.ts"]);
    for (const b of blocks) write(join(cfgDir(), b[2]!), b[1]!);
    write(join(repo, "notes.txt"), "one two three\n");

    const cfg = await loadConfig(repo, env);
    expect(cfg.notices).toEqual([]);
    expect(cfg.plugins.map((p) => p.name)).toEqual(["greet", "word-count"]);
    expect(cfg.disable).toEqual(["mcp"]);
    expect(cfg.settings.effort).toBe("high");
    expect(cfg.settings.permissions).toEqual({ allow: ["word_count"], deny: ["bash(rm -rf *)"] });

    const host = await Host.create({ plugins: cfg.plugins, cwd: repo, settings: cfg.settings, env });
    try {
      expect(host.failed).toEqual([]);
      expect(host.notices).toEqual([`greet: hello from ${host.cwd}`]);
      const tool = host.tools.get("word_count");
      expect(tool).toBeDefined();
      const out = await tool!.run({ path: "notes.txt" } as never, { cwd: repo } as never);
      expect(out).toMatchObject({ content: "notes.txt: 3 words" });
    } finally {
      await host.dispose();
    }
  });
});
