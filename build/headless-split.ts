/**
 * The headless build in two files: dist/headless.cjs holds what a `larik -p` run needs up to its
 * first model request, and dist/headless-lazy.cjs the plugins' modules loaded on demand (a
 * provider other than the main job's two, MCP's client, the hook engine, skills' rendering, the
 * slash commands, ...). Each is one CommonJS file compiled through V8's code cache
 * (cli/code-cache.ts); the second is read only by a run that uses one of its modules.
 *
 * The two share one instance of every module both use: dist/headless-lazy.cjs bundles only what
 * dist/headless.cjs lacks, and takes the rest from it. Its imports of those modules become
 * `require("larik-shared:<id>")`, which the launcher answers with `sharedModule(id)`, an export of
 * dist/headless.cjs: an object of getters for the module's exports, built on demand from named
 * imports (an `import * as` would build every namespace object at each start). A plugin's
 * `import("./x.js")` of a module in the lazy file becomes `require("larik-lazy:<id>")`, which the
 * launcher answers by loading dist/headless-lazy.cjs once and calling its `load(id)`.
 *
 * Which module goes where is worked out before the two builds, by three esbuild passes that
 * write nothing ({@link splitPlan}): the start graph of cli/main.ts with the plugins' dynamic
 * imports cut off, the graph of those lazily imported modules, and the export names of the
 * modules the second takes from the first.
 *
 * Source: esbuild's plugin API (onResolve/onLoad, `build.resolve`, metafile),
 * https://esbuild.github.io/plugins/ and https://esbuild.github.io/api/#metafile
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import * as esbuild from "esbuild";
import { LAZY_PREFIX, SHARED_PREFIX } from "../cli/split-ids.js";

type Plugin = esbuild.Plugin;

/**
 * The plugins' lazily imported modules that stay in dist/headless.cjs: those a `-p` run of the
 * main job (the openai-compatible or the anthropic provider, the JSONL session store) imports
 * before its first model request. Paths from the project root, `/`-separated.
 */
export const START_PATH_MODULES = [
  "plugins/headless/run.ts",
  "plugins/sessions-jsonl/store.ts",
  "plugins/openai-compatible/provider.ts",
  "plugins/anthropic/provider.ts",
];

/** One module dist/headless-lazy.cjs takes from dist/headless.cjs. */
export interface SharedModule {
  /** `larik-shared:<id>`: the path from the root for our files, `pkg:<specifier>` for a package. */
  id: string;
  /** What dist/headless.cjs imports it as: an absolute path, or the package specifier. */
  from: string;
  /** Its export names (`default` included when it has one); none listed for the kernel, whose object is kernelModule(). */
  names: string[];
}

/** What {@link splitPlan} works out. */
export interface SplitPlan {
  /** The modules of dist/headless-lazy.cjs that dist/headless.cjs imports on demand, as ids. */
  lazy: string[];
  /** The modules dist/headless-lazy.cjs takes from dist/headless.cjs. */
  shared: SharedModule[];
}

/** Options both builds pass: the same as their own resolution, so that the passes see their graph. */
export interface SplitOptions {
  /** The project root (absolute). */
  root: string;
  /** The entry of dist/headless.cjs, from the root (`cli/main.ts`). */
  entry: string;
  /** Plugins that change what the start graph holds (front ends left out), run before the split's. */
  plugins: Plugin[];
  /** Package specifiers dist/headless.cjs bundles (tsup's noExternal); others stay `require`d. */
  bundled: (specifier: string) => boolean;
  /** The export names to share of a bundled package that dist/headless.cjs loads through a facade. */
  facadeNames: (specifier: string) => string[] | undefined;
}

/**
 * The namespace of the module that defines `sharedModule` in dist/headless.cjs (tsup.config.ts's
 * lazy packages resolve their facades for it too).
 */
export const SHARED_MODULES_NAMESPACE = "larik-shared";

/** The kernel's public entry, which every plugin module shares (kernel/public-api.ts makes its object). */
const KERNEL = "kernel/index.ts";
const idOf = (root: string, abs: string) => relative(root, abs).split(sep).join("/");
const isBare = (p: string) => !p.startsWith(".") && !isAbsolute(p);
const fromPlugin = (root: string, importer: string) => idOf(root, importer).startsWith("plugins/");
/** A dynamic import a plugin makes of its own module, which the split may move. */
const movable = (root: string, args: esbuild.OnResolveArgs) => args.kind === "dynamic-import" && !isBare(args.path) && fromPlugin(root, args.importer);

/** esbuild's own resolution of an import a callback of ours is looking at (marked, so that it passes it by). */
const resolveAgain = (b: esbuild.PluginBuild, args: esbuild.OnResolveArgs) =>
  b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { headlessSplit: true } });
const resolvingAgain = (args: esbuild.OnResolveArgs) => args.pluginData?.headlessSplit === true;

/** The split for the build `b`, worked out at its first use in each build (a rebuild under tsup --watch too). */
function planPerBuild(b: esbuild.PluginBuild, opts: SplitOptions): () => Promise<SplitPlan> {
  let plan: Promise<SplitPlan> | undefined;
  b.onStart(() => void (plan = undefined));
  return () => (plan ??= splitPlan(opts));
}

/**
 * Works out the split from the sources as they are now. Each of the two builds works it out
 * itself, once per build ({@link planPerBuild}), so a rebuild never uses a stale one.
 * @throws Error when an esbuild pass fails (a module that does not resolve, a syntax error)
 */
export async function splitPlan(opts: SplitOptions): Promise<SplitPlan> {
  const { root } = opts;
  const probe = { bundle: true, write: false, metafile: true, platform: "node", format: "esm", outdir: join(root, ".split-probe"), logLevel: "silent", absWorkingDir: root } as const;

  // 1. the start graph: the entry with every plugin's dynamic import of its own modules cut off
  const lazy = new Set<string>();
  const bareAtStart = new Set<string>();
  const start = await esbuild.build({
    ...probe,
    entryPoints: [join(root, opts.entry)],
    plugins: [
      ...opts.plugins,
      {
        name: "split-probe-start",
        setup(b) {
          b.onResolve({ filter: /.*/ }, async (args) => {
            if (resolvingAgain(args)) return undefined;
            if (isBare(args.path)) {
              bareAtStart.add(args.path);
              return { path: args.path, external: true };
            }
            if (!movable(root, args)) return undefined;
            const real = await resolveAgain(b, args);
            if (!START_PATH_MODULES.includes(idOf(root, real.path))) {
              lazy.add(real.path);
              return { path: real.path, external: true };
            }
            return undefined;
          });
        },
      },
    ],
  });
  const atStart = new Set(Object.keys(start.metafile.inputs).map((p) => join(root, p)));
  for (const p of lazy) if (atStart.has(p)) lazy.delete(p); // imported statically too: it stays

  // 2. the lazy graph: what it takes from the start graph, and which packages
  const ownShared = new Set<string>();
  const pkgShared = new Set<string>();
  await esbuild.build({
    ...probe,
    entryPoints: [...lazy],
    plugins: [
      {
        name: "split-probe-lazy",
        setup(b) {
          b.onResolve({ filter: /.*/ }, async (args) => {
            if (resolvingAgain(args)) return undefined;
            if (isBare(args.path)) {
              if (opts.bundled(args.path) && bareAtStart.has(args.path)) pkgShared.add(args.path);
              return { path: args.path, external: true };
            }
            const real = await resolveAgain(b, args);
            if (!atStart.has(real.path)) return undefined;
            ownShared.add(real.path);
            return { path: real.path, external: true };
          });
        },
      },
    ],
  });

  // 3. the export names of the shared modules of ours
  const names = new Map<string, string[]>();
  // (the kernel's object is kernelModule(), which needs no names of ours)
  const named = [...ownShared].filter((p) => idOf(root, p) !== KERNEL);
  if (named.length) {
    const out = await esbuild.build({ ...probe, entryPoints: named, packages: "external" });
    for (const o of Object.values(out.metafile.outputs)) if (o.entryPoint) names.set(join(root, o.entryPoint), o.exports);
  }
  const shared: SharedModule[] = [
    ...[...ownShared].sort().map((p) => ({ id: idOf(root, p), from: p, names: idOf(root, p) === KERNEL ? [] : (names.get(p) ?? []) })),
    ...[...pkgShared].sort().map((s) => {
      const facade = opts.facadeNames(s);
      if (!facade) throw new Error(`build/headless-split.ts: the lazy modules import ${s}, bundled but not through a facade; share it like zod/mini (tsup.config.ts)`);
      return { id: `pkg:${s}`, from: s, names: facade };
    }),
  ];
  return { lazy: [...lazy].sort().map((p) => idOf(root, p)), shared };
}

/**
 * The source of `sharedModule(id)`, which builds each shared module's object at its first use.
 * The entry requires this module at the first call, not at start, so that the modules it imports
 * are set up then (esbuild wraps each in an init function): a plain object of their values is
 * then complete, and none of them has an `export let` that would change later.
 */
function sharedModulesSource(shared: SharedModule[]): string {
  const lines: string[] = [];
  const cases: string[] = [];
  shared.forEach((m, i) => {
    if (m.id === KERNEL) {
      // the object a config file gets for `import … from "larik"`, which the build already has
      lines.push(`import { kernelModule } from ${JSON.stringify(m.from.replace(/index\.ts$/, "public-api.ts"))};`);
      cases.push(`    case ${JSON.stringify(m.id)}: m = kernelModule(); break;`);
      return;
    }
    if (!m.names.length) return;
    lines.push(`import { ${m.names.map((n, k) => `${n} as s${i}_${k}`).join(", ")} } from ${JSON.stringify(m.from)};`);
    const values = m.names.map((n, k) => `${JSON.stringify(n)}: s${i}_${k}`).join(", ");
    const dflt = m.names.indexOf("default");
    // A package's default export is, to Node, what `import x from "pkg"` gives: esbuild's
    // `import("pkg")` in a package of type module takes the required object itself as `default`
    // (`__toESM(require(…), 1)`), so for picomatch's function that object must be the function
    if (m.id.startsWith("pkg:") && dflt >= 0) {
      cases.push(`    case ${JSON.stringify(m.id)}: m = Object.assign((...a) => s${i}_${dflt}(...a), { __esModule: true, ${values} }); break;`);
      return;
    }
    cases.push(`    case ${JSON.stringify(m.id)}: m = { __proto__: null, __esModule: true, ${values} }; break;`);
  });
  return [
    ...lines,
    `const made = new Map();`,
    `/** The exports of a module dist/headless-lazy.cjs takes from this file, by its id. */`,
    `export function sharedModule(id) {`,
    `  let m = made.get(id);`,
    `  if (m) return m;`,
    `  switch (id) {`,
    ...cases,
    `    default: throw new Error("dist/headless.cjs has no shared module " + id + ": rebuild (npm run build)");`,
    `  }`,
    `  made.set(id, m);`,
    `  return m;`,
    `}`,
  ].join("\n");
}

/**
 * For dist/headless.cjs: a plugin's dynamic import of a module in the lazy file becomes
 * `require("larik-lazy:<id>")`, and the entry also exports `sharedModule`.
 */
export function startFileSplit(opts: SplitOptions): Plugin {
  const { root } = opts;
  return {
    name: "headless-split-start",
    setup(b) {
      const planned = planPerBuild(b, opts);
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (resolvingAgain(args) || !movable(root, args)) return undefined;
        const { lazy } = await planned();
        const real = await resolveAgain(b, args);
        const id = idOf(root, real.path);
        return lazy.includes(id) ? { path: `${LAZY_PREFIX}${id}`, external: true } : undefined;
      });
      b.onResolve({ filter: /^larik-shared-modules$/ }, () => ({ path: "larik-shared-modules", namespace: SHARED_MODULES_NAMESPACE }));
      b.onLoad({ filter: /.*/, namespace: SHARED_MODULES_NAMESPACE }, async () => ({
        contents: sharedModulesSource((await planned()).shared),
        loader: "js",
        resolveDir: root,
      }));
      const entry = join(root, opts.entry);
      b.onLoad({ filter: /\.ts$/ }, (args) =>
        args.path === entry
          ? {
              contents: `${readFileSync(entry, "utf8")}\nexport function sharedModule(id: string): unknown { return require("larik-shared-modules").sharedModule(id); }\n`,
              loader: "ts",
              resolveDir: dirname(entry),
            }
          : undefined,
      );
    },
  };
}

/**
 * For dist/headless-lazy.cjs, built from `lazyEntry` (cli/headless-lazy.ts, whose content this
 * replaces): `load(id)` requires each lazy module, and the modules dist/headless.cjs holds are
 * `require("larik-shared:<id>")`.
 */
export function lazyFileSplit(opts: SplitOptions, lazyEntry: string): Plugin {
  const { root } = opts;
  const entry = join(root, lazyEntry);
  return {
    name: "headless-split-lazy",
    setup(b) {
      const planned = planPerBuild(b, opts);
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (resolvingAgain(args) || args.kind === "entry-point") return undefined;
        const { shared } = await planned();
        if (isBare(args.path)) return shared.some((m) => m.id === `pkg:${args.path}`) ? { path: `${SHARED_PREFIX}pkg:${args.path}`, external: true } : undefined;
        const real = await resolveAgain(b, args);
        const id = idOf(root, real.path);
        return shared.some((m) => m.id === id) ? { path: `${SHARED_PREFIX}${id}`, external: true } : undefined;
      });
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path !== entry) return undefined;
        const { lazy } = await planned();
        const cases = lazy.map((id) => `    case ${JSON.stringify(id)}: return require(${JSON.stringify(join(root, id))});`);
        return {
          contents: [
            `/** A lazy module of the headless build by its id (build/headless-split.ts). */`,
            `export function load(id: string): unknown {`,
            `  switch (id) {`,
            ...cases,
            `  }`,
            `  throw new Error("dist/headless-lazy.cjs has no module " + id + ": rebuild (npm run build)");`,
            `}`,
          ].join("\n"),
          loader: "ts",
          resolveDir: root,
        };
      });
    },
  };
}
