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
  // CommonJS ones (tapable, picomatch) stay external: an ESM bundle cannot require node built-ins.
  noExternal: ["zod", "eventsource-parser"],
  // tsup 8.5 sets baseUrl in its dts build; TypeScript 6 rejects it unless silenced (STACK.md)
  dts: { entry: { index: "index.ts" }, compilerOptions: { ignoreDeprecations: "6.0" } },
});
