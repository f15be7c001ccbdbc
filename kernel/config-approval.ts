/**
 * What approving a project `larik.config.ts` pins (LARIK-REFERENCE §26, docs/config.md): the
 * config's hash, every project file loading it takes in, and the folders it loads from; and the
 * checks at start that take an approval back when any of them changed.
 */
import { realpathSync } from "node:fs";
import { readFile, readdir, readlink } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluateConfig, evaluatedInThisProcess, hashConfigContent, jitiFor, preloadKernelZod, resolvePluginSpecs, type ConfigSource } from "./config-files.js";
import { oneLine } from "./kit/one-line.js";
import { canonicalDir, gitRoot, isInside } from "./paths.js";
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
async function listModuleEntries(dir: string, watch: Iterable<string> = []): Promise<Record<string, string>> {
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
    if (!isInside(root, dir)) return;
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
      for (let d = dir; !isInside(d, base); ) {
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
  if (evaluatedInThisProcess(source.file)) {
    throw new Error("this process has loaded it before, and Node does not show again the modules it kept from then: run `larik config approve` in a new process");
  }
  // load jiti, zod and the kernel's public module before recording: they are Larik's, not the
  // project's, even when Larik runs from a checkout inside the project
  await jitiFor(source.file, env);
  preloadKernelZod();
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
  const inProject = [...files].filter((f) => f !== source.file && isInside(root, f));
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
    const { git } = await import("./kit/checkpoint-git.js");
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

