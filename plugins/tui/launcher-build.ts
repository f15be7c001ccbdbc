/**
 * Builds what the end-to-end tests and `bench/tui.mjs` run, with tsup into fresh directories
 * under `node_modules/.cache`, the way `npm run build` bundles the real CLI: the CLI with `tui`
 * in its default preset (until presets/default.ts carries it), and the benchmark's in-process
 * harness.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");

/**
 * Bundles `entries` (output name → absolute source path) into a fresh directory and returns
 * that directory. Dependencies stay external, as in `npm run build`. `redirect` maps a module
 * path (a regular expression on the import specifier) to another file.
 */
async function bundle(entries: Record<string, string>, redirect?: { filter: RegExp; to: string }): Promise<string> {
  const cache = join(root, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  // builds of earlier runs; an hour old cannot belong to a run still going
  for (const d of readdirSync(cache)) {
    const p = join(cache, d);
    if (d.startsWith("larik-tui-") && Date.now() - statSync(p).mtimeMs > 3_600_000) rmSync(p, { recursive: true, force: true });
  }
  const out = mkdtempSync(join(cache, "larik-tui-"));
  const { build } = await import("tsup");
  await build({
    entry: entries,
    format: ["esm"],
    target: "node20",
    platform: "node",
    outDir: out,
    clean: true,
    splitting: true,
    dts: false,
    config: false,
    silent: true,
    define: { __LARIK_VERSION__: JSON.stringify("0.0.0-tui-test") },
    esbuildPlugins: redirect
      ? [
          {
            name: "redirect",
            setup(b) {
              b.onResolve({ filter: redirect.filter }, () => ({ path: redirect.to }));
            },
          },
        ]
      : [],
  });
  return out;
}

/**
 * Builds the CLI (`cli.ts`, as `npm run build` does) with `tui` appended to its default preset,
 * which is what adding the plugin to presets/default.ts will do. Returns the CLI entry.
 */
async function buildCliWithTui(): Promise<string> {
  const shimDir = mkdtempSync(join(tmpdir(), "larik-tui-preset-"));
  const shim = join(shimDir, "preset-with-tui.ts");
  writeFileSync(
    shim,
    [
      `import preset from ${JSON.stringify(join(root, "presets", "default.ts"))};`,
      `import tui from ${JSON.stringify(join(root, "plugins", "tui", "index.ts"))};`,
      `export default preset.some((p) => p.name === "tui") ? preset : [...preset, tui];`,
      "",
    ].join("\n"),
  );
  try {
    // cli/main.ts imports "../presets/default.js"; the shim imports the source by its .ts path
    return join(await bundle({ cli: join(root, "cli.ts") }, { filter: /presets[\\/]default\.js$/, to: shim }), "cli.js");
  } finally {
    rmSync(shimDir, { recursive: true, force: true });
  }
}

/** Builds bench-harness.tsx and returns the path of its entry. */
export async function buildBenchHarness(): Promise<string> {
  return join(await bundle({ harness: join(root, "plugins", "tui", "bench-harness.tsx") }), "harness.js");
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (/\.tsx?$/.test(e.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** How to start an interactive `larik` with the tui plugin. */
export interface TuiProgram {
  /** The CLI entry to run with node. */
  cli: string;
  /** True when it is `dist/cli.cjs` (its default preset carries `tui`). */
  real: boolean;
}

/**
 * The program to run for an interactive `larik`: `dist/cli.cjs` when it is newer than every
 * source and its default preset lists `tui` (`larik --version` prints the plugins), else a
 * fresh tsup build of the CLI with `tui` appended to the default preset.
 */
export async function tuiProgram(): Promise<TuiProgram> {
  const dist = join(root, "dist", "cli.cjs");
  const sources = Math.max(...["kernel", "plugins", "cli", "presets"].map((d) => newestSource(join(root, d))));
  if (existsSync(dist) && statSync(dist).mtimeMs >= sources) {
    try {
      // run outside the checkout: its example larik.config.ts would print an approval notice into the test run's output
      const v = execFileSync(process.execPath, [dist, "--version"], { cwd: tmpdir(), encoding: "utf8", env: { PATH: process.env.PATH, HOME: "/nonexistent", XDG_CONFIG_HOME: "/nonexistent" } });
      if (/\btui\b/.test(v)) return { cli: dist, real: true };
    } catch {
      // a broken dist: build our own
    }
  }
  return { cli: await buildCliWithTui(), real: false };
}
