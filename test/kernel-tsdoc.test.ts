/**
 * Every export of the kernel's public entry (kernel/index.ts, re-exports followed to their
 * definitions) carries a TSDoc comment: the house rule says public functions and types document
 * their shapes, units, errors and source, and a new export without one fails here.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const kernel = resolve(import.meta.dirname, "..", "kernel");

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
}

function hasDoc(node: ts.Node): boolean {
  // a `const` carries its comment on the statement, not the declaration
  const target = ts.isVariableDeclaration(node) ? node.parent.parent : node;
  return ts.getJSDocCommentsAndTags(target).length > 0;
}

const isExported = (n: ts.Node) => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** Top-level declarations of `file` by name (the first one: an interface merged with a class is one name). */
function declarations(file: string): Map<string, ts.Node> {
  const out = new Map<string, ts.Node>();
  for (const st of parse(file).statements) {
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name) && !out.has(d.name.text)) out.set(d.name.text, d);
    } else if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isEnumDeclaration(st)) && st.name) {
      if (!out.has(st.name.text)) out.set(st.name.text, st);
    }
  }
  return out;
}

const moduleFile = (from: string, spec: string) => join(from, "..", spec.replace(/\.js$/, ".ts"));

/** Every name a module exports, each with the node that defines it (following `export … from`). */
/** Where a name `file` imports (`import { x } from "./y.js"`, then `export { x }`) is defined. */
function imported(file: string, name: string): { file: string; node: ts.Node } | undefined {
  for (const st of parse(file).statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
    const bindings = st.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    const el = bindings.elements.find((e) => e.name.text === name);
    if (el) return exportsOf(moduleFile(file, st.moduleSpecifier.text)).get((el.propertyName ?? el.name).text);
  }
  return undefined;
}

const cache = new Map<string, Map<string, { file: string; node: ts.Node }>>();
function exportsOf(file: string): Map<string, { file: string; node: ts.Node }> {
  const cached = cache.get(file);
  if (cached) return cached;
  const out = new Map<string, { file: string; node: ts.Node }>();
  cache.set(file, out);
  const decls = declarations(file);
  for (const st of parse(file).statements) {
    if (ts.isExportDeclaration(st)) {
      const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : undefined;
      const target = spec ? moduleFile(file, spec) : file;
      const theirs = spec ? exportsOf(target) : undefined;
      if (!st.exportClause) {
        for (const [name, def] of theirs!) out.set(name, def);
      } else if (ts.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements) {
          const original = (el.propertyName ?? el.name).text;
          const def = theirs ? theirs.get(original) : decls.has(original) ? { file, node: decls.get(original)! } : imported(file, original);
          if (!def) throw new Error(`${el.name.text}, exported by ${file}, is defined nowhere it looks`);
          out.set(el.name.text, def);
        }
      }
    } else if (ts.isVariableStatement(st) && isExported(st)) {
      for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) out.set(d.name.text, { file, node: d });
    } else if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isEnumDeclaration(st)) && st.name && isExported(st)) {
      // an overloaded function: the comment sits on its first signature
      if (!out.has(st.name.text)) out.set(st.name.text, { file, node: st });
    }
  }
  return out;
}

describe("kernel/index.ts exports", () => {
  const all = exportsOf(join(kernel, "index.ts"));

  it("follows the re-exports to their definitions", () => {
    // the entry's own names and a few from deep in the chain: the walk reaches them all
    for (const name of ["Agent", "Host", "definePlugin", "AgentEventSchema", "parseCommandLine", "PluginError", "parseDuration"]) {
      expect(all.has(name), name).toBe(true);
    }
    expect(all.size).toBeGreaterThan(200);
  });

  it("each carries a TSDoc comment", () => {
    const missing = [...all]
      .filter(([, def]) => !hasDoc(def.node))
      .map(([name, def]) => `${name} (kernel/${def.file.slice(kernel.length + 1)}:${def.node.getSourceFile().getLineAndCharacterOfPosition(def.node.getStart()).line + 1})`);
    expect(missing).toEqual([]);
  });
});
