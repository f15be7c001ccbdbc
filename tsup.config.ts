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
  // tsup 8.5 sets baseUrl in its dts build; TypeScript 6 rejects it unless silenced (STACK.md)
  dts: { entry: { index: "index.ts" }, compilerOptions: { ignoreDeprecations: "6.0" } },
});
