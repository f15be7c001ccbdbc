import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { defineConfig, type Options } from "tsup";

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

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

export default defineConfig({
  entry: { cli: "cli.ts", index: "index.ts" },
  format: ["esm"],
  target: "node20",
  platform: "node",
  outDir: "dist",
  clean: true,
  sourcemap: true,
  splitting: true,
  define: { __LARIK_VERSION__: JSON.stringify(pkg.version) },
  // Small pure-JS dependencies on the start-up path are bundled: one parsed chunk loads faster
  // than resolving their hundred-odd files (zod alone is ~100 modules). See bench/startup.mjs.
  // The CommonJS ones (tapable, picomatch) call require() for node built-ins, which an ESM chunk
  // lacks: the plugin below answers those calls with process.getBuiltinModule (Node >= 20.16).
  noExternal: [/^zod\/mini$/, /^zod\/v4\/locales\/en\.js$/, "eventsource-parser", "tapable", "picomatch"],
  // Whitespace and comments are stripped (not identifiers, so stack traces keep their names):
  // V8 pre-parses every byte of a module at import, and the TSDoc is half of the kernel's bytes.
  esbuildOptions(options) {
    options.minifyWhitespace = true;
    options.minifySyntax = true;
    options.charset = "ascii";
  },
  esbuildPlugins: [builtinsForBundledCommonJs],
  // tsup 8.5 sets baseUrl in its dts build; TypeScript 6 rejects it unless silenced (STACK.md)
  dts: { entry: { index: "index.ts" }, compilerOptions: { ignoreDeprecations: "6.0" } },
});
