/**
 * docs/architecture.md stays true to the code: its hook table names every hook point of
 * kernel/hooks.ts with its tapable class and arity, its event table lists every event type of
 * kernel/events.ts with exactly its fields (`?` marking the optional ones), its registry table
 * names the host's registries, its file map names every file of kernel/ and kernel/kit/, and
 * "Reading the kernel" gives their sizes and a reading order that covers the kernel proper.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { AgentEventSchema, createHooks, Host, Registry, StopReasonSchema, UsageInfoSchema } from "../kernel/index.js";

const root = resolve(import.meta.dirname, "..");
const doc = readFileSync(join(root, "docs", "architecture.md"), "utf8");

/** The body rows of the markdown table whose header row starts with `| <first> |`, as cells. */
function table(first: string): string[][] {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`| ${first} |`));
  expect(start, `a table headed "| ${first} |" in docs/architecture.md`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    // `\|` inside a cell is an escaped pipe, not a column break
    rows.push(line.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim()));
  }
  return rows;
}

/** The `code` spans of a cell. */
const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

type ZodLike = { _zod: { def: { type: string; shape?: Record<string, ZodLike>; options?: ZodLike[]; entries?: Record<string, string>; values?: string[] } } };
const def = (s: unknown) => (s as ZodLike)._zod.def;

/** `name` or `name?` for each key of an object schema, leaving out `skip`. */
function fieldsOf(schema: unknown, skip: string[] = []): string[] {
  return Object.entries(def(schema).shape!)
    .filter(([k]) => !skip.includes(k))
    .map(([k, v]) => (def(v).type === "optional" ? `${k}?` : k))
    .sort();
}

describe("docs/architecture.md hook table", () => {
  const hooks = createHooks() as unknown as Record<string, { constructor: { name: string }; _args: string[] }>;
  const rows = table("hook").map(([names, cls]) => ({ names: spans(names!), cls: cls! }));

  it("lists every hook point once", () => {
    expect(rows.flatMap((r) => r.names).sort()).toEqual(Object.keys(hooks).sort());
  });

  it("gives each hook its tapable class and the number of its arguments", () => {
    for (const { names, cls } of rows) {
      const m = /^(\w+)<\[([^\]]*)\]/.exec(cls);
      expect(m, `"${cls}" for ${names.join(", ")} reads Class<[args], ...>`).not.toBeNull();
      for (const name of names) {
        expect(m![1], name).toBe(hooks[name]!.constructor.name);
        expect(m![2]!.split(",").length, `arguments of ${name}`).toBe(hooks[name]!._args.length);
      }
    }
  });
});

describe("docs/architecture.md event table", () => {
  // each option's `type` is a literal: its one value names the event
  const schemas = new Map(def(AgentEventSchema).options!.map((o) => [def(def(o).shape!.type).values![0]!, o]));
  const rows = table("`type`").map(([types, fields]) => ({ types: spans(types!), fields: fields! }));
  const stopReasons = Object.keys(def(StopReasonSchema).entries!);
  const compacted = def(schemas.get("compacted")).shape!.compaction;
  const triggers = Object.keys(def(def(compacted).shape!.trigger).entries!);

  it("lists every event type once", () => {
    expect(rows.flatMap((r) => r.types).sort()).toEqual([...schemas.keys()].sort());
  });

  it("gives each event exactly its fields, `?` on the optional ones", () => {
    for (const { types, fields } of rows) {
      const named: string[] = [];
      const nested = new Map<string, string[]>();
      for (const span of spans(fields)) {
        const m = /^(\w+)\{([^}]*)\}$/.exec(span);
        if (m) {
          named.push(m[1]!);
          nested.set(m[1]!, m[2]!.split(",").map((f) => f.trim()).sort());
        } else if (/^\w+\??$/.test(span)) {
          named.push(span);
        }
      }
      for (const type of types) {
        const schema = schemas.get(type);
        // values of the enums the row spells out are spans too, not fields
        const values = type === "done" ? stopReasons : type === "compacted" ? triggers : [];
        // and so are the fields of a nested object, when the row's prose mentions them again
        const inner = [...nested.values()].flat().map((f) => f.replace(/\?$/, ""));
        expect(named.filter((n) => !values.includes(n) && !inner.includes(n)).sort(), `fields of ${type}`).toEqual(fieldsOf(schema, ["type", "agent", "model"]));
        for (const v of values) expect(named, `${type} lists the value ${v}`).toContain(v);
      }
      if (nested.has("usage")) expect(nested.get("usage"), "usage{…}").toEqual(fieldsOf(UsageInfoSchema));
      if (nested.has("compaction")) expect(nested.get("compaction"), "compaction{…}").toEqual(fieldsOf(compacted));
    }
  });

  it("says every event may carry agent and model", () => {
    for (const [type, schema] of schemas) expect(fieldsOf(schema).filter((f) => /^(agent|model)\?$/.test(f)), type).toEqual(["agent?", "model?"]);
    expect(doc).toMatch(/Every event may also carry `agent`[^.]*and\s+`model`/);
  });
});

describe("docs/architecture.md registry table", () => {
  it("names the host's registries", async () => {
    const host = await Host.create({ plugins: [], settings: { sandbox: { enabled: false } } });
    const registries = Object.entries(host)
      .filter(([, v]) => v instanceof Registry)
      .map(([k]) => k)
      .sort();
    expect(table("registry (`ctx.<name>`)").map(([name]) => spans(name!)[0]).sort()).toEqual(registries);
  });
});

describe("docs/architecture.md file map", () => {
  it("names every file of kernel/ and kernel/kit/, each under its folder, and no file that is not there", () => {
    const block = /```\n(cli\.ts[\s\S]*?)```/.exec(doc)?.[1];
    expect(block, "the file map block").toBeDefined();
    const lines = block!.split("\n");
    const from = lines.findIndex((l) => l.startsWith("kernel/"));
    const to = lines.findIndex((l, i) => i > from && /^\S/.test(l));
    const kit = lines.findIndex((l, i) => i > from && i < to && l.startsWith("  kit/"));
    expect(kit, "a `  kit/` line in the kernel's section").toBeGreaterThan(from);
    // a name is relative to kernel/ (`kit/x.ts` may be named from the kernel's lines too); the
    // lines indented under `kit/` name files of kernel/kit/
    const named = new Set<string>();
    lines.slice(from + 1, to).forEach((line, i) => {
      const inKit = from + 1 + i > kit && line.startsWith("    ");
      for (const m of line.matchAll(/(?<![\w/.-])((?:kit\/)?[\w-]+\.ts)\b/g)) named.add(inKit && !m[1]!.startsWith("kit/") ? `kit/${m[1]}` : m[1]!);
    });
    const source = (dir: string) => readdirSync(join(root, "kernel", dir)).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    const files = [...source("."), ...source("kit").map((f) => `kit/${f}`)];
    expect(files.filter((f) => !named.has(f)), "kernel files the map leaves out (or names under the wrong folder)").toEqual([]);
    expect([...named].filter((f) => !files.includes(f)), "files the map names that kernel/ lacks").toEqual([]);
  });
});

describe('docs/architecture.md "Reading the kernel"', () => {
  const lineCount = (file: string) => readFileSync(file, "utf8").split("\n").length - 1;
  const source = (dir: string) =>
    readdirSync(join(root, "kernel", dir))
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => join(root, "kernel", dir, f));
  const count = (s: string) => Number(s.replace(/,/g, ""));
  // a figure may lag the code a little: small fixes need not touch it, a new concept must
  const close = (stated: number, actual: number) => Math.abs(stated - actual) <= Math.max(actual / 10, 50);

  it("states the files and lines of the kernel proper and of the kit within a tenth", () => {
    const rows = new Map(table("part").map(([part, files, lines]) => [spans(part!)[0], { files: count(files!), lines: count(lines!) }]));
    for (const [glob, dir] of [["kernel/*.ts", "."], ["kernel/kit/*.ts", "kit"]] as const) {
      const files = source(dir);
      const actual = files.reduce((n, f) => n + lineCount(f), 0);
      const row = rows.get(glob);
      expect(row, `a row for \`${glob}\``).toBeDefined();
      expect(row!.files, `files of ${glob}`).toBe(files.length);
      expect(close(row!.lines, actual), `${glob}: the doc says ${row!.lines} lines, wc -l says ${actual}`).toBe(true);
    }
  });

  it("names every file of the kernel proper once in its reading order, each step with its lines", () => {
    const section = doc.slice(doc.indexOf("### Reading the kernel"), doc.indexOf("### How `larik` starts"));
    const steps = section.split(/\n(?=\d+\. )/).filter((s) => /^\d+\. /.test(s));
    expect(steps.length, "numbered reading steps").toBeGreaterThan(0);
    const named: string[] = [];
    for (const step of steps) {
      const files = spans(step).filter((s) => /^[\w-]+\.ts$/.test(s));
      named.push(...files);
      const stated = /\(([\d,]+) lines\)/.exec(step)?.[1];
      expect(stated, `a "(N lines)" figure in: ${step.slice(0, 40)}…`).toBeDefined();
      const actual = files.reduce((n, f) => n + lineCount(join(root, "kernel", f)), 0);
      expect(close(count(stated!), actual), `${step.slice(0, 40)}…: the doc says ${stated} lines, wc -l says ${actual}`).toBe(true);
    }
    const proper = source(".").map((f) => f.slice(join(root, "kernel").length + 1)).sort();
    expect([...named].sort(), "the files of the reading order").toEqual(proper);
  });
});
