/**
 * `larik.config.ts` files (DESIGN.md "Layout"; trust per LARIK-REFERENCE §26 and invariant 7):
 * finding them, hashing them and the files they load for approval, evaluating them with jiti,
 * and turning plugin specs into plugin values. jiti is imported only when a config file exists.
 */
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import { mkdir, readFile, readdir, readlink } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Jiti } from "jiti";
import { isPlugin, type Plugin } from "./plugin.js";
import { oneLine } from "./one-line.js";
import type { LarikConfig, PluginSpec } from "./config.js";
import { canonicalDir, configDir, gitRoot } from "./paths.js";

/** File names looked for, first found wins in each directory. */
export const CONFIG_FILE_NAMES = ["larik.config.ts", "larik.config.mts", "larik.config.js", "larik.config.mjs"] as const;

/** The personal config file (`~/.config/larik/larik.config.ts`), whether or not it exists. */
export function personalConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), CONFIG_FILE_NAMES[0]);
}

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
 * What `larik config approve` records for a project config (`approved_configs[<its path>]`).
 * Approval is taken back as soon as any of these files differs from its hash or is gone.
 */
export interface ConfigApproval {
  /** sha256 hex of the config file's bytes. */
  sha256: string;
  /**
   * The other files that loading the config took in (its imports, transitively, and the modules
   * its `plugins` and `preset` name), inside the project and not an installed package (under
   * `node_modules` only files git tracks, or all outside a git repository): canonical absolute
   * path → sha256 hex of its bytes.
   */
  files: Record<string, string>;
  /**
   * The folders it loads from (those of the config and of each pinned file, and each folder an
   * import path in them goes through, inside the project): canonical or as-imported absolute
   * path → the entries there that could change what an import resolves to (see
   * {@link listModuleEntries}): name → `file`, `dir`, `other`, `none` (a name an import looks
   * for that was not there) or `link:<target>` (a symbolic link, as readlink gives it).
   * Node loads a module by its real path, so `files` alone would miss a link retargeted, or a
   * `lib.js` added next to the `lib.ts` that `import "./lib"` found. Absent in approvals recorded
   * by an older Larik, which no longer count.
   */
  dirs?: Record<string, Record<string, string>>;
}

/** File extensions Node, jiti or `require()` may load as a module (or take in, as JSON). */
const MODULE_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx", ".json", ".node"]);

function moduleLike(name: string): boolean {
  const dot = name.lastIndexOf(".");
  return dot > 0 && MODULE_EXTENSIONS.has(name.slice(dot).toLowerCase());
}

/**
 * The entries of `dir` that could decide what an import from it loads: files with a module
 * extension, every symbolic link (with its target), and the names in `watch` (an import's last
 * path segment, as written: an extensionless file of that name, or a folder, would be tried),
 * each as its kind (`none` when absent). A folder that cannot be read lists as empty. Plain
 * folders are left out: a new one cannot take the place of a file an import found.
 */
export async function listModuleEntries(dir: string, watch: Iterable<string> = []): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of watch) out[name] = "none";
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  await Promise.all(
    entries.map(async (e) => {
      if (e.isSymbolicLink()) {
        out[e.name] = `link:${await readlink(join(dir, e.name)).catch(() => "?")}`;
      } else if (moduleLike(e.name) || e.name in out) {
        out[e.name] = e.isFile() ? "file" : e.isDirectory() ? "dir" : "other";
      }
    }),
  );
  return out;
}

/**
 * What differs between the folder listings an approval recorded and the folders now, in path
 * order: the entry's absolute path, and how (`new`, `removed`, or what it is now). An empty list
 * means no entry appeared, went or was retargeted that could change what the config loads.
 */
export async function dirsChangedSinceApproval(dirs: Record<string, Record<string, string>>): Promise<{ path: string; how: string }[]> {
  const lists = await Promise.all(
    Object.keys(dirs)
      .sort()
      .map(async (dir) => {
        const was = dirs[dir]!;
        const now = await listModuleEntries(dir, Object.keys(was));
        const out: { path: string; how: string }[] = [];
        for (const name of [...new Set([...Object.keys(was), ...Object.keys(now)])].sort()) {
          const a = was[name] ?? "none";
          const b = now[name] ?? "none";
          if (a === b) continue;
          const how = a === "none" ? "new" : b === "none" ? "removed" : b.startsWith("link:") ? `now a link to ${b.slice(5)}` : `now a ${b}`;
          out.push({ path: join(dir, name), how });
        }
        return out;
      }),
  );
  return lists.flat();
}

/**
 * The relative module paths written in `text` (any quoted string that starts with `./` or
 * `../`, or is `.` or `..`: imports, `require()`, plugin specs), resolved against `base`: each
 * as the folder it names its last segment in and that segment (undefined when the string is
 * built at run time and ends in a folder, as in `` `./plugins/${name}` ``).
 */
function relativeSpecifiers(text: string, base: string): { dir: string; name?: string }[] {
  const out: { dir: string; name?: string }[] = [];
  for (const m of text.matchAll(/(["'`])(\.\.?(?:\/[^"'`\n]*)?)\1/g)) {
    let spec = m[2]!;
    const hole = m[1] === "`" ? spec.indexOf("${") : -1;
    if (hole >= 0) spec = spec.slice(0, spec.lastIndexOf("/", hole) + 1) || "./";
    const target = resolve(base, spec);
    if (hole >= 0 || spec.endsWith("/") || spec === "." || spec === "..") out.push({ dir: target });
    else out.push({ dir: dirname(target), name: basename(target) });
  }
  return out;
}

/**
 * The folder listings an approval records (see {@link ConfigApproval.dirs}): the folder of the
 * config and of each pinned file, and for every relative module path written in them, the
 * folder it ends in and each folder above it down to where it leaves `base`; only folders in the
 * project `root`, and under `node_modules` only those holding a pinned file.
 */
async function listLoadFolders(
  root: string,
  config: { file: string; content: string },
  pinned: { file: string; content: Buffer }[],
): Promise<Record<string, Record<string, string>>> {
  const watch = new Map<string, Set<string>>();
  const add = (dir: string, name?: string) => {
    if (dir !== root && !inside(root, dir)) return;
    const names = watch.get(dir) ?? new Set<string>();
    if (name) names.add(name);
    watch.set(dir, names);
  };
  const packaged = (dir: string) => relative(root, dir).split(sep).includes("node_modules");
  for (const src of [{ file: config.file, text: config.content }, ...pinned.map((p) => ({ file: p.file, text: p.file.endsWith(".json") ? "" : p.content.toString("utf8") }))]) {
    const base = dirname(src.file);
    add(base);
    for (const { dir, name } of relativeSpecifiers(src.text, base)) {
      if (packaged(dir)) continue;
      add(dir, name);
      // the folders the path goes through, each of which may hold a link it follows
      for (let d = dir; d !== base && !inside(d, base); ) {
        const up = dirname(d);
        if (up === d) break;
        add(up);
        d = up;
      }
    }
  }
  const dirs = [...watch.keys()].sort();
  const lists = await Promise.all(dirs.map((d) => listModuleEntries(d, watch.get(d)!)));
  return Object.fromEntries(dirs.map((d, i) => [d, lists[i]!]));
}


/**
 * Config files this process has evaluated. Node keeps an ES module (and CommonJS or JSON it
 * loaded) once loaded and never compiles it again, so tracing the same config again here would
 * miss those: {@link traceProjectConfig} refuses instead.
 */
const evaluatedHere = new Set<string>();

/**
 * Runs `fn` and returns its result with every file Node loaded as code meanwhile (canonical
 * absolute paths). The V8 inspector reports each script it compiles (whether jiti transpiled
 * it, Node imported it as an ES module, or required it as CommonJS), which jiti's own hooks
 * cannot do: it hands `.mjs` and `.cjs` files to Node, whose imports jiti then never sees.
 * JSON is not compiled, so files that enter `require.cache` are added too.
 * @throws Error when this Node has no inspector (a build without it), and whatever `fn` throws.
 */
async function recordLoadedFiles<T>(fn: () => Promise<T>): Promise<{ value: T; files: Set<string> }> {
  const [inspector, { createRequire }] = await Promise.all([
    import("node:inspector").catch(() => {
      throw new Error("this Node has no inspector, which approval needs to see the files the config loads");
    }),
    import("node:module"),
  ]);
  const requireCache = createRequire(import.meta.url).cache;
  const required = new Set(Object.keys(requireCache));
  const urls: string[] = [];
  let live = false;
  const session = new inspector.Session();
  // Debugger.enable first replays every script compiled so far; those were not loaded by `fn`
  const record = (m: { params: { url: string } }) => {
    if (live) urls.push(m.params.url);
  };
  session.on("Debugger.scriptParsed", record);
  // jiti runs a module that does not compile as a script again from a data: URL, which names no
  // file: the failed attempt is what names it
  session.on("Debugger.scriptFailedToParse", record);
  try {
    session.connect();
    await new Promise<void>((done, fail) => session.post("Debugger.enable", (err) => (err ? fail(err) : done())));
    live = true;
    const value = await fn();
    const files = new Set<string>();
    for (const key of Object.keys(requireCache)) if (!required.has(key)) urls.push(key);
    for (const url of urls) {
      const path = url.startsWith("file:") ? fileURLToPath(url) : isAbsolute(url) ? url : undefined;
      if (!path) continue; // node:internal, eval, wasm:// …: no file of the project
      try {
        files.add(realpathSync(path));
      } catch {
        files.add(path); // gone already: keep it, so the approval cannot be complete by accident
      }
    }
    return { value, files };
  } finally {
    live = false;
    session.disconnect();
  }
}

/**
 * Loads a project config the way `loadConfig` does (evaluates `source`, then loads the
 * modules its `plugins` and `preset` name) and hashes every file that took part: what
 * `larik config approve` pins. Files outside the project root (the git root, else the config's
 * directory) are left out, and so are packages installed under `node_modules` (there, only files
 * git tracks are pinned; outside a repository, all are). Also lists the folders it loads from
 * (see {@link ConfigApproval.dirs}). Runs the config's code.
 * @returns the approval record and the plugin specs that could not be loaded (one-line notices,
 *   prefixed with `label`).
 * @throws Error (one line) when the config fails to load, a loaded file cannot be read, or this
 *   process evaluated the config before (what it loaded then would be missed).
 */
export async function traceProjectConfig(
  source: ConfigSource,
  label: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ approval: ConfigApproval; notices: string[] }> {
  if (evaluatedHere.has(source.file)) {
    throw new Error("this process has loaded it before, and Node does not show again the modules it kept from then: run `larik config approve` in a new process");
  }
  // load jiti, zod and the kernel's public module before recording: they are Larik's, not the
  // project's, even when Larik runs from a checkout inside the project
  await jitiFor(source.file, env);
  const { value: notices, files } = await recordLoadedFiles(async () => {
    const cfg = await evaluateConfig(source, env).catch((err: unknown) => {
      throw new Error(`${oneLine(err)}; fix it, then run \`larik config approve\``);
    });
    const out: string[] = [];
    for (const key of ["plugins", "preset"] as const) {
      const specs = cfg[key];
      if (specs) out.push(...(await resolvePluginSpecs(specs, source.file, label, env, key)).notices);
    }
    return out;
  });
  // the project: the git root above the config, or its own directory outside a repository
  // (where findProjectConfig looks no higher)
  const dir = canonicalDir(dirname(source.file));
  const repo = gitRoot(dir);
  const root = repo ?? dir;
  const inProject = [...files].filter((f) => f !== source.file && inside(root, f));
  const packaged = new Set(inProject.filter((f) => relative(root, f).split(sep).includes("node_modules")));
  // outside a repository nothing tells an installed package from the project's own code: pin all
  const committed = packaged.size ? await trackedByGit(repo, [...packaged]) : new Set<string>();
  const pinned = inProject.filter((f) => !packaged.has(f) || committed.has(f)).sort();
  const contents = await Promise.all(
    pinned.map((f) =>
      readFile(f).catch((err: unknown) => {
        throw new Error(`cannot read ${f}, which it loads: ${oneLine(err)}`);
      }),
    ),
  );
  const dirs = await listLoadFolders(root, source, pinned.map((file, i) => ({ file, content: contents[i]! })));
  const hashes = Object.fromEntries(pinned.map((f, i) => [f, hashConfigContent(contents[i]!)]));
  return { approval: { sha256: source.hash, files: hashes, dirs }, notices };
}

/** True when `file` is below the directory `root`. */
function inside(root: string, file: string): boolean {
  const rel = relative(root, file);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * Which of `files` (under a `node_modules` directory of `repo`) git tracks. An approval leaves
 * installed packages to the lockfile that chose them (pinning them would ask again after every
 * install), but a `node_modules` directory committed to the repository is the repository's code
 * like any other. When git cannot answer, or there is no repository (`repo` undefined: nothing
 * tells an install from code the project ships), all of them count as tracked: pinned too many
 * (asking again after an install), never too few (running changed code without asking).
 */
async function trackedByGit(repo: string | undefined, files: string[]): Promise<Set<string>> {
  if (!repo) return new Set(files);
  try {
    const { git } = await import("./checkpoint-git.js");
    const out = await git(repo, ["ls-files", "-z", "--", ...files.map((f) => relative(repo, f))]);
    return new Set(out.toString("utf8").split("\0").filter(Boolean).map((rel) => join(repo, rel)));
  } catch {
    return new Set(files);
  }
}

/**
 * The files of an approval that differ from what is on disk now, in path order: `removed` when
 * the file cannot be read any more. An empty list means every pinned file is as approved.
 */
export async function filesChangedSinceApproval(files: Record<string, string>): Promise<{ file: string; removed: boolean }[]> {
  const checks = await Promise.all(
    Object.keys(files)
      .sort()
      .map(async (file) => {
        const buf = await readFile(file).catch(() => undefined);
        if (!buf) return { file, removed: true };
        return hashConfigContent(buf) === files[file] ? undefined : { file, removed: false };
      }),
  );
  return checks.filter((c) => c !== undefined);
}

/**
 * A jiti instance that resolves modules relative to `file`. The bare import `larik` always maps
 * to this kernel's public module, so a config in `~/.config/larik` can `import { defineConfig }
 * from "larik"` without a local install and shares the running kernel; `zod` maps to the
 * kernel's zod when nothing closer provides one (tool schemas must be zod 4). Module cache off:
 * `/reload` must see edited files.
 */
async function jitiFor(file: string, env: NodeJS.ProcessEnv): Promise<Jiti> {
  const [{ createJiti }, { kernelModule }, zod] = await Promise.all([import("jiti"), import("./public-api.js"), import("zod")]);
  const id = file.startsWith("file:") ? file : pathToFileURL(file).href;
  const fsCache = await transformCacheDir(env);
  const probe = createJiti(id, { moduleCache: false, fsCache });
  const virtualModules: Record<string, unknown> = { larik: kernelModule() };
  if (!probe.esmResolve("zod", { try: true })) virtualModules.zod = zod;
  return createJiti(id, { moduleCache: false, fsCache, virtualModules });
}

/**
 * jiti's transpile cache, kept private (`$XDG_CACHE_HOME/larik/jiti`, 0700): its default,
 * a shared `/tmp/jiti`, would let another local user plant code for a predictable file name.
 * Returns false (no cache) when the directory cannot be made.
 */
async function transformCacheDir(env: NodeJS.ProcessEnv): Promise<string | false> {
  const dir = join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache"), "larik", "jiti");
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
