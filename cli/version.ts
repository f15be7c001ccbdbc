/**
 * `larik --version` on the fast path: the version and the plugins of the default preset are
 * fixed at build time, so no plugin module has to load. When a `larik.config.ts` could change
 * the plugin list, the full CLI answers instead.
 */
import { DEFAULT_PLUGINS } from "../presets/names.js";

// getBuiltinModule rather than `import`, which builds a facade of every export: see cli/code-cache.ts
const { existsSync } = process.getBuiltinModule("node:fs");
const { homedir } = process.getBuiltinModule("node:os");
const { dirname, join } = process.getBuiltinModule("node:path");

/** The package version (tsup replaces `__LARIK_VERSION__`; tests run from source). */
export const VERSION: string = typeof __LARIK_VERSION__ === "string" ? __LARIK_VERSION__ : "0.0.0-dev";
declare const __LARIK_VERSION__: string | undefined;

/**
 * The text `--version` prints: the version, then one line per loaded plugin, in load order, with
 * its description (what it contributes).
 */
export function versionText(plugins: readonly (readonly [name: string, description: string | undefined])[]): string {
  const w = Math.max(0, ...plugins.map(([n]) => n.length));
  const rows = plugins.map(([n, d]) => (d ? `  ${n.padEnd(w)}  ${d}` : `  ${n}`));
  return `larik ${VERSION}\nplugins:\n${rows.join("\n")}\n`;
}

function anyConfigFile(cwd: string, env: NodeJS.ProcessEnv): boolean {
  const cfgHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  if (existsSync(join(cfgHome, "larik", "larik.config.ts"))) return true;
  let dir = cwd;
  for (;;) {
    if (existsSync(join(dir, "larik.config.ts"))) return true;
    if (existsSync(join(dir, ".git"))) return false;
    const up = dirname(dir);
    if (up === dir) return false;
    dir = up;
  }
}

/** The `--version` output when it can be given without loading plugins, else undefined. */
export function fastVersion(argv: string[], cwd = process.cwd(), env = process.env): string | undefined {
  if (argv.length !== 1 || (argv[0] !== "--version" && argv[0] !== "-v")) return undefined;
  if (anyConfigFile(cwd, env)) return undefined;
  return versionText(DEFAULT_PLUGINS);
}
