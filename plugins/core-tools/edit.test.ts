import { readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editTool } from "./edit.js";
import { multiEditTool } from "./multi_edit.js";
import { readTool } from "./read.js";
import { call, makeContext, tempDir, type TestContext } from "./test-context.js";

let root: string;
let cleanup: () => Promise<void>;
let ctx: TestContext;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
  ctx = makeContext(root);
});
afterEach(() => cleanup());

/** Writes `bytes` to `name` and reads it with the tool so edits are allowed. */
async function prepared(name: string, bytes: string | Buffer): Promise<string> {
  await writeFile(join(root, name), bytes);
  const r = await call(readTool, { path: name }, ctx);
  expect(r.is_error).toBeFalsy();
  return join(root, name);
}

async function bytesOf(abs: string): Promise<string> {
  return (await readFile(abs)).toString("latin1");
}

describe("edit", () => {
  it("replaces a unique match and reports the line", async () => {
    const f = await prepared("a.ts", "const a = 1;\nconst b = 2;\n");
    const r = await call(editTool, { path: "a.ts", old_string: "const b = 2;", new_string: "const b = 3;" }, ctx);
    expect(r.is_error).toBeFalsy();
    expect(r.content).toBe("Edited a.ts: 1 replacement at line 2");
    expect(await readFile(f, "utf8")).toBe("const a = 1;\nconst b = 3;\n");
    expect(ctx.checkpoints).toEqual([f]);
    const display = r.display as { type: string; diff: string; added: number; removed: number };
    expect(display.type).toBe("diff");
    expect(display.diff).toContain("-const b = 2;\n+const b = 3;");
    expect(display.diff.startsWith("--- a.ts\n+++ a.ts\n@@ -1,2 +1,2 @@")).toBe(true);
    expect([display.added, display.removed]).toEqual([1, 1]);
  });

  it("states how many matches make it ambiguous, and replace_all changes them all", async () => {
    const f = await prepared("dup.txt", "x = 1\nx = 1\nx = 1\n");
    const r = await call(editTool, { path: "dup.txt", old_string: "x = 1", new_string: "x = 2" }, ctx);
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("old_string matches 3 times in dup.txt");
    expect(await readFile(f, "utf8")).toBe("x = 1\nx = 1\nx = 1\n");
    const all = await call(editTool, { path: "dup.txt", old_string: "x = 1", new_string: "x = 2", replace_all: true }, ctx);
    expect(all.content).toBe("Edited dup.txt: 3 replacements at line 1");
    expect(await readFile(f, "utf8")).toBe("x = 2\nx = 2\nx = 2\n");
  });

  it("two matches are already ambiguous: nothing is changed", async () => {
    const f = await prepared("two.txt", "x = 1\ny = 0\nx = 1\n");
    const r = await call(editTool, { path: "two.txt", old_string: "x = 1", new_string: "x = 2" }, ctx);
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("old_string matches 2 times in two.txt");
    expect(await readFile(f, "utf8")).toBe("x = 1\ny = 0\nx = 1\n");
  });

  it("rejects identical strings, an empty old_string and a missing match", async () => {
    await prepared("s.txt", "hello\n    indented line\n");
    const same = await call(editTool, { path: "s.txt", old_string: "hello", new_string: "hello" }, ctx);
    expect(same.content).toContain("identical");
    const empty = await call(editTool, { path: "s.txt", old_string: "", new_string: "x" }, ctx);
    expect(empty.content).toContain("old_string is empty");
    const none = await call(editTool, { path: "s.txt", old_string: "\tindented line", new_string: "x" }, ctx);
    expect(none.is_error).toBe(true);
    expect(none.content).toContain("old_string not found in s.txt");
    expect(none.content).toContain("at line 2");
    expect(ctx.checkpoints).toEqual([]);
  });

  it("keeps `$` sequences in new_string literal", async () => {
    const f = await prepared("d.js", "let price = OLD;\n");
    await call(editTool, { path: "d.js", old_string: "OLD", new_string: "$& $1 $$ $' $` $<n>" }, ctx);
    expect(await readFile(f, "utf8")).toBe("let price = $& $1 $$ $' $` $<n>;\n");
  });

  it("matches an LF old_string in a CRLF file and writes CRLF", async () => {
    const f = await prepared("win.txt", "one\r\ntwo\r\nthree\r\n");
    const r = await call(editTool, { path: "win.txt", old_string: "one\ntwo\n", new_string: "uno\ndos\nextra\n" }, ctx);
    expect(r.is_error).toBeFalsy();
    expect(await bytesOf(f)).toBe("uno\r\ndos\r\nextra\r\nthree\r\n");
    // A one-line old_string whose replacement adds lines gets CRLF too.
    await call(editTool, { path: "win.txt", old_string: "three", new_string: "3\n4" }, ctx);
    expect(await bytesOf(f)).toBe("uno\r\ndos\r\nextra\r\n3\r\n4\r\n");
  });

  it("keeps a UTF-8 BOM and a missing final newline", async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const f = await prepared("bom.txt", Buffer.concat([bom, Buffer.from("first\nlast")]));
    await call(editTool, { path: "bom.txt", old_string: "last", new_string: "final\n" }, ctx);
    const out = await readFile(f);
    expect(out.subarray(0, 3)).toEqual(bom);
    expect(out.subarray(3).toString("utf8")).toBe("first\nfinal");
  });

  it("keeps the final newline when the replacement drops it", async () => {
    const f = await prepared("nl.txt", "a\nb\n");
    await call(editTool, { path: "nl.txt", old_string: "b\n", new_string: "c" }, ctx);
    expect(await readFile(f, "utf8")).toBe("a\nc\n");
  });

  it("says so when an edit would only add or remove the final newline", async () => {
    const f = await prepared("nl.txt", "a\nb\n");
    const drop = await call(editTool, { path: "nl.txt", old_string: "b\n", new_string: "b" }, ctx);
    expect(drop.is_error).toBe(true);
    expect(drop.content).toBe("the edit would only remove the final newline of nl.txt, which edit keeps as it is; use write to change it");
    await prepared("none.txt", "a\nb");
    const add = await call(editTool, { path: "none.txt", old_string: "b", new_string: "b\n" }, ctx);
    expect(add.content).toBe("the edit would only add the final newline of none.txt, which edit keeps as it is; use write to change it");
    expect(await readFile(f, "utf8")).toBe("a\nb\n");
  });

  it("keeps tabs byte for byte", async () => {
    const f = await prepared("Makefile", "all:\n\tgcc -o x x.c\n\techo done\n");
    await call(editTool, { path: "Makefile", old_string: "\tgcc -o x x.c", new_string: "\tgcc -O2 -o x x.c" }, ctx);
    expect(await readFile(f, "utf8")).toBe("all:\n\tgcc -O2 -o x x.c\n\techo done\n");
  });

  it("matches curly quotes exactly, and straight quotes against curly ones as a fallback", async () => {
    const f = await prepared("q.md", "He said “hello” and ‘bye’.\n");
    await call(editTool, { path: "q.md", old_string: "“hello”", new_string: "“hi”" }, ctx);
    expect(await readFile(f, "utf8")).toBe("He said “hi” and ‘bye’.\n");
    const r = await call(editTool, { path: "q.md", old_string: "'bye'", new_string: "'ciao'" }, ctx);
    expect(r.content).toContain("typographic quotes");
    expect(await readFile(f, "utf8")).toBe("He said “hi” and 'ciao'.\n");
  });

  it("needs a fresh read and an existing file", async () => {
    await writeFile(join(root, "u.txt"), "x\n");
    const unread = await call(editTool, { path: "u.txt", old_string: "x", new_string: "y" }, ctx);
    expect(unread.content).toContain("has not been read yet");
    const missing = await call(editTool, { path: "none.txt", old_string: "x", new_string: "y" }, ctx);
    expect(missing.content).toContain("does not exist; use write");
    const f = await prepared("u.txt", "x\n");
    const later = new Date(Date.now() + 10_000);
    await utimes(f, later, later);
    const stale = await call(editTool, { path: "u.txt", old_string: "x", new_string: "y" }, ctx);
    expect(stale.content).toContain("changed on disk");
    expect(await readFile(f, "utf8")).toBe("x\n");
  });

  it("refuses binary and non-UTF-8 files", async () => {
    await prepared("latin.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const r = await call(editTool, { path: "latin.txt", old_string: "caf", new_string: "tea" }, ctx);
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("not valid UTF-8");
  });
});

describe("multi_edit", () => {
  it("applies edits in order, each on the previous result, with one checkpoint", async () => {
    const f = await prepared("m.py", "def f():\n    return 1\n\ndef g():\n    return 2\n");
    const r = await call(
      multiEditTool,
      {
        path: "m.py",
        edits: [
          { old_string: "return 1", new_string: "return 10" },
          { old_string: "return 10", new_string: "return 100" },
          { old_string: "def", new_string: "async def", replace_all: true },
        ],
      },
      ctx,
    );
    expect(r.is_error).toBeFalsy();
    expect(r.content).toBe("Applied 3 edits to m.py (4 replacements, first at line 1)");
    expect(await readFile(f, "utf8")).toBe("async def f():\n    return 100\n\nasync def g():\n    return 2\n");
    expect(ctx.checkpoints).toEqual([f]);
  });

  it("is all or nothing", async () => {
    const f = await prepared("m.txt", "alpha\nbeta\n");
    const r = await call(
      multiEditTool,
      {
        path: "m.txt",
        edits: [
          { old_string: "alpha", new_string: "ALPHA" },
          { old_string: "gamma", new_string: "GAMMA" },
        ],
      },
      ctx,
    );
    expect(r.is_error).toBe(true);
    expect(r.content).toMatch(/^edit 2 of 2: old_string not found in m\.txt\..*No edit was applied\.$/);
    expect(await readFile(f, "utf8")).toBe("alpha\nbeta\n");
    expect(ctx.checkpoints).toEqual([]);
  });
});
