/**
 * cli/code-cache.ts: a CommonJS bundle run through V8's code cache; cli/headless-files.ts: the
 * headless build's two files, the second loaded on demand; and the built files that depend on
 * them (dist/cli.cjs, dist/headless.cjs, dist/headless-lazy.cjs).
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SourceMap } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CJS_WRAPPER_HEAD, isWrapped } from "../cli/cjs-wrapper.js";
import { codeCacheDir, loadWithCodeCache } from "../cli/code-cache.js";
import { loadHeadless } from "../cli/headless-files.js";

const root = resolve(import.meta.dirname, "..");

function bundleDir(): { dir: string; file: string; cache: string } {
  const dir = mkdtempSync(join(tmpdir(), "larik-code-cache-"));
  return { dir, file: join(dir, "bundle.cjs"), cache: join(dir, "cache") };
}

// a builtin through `node:`, one without the prefix, a package, and the CommonJS variables
const RICH = [
  'const path = require("node:path");',
  'const util = require("util");',
  'const { createJiti } = require("jiti");',
  "function add(a, b) { return a + b; }",
  "module.exports = { add, file: __filename, dir: __dirname, sep: path.sep, isJiti: typeof createJiti, inspect: typeof util.inspect };",
  "",
].join("\n");

/**
 * Loads `file` in a fresh node process and saves the cache, as a `larik -p` run does. A fresh
 * process matters: V8 keeps compiled scripts in memory, so a second load in one process would
 * not consult the cache file at all.
 */
function loadInChild(file: string, cache: string | false): { hit: boolean; exports: unknown } {
  const script = join(mkdtempSync(join(tmpdir(), "larik-code-cache-run-")), "run.ts");
  writeFileSync(
    script,
    [
      `import { loadWithCodeCache } from ${JSON.stringify(join(root, "cli", "code-cache.ts"))};`,
      `const r = loadWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(cache)});`,
      "r.save();",
      "process.stdout.write(JSON.stringify({ hit: r.hit, exports: r.exports }));",
      "",
    ].join("\n"),
  );
  const out = spawnSync(process.execPath, ["--import", "jiti/register", script], { cwd: root, encoding: "utf8" });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout) as { hit: boolean; exports: unknown };
}

const cacheFiles = (cache: string) => (existsSync(cache) ? readdirSync(cache).filter((f) => f.endsWith(".bin")) : []);

describe("loadWithCodeCache", () => {
  it("runs the file like require, writes a private cache after the run, and uses it next time", () => {
    const { cache } = bundleDir();
    // packages resolve from the bundle's folder: put it where jiti is installed
    const inProject = join(root, "node_modules", ".cache", `larik-code-cache-${process.pid}.cjs`);
    mkdirSync(join(root, "node_modules", ".cache"), { recursive: true });
    writeFileSync(inProject, RICH);

    const first = loadWithCodeCache(inProject, cache);
    const exp = first.exports as { add(a: number, b: number): number; file: string; dir: string; sep: string; isJiti: string; inspect: string };
    expect(exp.add(2, 3)).toBe(5);
    expect(exp.file).toBe(inProject);
    expect(exp.dir).toBe(join(root, "node_modules", ".cache"));
    expect(exp.sep).toBe("/");
    expect(exp.isJiti).toBe("function");
    expect(exp.inspect).toBe("function");
    expect(first.hit).toBe(false);
    expect(cacheFiles(cache)).toEqual([]); // nothing until the run is over
    first.save();
    const [bin] = cacheFiles(cache);
    expect(bin).toMatch(new RegExp(`^larik-code-cache-${process.pid}\\.cjs-\\d+-\\d+-${process.version}-${process.arch}\\.bin$`));
    expect(statSync(join(cache, bin!)).mode & 0o777).toBe(0o600);
    expect(statSync(cache).mode & 0o777).toBe(0o700);

    const second = loadInChild(inProject, cache);
    expect(second.hit).toBe(true);
    expect((second.exports as typeof exp).isJiti).toBe("function");
    expect(cacheFiles(cache)).toEqual([bin]); // a hit writes nothing new
    rmSync(inProject);
  });

  it("compiles from source when V8 rejects the cache, and replaces it", () => {
    const { file, cache } = bundleDir();
    writeFileSync(file, "module.exports = 42;\n");
    expect(loadInChild(file, cache)).toEqual({ hit: false, exports: 42 });
    expect(loadInChild(file, cache)).toEqual({ hit: true, exports: 42 });
    const [bin] = cacheFiles(cache);
    writeFileSync(join(cache, bin!), "not a V8 code cache");
    expect(loadInChild(file, cache)).toEqual({ hit: false, exports: 42 });
    expect(loadInChild(file, cache)).toEqual({ hit: true, exports: 42 });
  });

  it("compiles a file written already wrapped as it is, in either spelling of the wrapper", () => {
    // wrapped a second time, such a file would only define its function: exports would stay {}
    for (const head of [CJS_WRAPPER_HEAD, "(function(exports,require,module,__filename,__dirname){"]) {
      const { file, cache } = bundleDir();
      writeFileSync(file, `${head}"use strict";module.exports = { head: ${JSON.stringify(head)}, file: __filename };\n});`);
      expect(loadInChild(file, cache)).toEqual({ hit: false, exports: { head, file } });
      expect(loadInChild(file, cache)).toEqual({ hit: true, exports: { head, file } });
    }
    const { file } = bundleDir();
    writeFileSync(file, "module.exports = 5;\n");
    expect(isWrapped(readFileSync(file, "latin1"))).toBe(false);
    expect(loadWithCodeCache(file, false).exports).toBe(5);
  });

  it("uses a cache file larger than the bundle (one buffer serves both reads)", () => {
    const { file, cache } = bundleDir();
    writeFileSync(file, "module.exports = 3;\n");
    expect(loadInChild(file, cache)).toEqual({ hit: false, exports: 3 });
    const [bin] = cacheFiles(cache);
    expect(statSync(join(cache, bin!)).size).toBeGreaterThan(statSync(file).size);
    expect(loadInChild(file, cache)).toEqual({ hit: true, exports: 3 });
  });

  it("with saveAfterFirstRequest, writes the cache once the first HTTP request is sent, before the run ends", async () => {
    const { dir, file, cache } = bundleDir();
    // the bundle sends one request and waits for its answer; the server answers only once it has
    // seen the cache file, so a cache written at exit (after the answer) would never be seen
    writeFileSync(
      file,
      [
        'const http = require("node:http");',
        "module.exports = (url) => new Promise((resolve, reject) => {",
        "  const req = http.request(url, { method: 'POST' }, (res) => { let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => resolve(b)); });",
        "  req.on('error', reject); req.end('hello');",
        "});",
        "",
      ].join("\n"),
    );
    let sawCache = false;
    const server = createServer((req, res) => {
      req.resume();
      const deadline = Date.now() + 10_000;
      const poll = () => {
        if (cacheFiles(cache).length) {
          sawCache = true;
          res.end("cached");
        } else if (Date.now() > deadline) res.end("no cache");
        else setTimeout(poll, 20);
      };
      poll();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const script = join(dir, "run.ts");
    writeFileSync(
      script,
      [
        `import { loadWithCodeCache, saveAfterFirstRequest } from ${JSON.stringify(join(root, "cli", "code-cache.ts"))};`,
        `const r = loadWithCodeCache(${JSON.stringify(file)}, ${JSON.stringify(cache)});`,
        "saveAfterFirstRequest(r);",
        `process.stdout.write(await (r.exports as (u: string) => Promise<string>)(${JSON.stringify(url)}));`,
        "",
      ].join("\n"),
    );
    const out = await new Promise<string>((resolve, reject) => {
      let text = "";
      const child = spawn(process.execPath, ["--import", "jiti/register", script], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
      child.stdout.on("data", (d) => (text += d));
      child.on("error", reject);
      child.on("close", () => resolve(text));
    });
    server.close();
    expect(out).toBe("cached");
    expect(sawCache).toBe(true);
    expect(loadInChild(file, cache).hit).toBe(true);
  });

  it("keys the cache by the bundle's size and mtime, and drops the caches of earlier builds", () => {
    const { file, cache } = bundleDir();
    writeFileSync(file, "module.exports = 1;\n");
    loadWithCodeCache(file, cache).save();
    const [old] = cacheFiles(cache);
    writeFileSync(file, "module.exports = 22;\n");
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    expect(loadInChild(file, cache)).toEqual({ hit: false, exports: 22 });
    const now = cacheFiles(cache);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(old);
  });

  it("uses no cache folder that others can write to", () => {
    const { file, cache } = bundleDir();
    writeFileSync(file, "module.exports = 7;\n");
    mkdirSync(cache, { mode: 0o700 });
    chmodSync(cache, 0o777);
    const r = loadWithCodeCache(file, cache);
    expect(r.exports).toBe(7);
    r.save();
    expect(cacheFiles(cache)).toEqual([]);
  });

  it("with false, runs without a cache and writes nothing", () => {
    const { dir, file } = bundleDir();
    writeFileSync(file, "module.exports = 'plain';\n");
    const r = loadWithCodeCache(file, false);
    expect(r.exports).toBe("plain");
    expect(r.hit).toBe(false);
    r.save();
    expect(readdirSync(dir)).toEqual(["bundle.cjs"]);
  });

  it("lets an error thrown while the bundle loads through", () => {
    const { file, cache } = bundleDir();
    writeFileSync(file, "throw new Error('broken bundle');\n");
    expect(() => loadWithCodeCache(file, cache)).toThrow("broken bundle");
  });

  it("lives under $XDG_CACHE_HOME/larik/v8, else ~/.cache/larik/v8", () => {
    expect(codeCacheDir({ XDG_CACHE_HOME: "/x/cache", HOME: "/home/u" })).toBe("/x/cache/larik/v8");
    expect(codeCacheDir({ HOME: "/home/u" })).toBe("/home/u/.cache/larik/v8");
  });
});

describe("loadHeadless", () => {
  // a start file and its lazy file, as build/headless-split.ts writes them: the start file's
  // module `counter` is shared, its import of `plugins/x/lazy.ts` goes to the lazy file
  function split(): { file: string; lazyFile: string; cache: string } {
    const { dir, file, cache } = bundleDir();
    writeFileSync(
      file,
      [
        "const counter = { n: 0 };",
        'exports.sharedModule = (id) => { if (id === "kernel/counter.ts") return { counter }; throw new Error("no shared module " + id); };',
        'exports.main = () => { const lazy = require("larik-lazy:plugins/x/lazy.ts"); lazy.bump(); lazy.bump(); return { n: counter.n, same: lazy.counter() === counter }; };',
        "",
      ].join("\n"),
    );
    const lazyFile = join(dir, "bundle-lazy.cjs");
    writeFileSync(
      lazyFile,
      [
        'const shared = require("larik-shared:kernel/counter.ts");',
        'const modules = { "plugins/x/lazy.ts": { bump: () => { shared.counter.n++; }, counter: () => shared.counter } };',
        'exports.load = (id) => modules[id] ?? (() => { throw new Error("no module " + id); })();',
        "",
      ].join("\n"),
    );
    return { file, lazyFile, cache };
  }

  it("reads the lazy file at the first import that needs it, and both use the start file's module", () => {
    const { file, lazyFile, cache } = split();
    const files = loadHeadless(file, cache);
    // not read yet: no start of a run pays for it
    rmSync(lazyFile);
    expect(() => (files.start.exports as { main(): unknown }).main()).toThrow(/ENOENT.*bundle-lazy\.cjs/);
    const again = split();
    const loaded = loadHeadless(again.file, again.cache);
    expect((loaded.start.exports as { main(): unknown }).main()).toEqual({ n: 2, same: true });
  });

  it("gives the lazy file a code cache of its own, written by saveLazy, and none when it was not loaded", () => {
    const { file, cache } = split();
    const unused = loadHeadless(file, cache);
    unused.start.save();
    unused.saveLazy();
    expect(cacheFiles(cache)).toEqual([expect.stringMatching(/^bundle\.cjs-/)]);
    const used = loadHeadless(file, cache);
    (used.start.exports as { main(): unknown }).main();
    used.saveLazy();
    expect(cacheFiles(cache).sort()).toEqual([expect.stringMatching(/^bundle-lazy\.cjs-/), expect.stringMatching(/^bundle\.cjs-/)]);
  });
});

describe("the built launcher and headless bundle", () => {
  const dist = (f: string) => join(root, "dist", f);

  it("dist/cli.cjs is the package's bin and a CommonJS script", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: { larik: string } };
    expect(pkg.bin.larik).toBe("dist/cli.cjs");
    const text = readFileSync(dist("cli.cjs"), "utf8");
    expect(text.startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(text).toContain('import("./main.js")');
    expect(existsSync(dist("main.js"))).toBe(true);
  });

  it("dist/headless.cjs is ASCII, calls no import(), and leaves the TUI and the server out", () => {
    const text = readFileSync(dist("headless.cjs"), "latin1");
    expect(/[^\x00-\x7f]/.test(text)).toBe(false); // read as latin1 by the loader
    // vm.Script cannot run import() without an experimental flag; `.import(` (jiti's method) is fine
    expect(text.match(/(?<![.\w$])import\(/g)).toBeNull();
    expect(text).not.toMatch(/require\("h3"\)|react-reconciler|useInput/);
  });

  it("dist/headless-lazy.cjs holds the plugins' modules a -p start does not need, and no module of dist/headless.cjs", () => {
    const sources = (f: string) =>
      new Set((JSON.parse(readFileSync(dist(`${f}.map`), "utf8")) as { sources: string[] }).sources.filter((x) => /^\.\.\/(kernel|plugins|cli|node_modules)\//.test(x)));
    const start = sources("headless.cjs");
    const lazy = sources("headless-lazy.cjs");
    // what a -p run of the main job imports before its first request stays in the start file
    for (const m of ["headless/run.ts", "sessions-jsonl/store.ts", "openai-compatible/provider.ts", "anthropic/provider.ts", "core-tools/read.ts", "core-tools/bash.ts"]) expect(start).toContain(`../plugins/${m}`);
    // and so does the core tools' work: each tool's module holds only what the model sees
    const toolWork = ["read-core.ts", "write-core.ts", "edit-core.ts", "glob-core.ts", "grep-core.ts", "bash-core.ts", "shells.ts", "shell.ts", "walk.ts", "fileio.ts"].map((f) => `core-tools/${f}`);
    for (const m of ["mcp/live.ts", "hooks/engine.ts", "gemini/provider.ts", "openai/provider.ts", "skills/render.ts", "commands/init.ts", ...toolWork]) {
      expect(lazy).toContain(`../plugins/${m}`);
      expect(start).not.toContain(`../plugins/${m}`);
    }
    // nor in either file: what the front ends that -p never starts load when they run
    for (const m of ["tui/run.ts", "tui/session-open.ts", "tui/history.ts", "server/serve.ts"]) {
      expect(start).not.toContain(`../plugins/${m}`);
      expect(lazy).not.toContain(`../plugins/${m}`);
    }
    // one instance of each module: the lazy file takes the kernel, zod and the rest from the start file
    expect([...lazy].filter((x) => start.has(x))).toEqual([]);
    expect([...lazy].filter((x) => !x.startsWith("../plugins/") && x !== "../cli/headless-lazy.ts")).toEqual([]);
    const text = readFileSync(dist("headless-lazy.cjs"), "latin1");
    expect(/[^\x00-\x7f]/.test(text)).toBe(false);
    expect(text.match(/(?<![.\w$])import\(/g)).toBeNull();
    expect(isWrapped(text)).toBe(true);
    expect(text).toContain('require("larik-shared:kernel/index.ts")');
  });

  it("dist/headless.cjs is written wrapped, with short local names but its functions' own, and a map to the sources", () => {
    const text = readFileSync(dist("headless.cjs"), "latin1");
    expect(isWrapped(text)).toBe(true);
    expect(text.trimEnd()).toMatch(/\}\);(\/\/# sourceMappingURL=headless\.cjs\.map)?$/);
    // stack traces name the function
    const at = text.indexOf("function buildSystemPrompt(");
    expect(at).toBeGreaterThan(0);
    const map = new SourceMap(JSON.parse(readFileSync(dist("headless.cjs.map"), "utf8")) as never);
    const before = text.slice(0, at);
    const line = before.split("\n").length - 1;
    const column = at - (before.lastIndexOf("\n") + 1) + "function ".length;
    const entry = map.findEntry(line, column) as { originalSource?: string; name?: string };
    expect(entry.originalSource).toMatch(/kernel\/prompt\.ts$/);
    expect(entry.name).toBe("buildSystemPrompt");
  });
});
