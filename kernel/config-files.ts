/**
 * `larik.config.ts` files (DESIGN.md "Layout"; trust per LARIK-REFERENCE §26 and invariant 7):
 * finding them, hashing them, evaluating them with jiti, and turning plugin specs into plugin
 * values. What an approval pins is config-approval.ts. jiti is imported only when a config file
 * exists.
 */
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Jiti } from "jiti";
import { isPlugin, type Plugin } from "./plugin.js";
import { oneLine } from "./kit/one-line.js";
import type { LarikConfig, PluginSpec } from "./config.js";
import { cacheDir, canonicalDir, configDir, gitRoot } from "./paths.js";

/** File names looked for, first found wins in each directory. */
const CONFIG_FILE_NAMES = ["larik.config.ts", "larik.config.mts", "larik.config.js", "larik.config.mjs"] as const;

async function firstExisting(dir: string): Promise<string | undefined> {
  for (const name of CONFIG_FILE_NAMES) {
    const p = join(dir, name);
    if (!existsSync(p)) continue; // the usual case, and a check costs less than a thrown error
    try {
      // sync on purpose: a handful of misses per start, each one syscall instead of a thread-pool trip
      accessSync(p, constants.R_OK);
      if (statSync(p).isFile()) return p;
    } catch {
      // not there (or unreadable): try the next name
    }
  }
  return undefined;
}

/** The personal config file that exists (any of {@link CONFIG_FILE_NAMES}), or undefined. */
export async function findPersonalConfig(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  return firstExisting(configDir(env));
}

/**
 * The project's config file: the nearest `larik.config.ts` (or .mts/.js/.mjs) in `cwd` or a
 * parent, stopping at the git root (only `cwd` outside a repository). Returns its canonical
 * absolute path, or undefined. The personal config directory is never treated as a project.
 */
export async function findProjectConfig(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const personalDir = canonicalDir(configDir(env));
  let dir = canonicalDir(cwd);
  const root = gitRoot(dir) ?? dir;
  for (;;) {
    if (dir !== personalDir) {
      const hit = await firstExisting(dir);
      if (hit) return hit;
    }
    if (dir === root) return undefined;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** sha256 hex of a config file's bytes: what an approval pins (`approved_configs`). */
export function hashConfigContent(content: string | Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}

/** A config file read once: its text and hash, so the bytes approved are the bytes evaluated. */
export interface ConfigSource {
  /** Absolute path. */
  file: string;
  content: string;
  /** sha256 hex of `content`. */
  hash: string;
}

/** Reads a config file and hashes it. @throws the fs error when it cannot be read. */
export async function readConfigSource(file: string): Promise<ConfigSource> {
  const buf = await readFile(file);
  return { file, content: buf.toString("utf8"), hash: hashConfigContent(buf) };
}

/**
 * Config files this process has evaluated. Node keeps an ES module (and CommonJS or JSON it
 * loaded) once loaded and never compiles it again, so tracing the same config again here would
 * miss those: approval (config-approval.ts) refuses instead.
 */
const evaluatedHere = new Set<string>();

/** Whether this process has evaluated config `file` (see `evaluatedHere`). */
export function evaluatedInThisProcess(file: string): boolean {
  return evaluatedHere.has(file);
}

/**
 * A jiti instance that resolves modules relative to `file`. The bare import `larik` always maps
 * to this kernel's public module, so a config in `~/.config/larik` can `import { defineConfig }
 * from "larik"` without a local install and shares the running kernel; `zod` and `zod/mini` (and
 * their `zod/v4` spellings) map to the zod installed beside the kernel when nothing closer
 * provides them (tool schemas must be zod 4). Both are settled at the first import of each
 * name, not here: zod is ~100 CommonJS files and each probe a package lookup, ~0.1 s of every
 * start with a config file, which mostly imports no zod. Module cache off: `/reload` must see
 * edited files.
 */
export async function jitiFor(file: string, env: NodeJS.ProcessEnv): Promise<Jiti> {
  const [{ createJiti }, { kernelModule }] = await Promise.all([import("jiti"), import("./public-api.js")]);
  const id = file.startsWith("file:") ? file : pathToFileURL(file).href;
  const fsCache = await transformCacheDir(env);
  const kernel = kernelModule();
  let probe: Jiti | undefined;
  const own = new Map<string, boolean>();
  // jiti asks `name in virtualModules` for each import, then reads the property
  const virtualModules = new Proxy({} as Record<string, unknown>, {
    has: (_, name) => {
      if (name === "larik") return true;
      if (typeof name !== "string" || !ZOD_NAMES.has(name)) return false;
      if (!own.has(name)) own.set(name, !!(probe ??= createJiti(id, { moduleCache: false, fsCache })).esmResolve(name, { try: true }));
      return !own.get(name);
    },
    get: (_, name) => (name === "larik" ? kernel : typeof name === "string" && ZOD_NAMES.has(name) ? kernelRequire(name) : undefined),
  });
  return createJiti(id, { moduleCache: false, fsCache, virtualModules });
}

/** The zod entry points a config's plugin may import without installing zod. */
const ZOD_NAMES: ReadonlySet<string> = new Set(["zod", "zod/v4", "zod/mini", "zod/v4/mini"]);

/**
 * Requires the zod entry points a config's modules may be given ({@link jitiFor}), so that code
 * which records what a config loads (`larik config approve`) can load them first: they are
 * Larik's, not the project's.
 */
export function preloadKernelZod(): void {
  for (const name of ZOD_NAMES) kernelRequire(name);
}

/**
 * A package installed beside the kernel, required (jiti asks for a virtual module synchronously,
 * so zod's CommonJS build): the zod 4 Larik was installed with, which the kernel's schema checks
 * accept as their own (zod 4 keeps its registry on `globalThis`, shared by every copy).
 */
function kernelRequire(name: string): unknown {
  // not imported at the top: this module is on every start's path, node:module is not (~2 ms);
  // import.meta.url is a path in the headless bundle, which createRequire takes as well
  kernelSideRequire ??= process.getBuiltinModule("node:module").createRequire(import.meta.url);
  return kernelSideRequire(name);
}
let kernelSideRequire: NodeJS.Require | undefined;

/**
 * jiti's transpile cache, kept private (`$XDG_CACHE_HOME/larik/jiti`, 0700): its default,
 * a shared `/tmp/jiti`, would let another local user plant code for a predictable file name.
 * Returns false (no cache) when the directory cannot be made.
 */
async function transformCacheDir(env: NodeJS.ProcessEnv): Promise<string | false> {
  const dir = join(cacheDir(env), "jiti");
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  } catch {
    return false;
  }
}

/**
 * Evaluates a config source with jiti (TypeScript and ESM, top-level await allowed) and returns
 * its default export. The text evaluated is exactly `source.content` (the hashed bytes);
 * modules it imports are read from disk as usual.
 * @throws Error naming the file when evaluation fails or the default export is not an object.
 */
export async function evaluateConfig(source: ConfigSource, env: NodeJS.ProcessEnv = process.env): Promise<LarikConfig> {
  const jiti = await jitiFor(source.file, env);
  evaluatedHere.add(source.file);
  let mod: unknown;
  try {
    mod = await jiti.evalModule(source.content, { filename: source.file, id: source.file, async: true });
  } catch (err) {
    throw new Error(`failed to load: ${oneLine(err, source.file)}`);
  }
  const value = mod && typeof mod === "object" && "default" in mod ? (mod as { default: unknown }).default : mod;
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new Error("expected `export default defineConfig({ ... })`");
  }
  const cfg = value as LarikConfig;
  for (const key of ["preset", "plugins"] as const) {
    if (cfg[key] !== undefined && !Array.isArray(cfg[key])) throw new Error(`"${key}": expected a list of plugins or module paths`);
  }
  if (cfg.disable !== undefined && (!Array.isArray(cfg.disable) || cfg.disable.some((d) => typeof d !== "string"))) {
    throw new Error(`"disable": expected a list of plugin names`);
  }
  return cfg;
}


/**
 * Turns plugin specs into plugin values, in order. A string spec is a module path relative to
 * `file` (`./plugins/x.ts`), an absolute path, or a package name resolved from `file`'s
 * directory and then from Larik's own install; its default export must be a plugin or a list of
 * plugins (a preset module). A spec that cannot be used is skipped with a one-line notice.
 */
export async function resolvePluginSpecs(
  specs: readonly PluginSpec[],
  file: string,
  label: string,
  env: NodeJS.ProcessEnv = process.env,
  key: "plugins" | "preset" = "plugins",
): Promise<{ plugins: Plugin[]; notices: string[] }> {
  // a notice names the list the entry is in: a broken preset leaves Larik without front ends
  const what = key === "preset" ? "preset entry" : "plugin";
  const plugins: Plugin[] = [];
  const notices: string[] = [];
  let jiti: Jiti | undefined;
  let own: Jiti | undefined;
  for (const [i, spec] of specs.entries()) {
    if (typeof spec !== "string") {
      if (isPlugin(spec)) plugins.push(spec);
      else notices.push(`${label}: ${what} #${i + 1} skipped: expected definePlugin({ name, setup }) or a module path`);
      continue;
    }
    try {
      jiti ??= await jitiFor(file, env);
      let id: string | undefined;
      if (spec.startsWith(".") || isAbsolute(spec)) id = resolve(dirname(file), spec);
      else {
        id = jiti.esmResolve(spec, { try: true });
        if (!id) {
          own ??= await jitiFor(import.meta.url, env);
          id = own.esmResolve(spec, { try: true });
        }
        if (!id) throw new Error(`cannot find package "${spec}" from ${dirname(file)} (install it there)`);
      }
      const value = await jiti.import<unknown>(id, { default: true });
      const list = Array.isArray(value) ? value : [value];
      const bad = list.findIndex((p) => !isPlugin(p));
      if (bad >= 0) throw new Error("its default export is not a plugin: expected `export default definePlugin({ name, setup })`");
      plugins.push(...(list as Plugin[]));
    } catch (err) {
      notices.push(`${label}: ${what} "${spec}" skipped: ${oneLine(err)}`);
    }
  }
  return { plugins, notices };
}
