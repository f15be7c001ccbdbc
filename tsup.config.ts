import { readFileSync } from "node:fs";
import { defineConfig } from "tsup";

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
  // lacks: the banner gives every chunk a real `require` (esbuild's shim uses it when present).
  noExternal: [/^zod\/mini$/, /^zod\/v4\/locales\/en\.js$/, "eventsource-parser", "tapable", "picomatch"],
  // Whitespace and comments are stripped (not identifiers, so stack traces keep their names):
  // V8 pre-parses every byte of a module at import, and the TSDoc is half of the kernel's bytes.
  esbuildOptions(options) {
    options.minifyWhitespace = true;
    options.minifySyntax = true;
    options.charset = "ascii";
  },
  banner: { js: 'import { createRequire as __larikRequire } from "node:module"; const require = __larikRequire(import.meta.url);' },
  // tsup 8.5 sets baseUrl in its dts build; TypeScript 6 rejects it unless silenced (STACK.md)
  dts: { entry: { index: "index.ts" }, compilerOptions: { ignoreDeprecations: "6.0" } },
});
