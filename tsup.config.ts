import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { builtinModules, createRequire } from "node:module";
import { defineConfig, type Options } from "tsup";
import { CJS_WRAPPER_HEAD, CJS_WRAPPER_TAIL } from "./cli/cjs-wrapper.js";
import { lazyFileSplit, SHARED_MODULES_NAMESPACE, startFileSplit, type SplitOptions } from "./build/headless-split.js";

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
 * The source of a module that stands for another and loads it at the first call: one function
 * per name in `names`, calling that export of what `load` (an expression) evaluates to, once.
 * Used by {@link lazyBuiltins} and {@link lazyPackages}. Each is named `lazy_<name>`, since some
 * export names (`null`, `default`, `enum`) cannot name a function, and exported as `<name>`.
 */
function facadeSource(load: string, names: string[]): string {
  return [
    `let m; const load = () => (m ??= ${load});`,
    ...names.map((n) => `function lazy_${n}(...a) { return load()[${JSON.stringify(n)}](...a); }\nexport { lazy_${n} as ${n} };`),
  ].join("\n");
}

/**
 * For the headless bundle only: node:crypto, node:child_process, node:fs/promises and node:zlib
 * load on first use, not when the bundle starts. Many modules import them, but a `-p` run needs
 * none before its first model request, and loading them costs ~8 ms there (fs/promises brings
 * readline and the fs watchers). Each import resolves to a module of functions that load the
 * real one on first call; only functions are offered (names read from this Node at build time),
 * so importing anything else from these fails the build rather than the run.
 */
const LAZY_BUILTINS = ["crypto", "child_process", "fs/promises", "zlib"];
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
      return { contents: facadeSource(`process.getBuiltinModule("node:${args.path}")`, fns), loader: "js" };
    });
  },
};

/**
 * The names the source files under `dirs` use from `pkg`: `ns.name` after `import * as ns`, and
 * named imports (`default` for a default import). Tests are left out. Read by {@link lazyPackages},
 * whose facades offer only these, as plain functions: a use they would not serve fails the build,
 * here (the namespace as a value, a property of the default export) or in esbuild (a name not
 * offered, `import-is-undefined`).
 * @throws Error naming the file and the use the facade cannot serve
 */
function namesUsedFrom(pkg: string, dirs: string[]): Set<string> {
  const names = new Set<string>();
  const from = `from "${pkg}"`;
  for (const dir of dirs) {
    for (const file of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts") || file.endsWith(".test.ts") || /(^|\/)test\//.test(file)) continue;
      const src = readFileSync(join(dir, file), "utf8");
      if (!src.includes(from)) continue;
      const code = src.replace(/^import .*$/gm, "").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "");
      const refuse = (what: string) => {
        throw new Error(`${join(dir, file)}: ${what}; the headless build loads ${pkg} on first use and offers only calls of its functions (tsup.config.ts, lazyPackages)`);
      };
      for (const m of src.matchAll(/^import (?!type )(.*) from "([^"]+)";$/gm)) {
        if (m[2] !== pkg) continue;
        const ns = /\* as (\w+)/.exec(m[1]!)?.[1];
        if (ns) {
          for (const use of code.matchAll(new RegExp(`(?<![\\w.])${ns}\\s*\\.\\s*(\\w+)`, "g"))) names.add(use[1]!);
          if (new RegExp(`(?<![\\w.])${ns}\\b(?!\\s*\\.)`).test(code)) refuse(`"${ns}" is used as a value`);
        }
        const named = /\{([^}]*)\}/.exec(m[1]!)?.[1];
        if (named) for (const n of named.split(",")) if (n.trim() && !n.trim().startsWith("type ")) names.add(n.trim().split(/\s+as\s+/)[0]!);
        const dflt = /^(\w+)(,|$)/.exec(m[1]!)?.[1];
        if (dflt) {
          names.add("default");
          if (new RegExp(`(?<![\\w.])${dflt}\\s*\\.\\s*\\w`).test(code)) refuse(`a property of "${dflt}" is read`);
        }
      }
    }
  }
  return names;
}

/**
 * For the headless bundle only: zod and picomatch load at their first use, not when the bundle
 * starts. A `-p` run validates nothing and matches no glob before its first model request (the
 * kernel's schemas are built lazily, kernel/kit/lazy-schema.ts), and setting up zod's ~30 modules and
 * picomatch's tables cost it ~4 ms there, most of it allocation: enough that the young
 * generation filled up once more before the request was sent. Our imports of these packages
 * resolve to a module of functions that load the real one on first call, through a `require`,
 * which makes esbuild wrap the package in an init function. The real module is re-exported with
 * only the functions our sources use ({@link namesUsedFrom}), so that the rest stays out as before.
 */
const LAZY_PACKAGES = ["zod/mini", "zod/v4/locales/en.js", "picomatch"];

const facades = new Map<string, string[]>();

/**
 * The names a lazy package's facade offers: the functions our sources use ({@link namesUsedFrom}).
 * Asked by the facade, the trimmed real module and build/headless-split.ts: worked out once.
 */
function facadeNames(pkg: string): string[] {
  let names = facades.get(pkg);
  if (!names) facades.set(pkg, (names = functionsUsedFrom(pkg)));
  return names;
}

function functionsUsedFrom(pkg: string): string[] {
  const real = createRequire(import.meta.url)(pkg) as Record<string, unknown>;
  // a CommonJS package's default export is its module.exports
  const value = (n: string) => (n === "default" ? (real.default ?? real) : real[n]);
  // functions only, and not classes (capitalized, like zod's ZodMiniType): a facade function
  // cannot stand for a class in `new` or `instanceof`, so a use of one as a value fails the build
  return [...namesUsedFrom(pkg, ["kernel", "plugins", "cli"])].filter((n) => typeof value(n) === "function" && !/^[A-Z$]/.test(n)).sort();
}

const lazyPackages: Plugin = {
  name: "lazy-packages",
  setup(build) {
    const filter = new RegExp(`^(${LAZY_PACKAGES.map((p) => p.replace(/[./]/g, "\\$&")).join("|")})$`);
    // our files, and the module of build/headless-split.ts that shares these with the lazy file
    build.onResolve({ filter }, (args) =>
      args.kind === "import-statement" && (args.namespace === "file" || args.namespace === SHARED_MODULES_NAMESPACE) && !/node_modules/.test(args.importer)
        ? { path: args.path, namespace: "lazy-package" }
        : undefined,
    );
    // the facade: a function per used name that calls the real one
    build.onLoad({ filter: /.*/, namespace: "lazy-package" }, (args) => ({
      contents: facadeSource(`require(${JSON.stringify(`lazy-package-real:${args.path}`)}).fns`, facadeNames(args.path)),
      loader: "js",
      resolveDir: process.cwd(),
    }));
    // the real module, trimmed to the used names so that esbuild can leave the rest out, as one
    // object: a module's exports become a namespace object with a getter each, built at start
    build.onResolve({ filter: /^lazy-package-real:/ }, (args) => ({ path: args.path.slice("lazy-package-real:".length), namespace: "lazy-package-real" }));
    build.onLoad({ filter: /.*/, namespace: "lazy-package-real" }, async (args) => {
      const real = await build.resolve(args.path, { kind: "import-statement", resolveDir: process.cwd(), namespace: "lazy-package-real" });
      const names = facadeNames(args.path);
      const locals = names.map((n, i) => `${n} as f${i}`).join(", ");
      return {
        contents: `import { ${locals} } from ${JSON.stringify(real.path)};\nexport const fns = { ${names.map((n, i) => `${JSON.stringify(n)}: f${i}`).join(", ")} };`,
        loader: "js",
        resolveDir: process.cwd(),
      };
    });
  },
};

/**
 * For the headless bundle only: kernel/public-api.ts builds the kernel's module object when a
 * config file asks for it, from named imports, instead of an `import * as` namespace. esbuild
 * creates a namespace object, one getter per export, when the bundle starts, even for a module
 * loaded on demand, and for the kernel's ~160 exports that was ~55 KB of the young generation
 * at every start: enough, with the rest, to fill it once more before the first model request.
 * The export names come from esbuild's metafile of kernel/index.ts; a test compares the object
 * a config file gets with the kernel's exports.
 */
const kernelModuleOnDemand: Plugin = {
  name: "kernel-module-on-demand",
  setup(build) {
    build.onLoad({ filter: /[\\/]kernel[\\/]public-api\.ts$/ }, async () => {
      const probe = await build.esbuild.build({
        entryPoints: ["kernel/index.ts"],
        bundle: true,
        write: false,
        format: "esm",
        platform: "node",
        packages: "external",
        metafile: true,
        outdir: "probe",
        logLevel: "silent",
      });
      const names = Object.values(probe.metafile.outputs).flatMap((o) => o.exports);
      return {
        contents: [
          `import { ${names.join(", ")} } from "./index.js";`,
          `export function kernelModule() {`,
          `  return Object.freeze({ __proto__: null, [Symbol.toStringTag]: "Module", ${names.join(", ")} });`,
          `}`,
        ].join("\n"),
        loader: "js",
        resolveDir: join(process.cwd(), "kernel"),
      };
    });
  },
};

/**
 * For the headless bundle only: the interactive TUI and `larik serve` are never started by a
 * `-p` run, so the modules they load on demand (the TUI's app and its session opening, the
 * server) are replaced by one that says so. This keeps Ink (whose module graph has a top-level
 * await, which CommonJS cannot require) and h3 out of it.
 */
const frontEndsLeftOut: Plugin = {
  name: "front-ends-left-out",
  setup(build) {
    build.onResolve({ filter: /^\.\/(run|serve|session-open)\.js$/ }, (args) =>
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

/**
 * What the two files of `larik -p` share (build/headless-split.ts): dist/headless.cjs, what a run
 * needs up to its first model request, and dist/headless-lazy.cjs, the plugins' modules it loads
 * on demand.
 */
const headlessFile: Options = {
  ...commonJsFile,
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
    // a property of a lazy package's facade that it does not offer (see lazyPackages). esbuild
    // cannot scope this to those modules: any import of a missing export fails this build.
    options.logOverride = { ...options.logOverride, "import-is-undefined": "error" };
  },
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
};

/** The split of the headless build into two files (build/headless-split.ts). */
const split: SplitOptions = {
  root: process.cwd(),
  entry: "cli/main.ts",
  plugins: [frontEndsLeftOut],
  bundled: (spec) => noExternal.some((p) => (typeof p === "string" ? p === spec : p.test(spec))),
  facadeNames: (spec) => (LAZY_PACKAGES.includes(spec) ? facadeNames(spec) : undefined),
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
    // `larik -p` runs this CommonJS file, compiled through V8's code cache (cli/code-cache.ts):
    // Node 20 can cache the compiled code of a script but not of an ES module. docs/architecture.md
    ...headlessFile,
    entry: { headless: "cli/main.ts" },
    esbuildPlugins: [frontEndsLeftOut, startFileSplit(split), lazyBuiltins, lazyPackages, kernelModuleOnDemand],
  },
  {
    // the plugins' modules a `-p` run loads on demand, sharing dist/headless.cjs's modules
    // (build/headless-split.ts); cli/headless-lazy.ts is replaced by a generated entry
    ...headlessFile,
    entry: { "headless-lazy": "cli/headless-lazy.ts" },
    esbuildPlugins: [lazyFileSplit(split, "cli/headless-lazy.ts")],
  },
]);
