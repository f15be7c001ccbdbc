import { readFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { defineConfig, type Options } from "tsup";
import { CJS_WRAPPER_HEAD, CJS_WRAPPER_TAIL } from "./cli/cjs-wrapper.js";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

/**
 * Resolves `require("util")` (and other built-ins) inside bundled CommonJS packages to a module
 * that returns `process.getBuiltinModule("node:util")`. Without it esbuild's ESM output throws
 * "Dynamic require is not supported"; a `createRequire` banner would work too, but it costs every
 * chunk, `larik --version` included, an import of node:module.
 */
const builtinsForBundledCommonJs: Plugin = {
  name: "builtins-for-bundled-commonjs",
  setup(build) {
    build.onResolve({ filter: /^(node:)?[a-z_]+$/ }, (args) =>
      args.kind === "require-call" && builtinModules.includes(args.path.replace(/^node:/, ""))
        ? { path: args.path.replace(/^node:/, ""), namespace: "builtin-for-cjs" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "builtin-for-cjs" }, (args) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(`node:${args.path}`)});`,
      loader: "js",
    }));
  },
};

/**
 * For the headless bundle only: node:crypto, node:child_process and node:fs/promises load on
 * first use, not when the bundle starts. Many modules import them, but a `-p` run needs none
 * before its first model request, and loading them costs ~8 ms there (fs/promises brings
 * readline and the fs watchers). Each import resolves to a module of functions that load the
 * real one on first call; only functions are offered (names read from this Node at build time),
 * so importing anything else from these three fails the build rather than the run.
 */
const LAZY_BUILTINS = ["crypto", "child_process", "fs/promises"];
const lazyBuiltins: Plugin = {
  name: "lazy-builtins",
  setup(build) {
    const nodeRequire = createRequire(import.meta.url);
    const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join("|")})$`);
    build.onResolve({ filter }, (args) =>
      args.kind === "import-statement" ? { path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => {
      const real = nodeRequire(`node:${args.path}`) as Record<string, unknown>;
      const fns = Object.keys(real).filter((n) => typeof real[n] === "function" && /^[a-z]/.test(n));
      return {
        contents: [
          `let m; const load = () => (m ??= process.getBuiltinModule("node:${args.path}"));`,
          ...fns.map((n) => `export function ${n}(...a) { return load().${n}(...a); }`),
        ].join("\n"),
        loader: "js",
      };
    });
  },
};

/**
 * For the headless bundle only: the interactive TUI and `larik serve` are never started by a
 * `-p` run, so the modules they load on demand are replaced by one that says so. This keeps Ink
 * (whose module graph has a top-level await, which CommonJS cannot require) and h3 out of it.
 */
const frontEndsLeftOut: Plugin = {
  name: "front-ends-left-out",
  setup(build) {
    build.onResolve({ filter: /^\.\/(run|serve)\.js$/ }, (args) =>
      /plugins[\\/](tui|server)[\\/]index\.ts$/.test(args.importer) ? { path: args.path, namespace: "left-out" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "left-out" }, () => ({
      contents: `throw new Error("this front end is not in the headless bundle: run it through dist/cli.cjs without -p");`,
      loader: "js",
    }));
  },
};

/**
 * For dist/cli.cjs: `import("./cli/main.js")` stays a dynamic import of the ES module build's
 * `dist/main.js` rather than a copy of the whole CLI in the launcher.
 */
const mainFromEsmBuild: Plugin = {
  name: "main-from-esm-build",
  setup(build) {
    build.onResolve({ filter: /^\.\/cli\/main\.js$/ }, () => ({ path: "./main.js", external: true }));
  },
};

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
const define = { __LARIK_VERSION__: JSON.stringify(pkg.version) };
// Small pure-JS dependencies on the start-up path are bundled: one parsed chunk loads faster
// than resolving their hundred-odd files (zod alone is ~100 modules). See bench/startup.mjs.
const noExternal = [/^zod\/mini$/, /^zod\/v4\/locales\/en\.js$/, /^@noble\/hashes\//, "eventsource-parser", "tapable", "picomatch"];
// Whitespace and comments are stripped (not identifiers, so stack traces keep their names):
// V8 pre-parses every byte of a module at import, and the TSDoc is half of the kernel's bytes.
const minify: Options["esbuildOptions"] = (options) => {
  options.minifyWhitespace = true;
  options.minifySyntax = true;
  options.charset = "ascii";
};

/** One self-contained CommonJS file in dist/, next to the ES build (which cleans dist/). */
const commonJsFile: Options = {
  format: ["cjs"],
  outExtension: () => ({ js: ".cjs" }),
  target: "node20",
  platform: "node",
  outDir: "dist",
  clean: false,
  sourcemap: true,
  splitting: false,
};

export default defineConfig([
  {
    entry: { main: "cli/main.ts", index: "index.ts" },
    format: ["esm"],
    target: "node20",
    platform: "node",
    outDir: "dist",
    // everything but the CommonJS files, which the builds below write at the same time
    clean: ["!*.cjs", "!*.cjs.map"],
    sourcemap: true,
    splitting: true,
    define,
    // The CommonJS ones (tapable, picomatch) call require() for node built-ins, which an ESM chunk
    // lacks: the plugin above answers those calls with process.getBuiltinModule (Node >= 20.16).
    noExternal,
    esbuildOptions: minify,
    esbuildPlugins: [builtinsForBundledCommonJs],
    // tsup 8.5 sets baseUrl in its dts build; TypeScript 6 rejects it unless silenced (STACK.md)
    dts: { entry: { index: "index.ts" }, compilerOptions: { ignoreDeprecations: "6.0" } },
  },
  {
    // The `larik` command (package.json "bin"): a small CommonJS launcher, see cli.ts.
    ...commonJsFile,
    entry: { cli: "cli.ts" },
    define: { ...define, "import.meta.dirname": "__dirname" },
    esbuildOptions: minify,
    esbuildPlugins: [mainFromEsmBuild],
  },
  {
    // `larik -p` runs this one CommonJS file, compiled through V8's code cache (cli/code-cache.ts):
    // Node 20 can cache the compiled code of a script but not of an ES module. docs/architecture.md
    ...commonJsFile,
    entry: { headless: "cli/main.ts" },
    // keep `node:` in import paths so that the lazy-builtins plugin sees them first
    removeNodeProtocol: false,
    // import.meta.url as the file's path (its one user, the config-file loader, takes either),
    // from the __filename that cli/code-cache.ts passes like Node's own loader: tsup's shim would
    // build a URL at every start
    define: { ...define, "import.meta.url": "__filename" },
    noExternal,
    esbuildOptions(options, ctx) {
      minify?.(options, ctx);
      // A script compiled by vm.Script cannot run import() without an experimental flag, so the
      // packages loaded on demand are required (Node >= 20.19 requires ES modules without a flag).
      options.supported = { ...options.supported, "dynamic-import": false };
    },
    esbuildPlugins: [frontEndsLeftOut, lazyBuiltins],
    // Local names shortened (terser, after esbuild): a fifth fewer bytes to read and to hold as a
    // string at every run (bench/startup.mjs). Function and class names stay, for stack traces;
    // dist/headless.cjs.map maps positions back to the sources.
    minify: "terser",
    terserOptions: {
      compress: false,
      mangle: { keep_fnames: true, keep_classnames: true, reserved: ["exports", "require", "module", "__filename", "__dirname"] },
      format: { ascii_only: true, comments: false },
      // a map of terser's step, which tsup chains onto esbuild's
      sourceMap: true,
    },
    // The file is the function Node's CommonJS loader would wrap it in, so cli/code-cache.ts
    // compiles the bytes it read: wrapping a 0.6 MB source at run time copies it (~4 ms here).
    banner: { js: CJS_WRAPPER_HEAD },
    footer: { js: CJS_WRAPPER_TAIL },
  },
]);
