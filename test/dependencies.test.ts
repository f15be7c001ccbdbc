/**
 * Dependencies point one way: presets -> plugins -> kernel (DESIGN.md). The kernel imports no
 * plugin, no preset and no front-end library; a plugin reaches the kernel only through
 * kernel/index.ts and never imports another plugin's files.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (/\.(ts|tsx)$/.test(name)) out.push(p);
  }
  return out;
}

/**
 * Every module specifier in static imports, re-exports, dynamic import() calls (quoted or in
 * backticks) and require() calls, a createRequire()'s included.
 */
export function specifiers(source: string): string[] {
  const out: string[] = [];
  const re =
    /(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["'`]([^"'`]+)["'`]\s*\)|^\s*import\s*["']([^"']+)["']|(?:\brequire|\))\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/gm;
  for (let m = re.exec(source); m; m = re.exec(source)) out.push((m[1] ?? m[2] ?? m[3] ?? m[4])!);
  return out;
}

const FRONTEND_LIBS = /^(ink|ink-testing-library|react|react\/.*|h3|@modelcontextprotocol\/sdk(\/.*)?|vscode-jsonrpc(\/.*)?)$/;

describe("dependency direction", () => {
  it("finds imports of every form (self-check of the scanner)", () => {
    const src = `import a from "x";\nimport { b } from 'y';\nexport * from "./z.js";\nconst c = await import("w");\nimport "side";`;
    expect(specifiers(src).sort()).toEqual(["./z.js", "side", "w", "x", "y"]);
    const more = "const d = await import(`v`);\nconst e = require('u');\nconst f = createRequire(import.meta.url)(\"t\");\nrequireStore(ctx);";
    expect(specifiers(more).sort()).toEqual(["t", "u", "v"]);
  });

  it("the kernel imports no plugin, preset or front-end library", () => {
    const bad: string[] = [];
    for (const f of files(join(root, "kernel"))) {
      if (f.endsWith(".test.ts")) continue;
      for (const s of specifiers(readFileSync(f, "utf8"))) {
        const target = s.startsWith(".") ? resolve(dirname(f), s) : "";
        const outside = target && !target.startsWith(join(root, "kernel") + sep);
        if (FRONTEND_LIBS.test(s) || outside) bad.push(`${relative(root, f)} -> ${s}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("plugins use the kernel only through kernel/index.ts and never another plugin", () => {
    const bad: string[] = [];
    const pluginsDir = join(root, "plugins");
    for (const f of files(pluginsDir)) {
      const own = relative(pluginsDir, f).split(sep)[0]!;
      for (const s of specifiers(readFileSync(f, "utf8"))) {
        if (!s.startsWith(".")) continue;
        const target = resolve(dirname(f), s);
        const rel = relative(root, target).split(sep);
        if (rel[0] === "kernel" && relative(root, target).replace(/\.js$/, "") !== "kernel/index") bad.push(`${relative(root, f)} -> ${s}`);
        if (rel[0] === "plugins" && rel[1] !== own) bad.push(`${relative(root, f)} -> ${s}`);
        if (rel[0] === "presets" || rel[0] === "cli") bad.push(`${relative(root, f)} -> ${s}`);
        // only tests and their helpers may use the shared test fakes
        if (rel[0] === "test" && !/(\.test\.|test-|-test\.|\/test\/)/.test(relative(root, f))) bad.push(`${relative(root, f)} -> ${s}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("the preset is an ordered list of plugins and nothing else, and --version's names and descriptions match it", async () => {
    const src = readFileSync(join(root, "presets/default.ts"), "utf8");
    const code = src.replace(/\/\*[\s\S]*?\*\//g, "").split("\n").filter((l) => l.trim() && !l.startsWith("import "));
    expect(code).toHaveLength(1);
    expect(code[0]).toMatch(/^export default \[[\w, ]+\];$/);
    const preset = (await import("../presets/default.js")).default as { name: string; description?: string }[];
    const { DEFAULT_PLUGINS } = await import("../presets/names.js");
    expect(preset.map((p) => [p.name, p.description])).toEqual(DEFAULT_PLUGINS.map(([n, d]) => [n, d]));
  });
});
