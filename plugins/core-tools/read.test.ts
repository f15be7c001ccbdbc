import { readFileSync } from "node:fs";
import { mkdir, open, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readTool } from "./read.js";
import { call, makeContext, tempDir, writeTree } from "./test-context.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
});
afterEach(() => cleanup());

const FIXTURES = join(import.meta.dirname, "..", "..", "test", "fixtures", "images");
// a whole 1×1 red PNG (the one here before had a bad IDAT checksum and deflate stream)
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cfc0f01f00050001ff89993d1d0000000049454e44ae426082", "hex");

describe("read", () => {
  it("numbers lines with a 6-wide right-aligned number and a tab", async () => {
    await writeTree(root, { "a.txt": "alpha\nbeta\n\tgamma\n" });
    const r = await call(readTool, { path: "a.txt" }, makeContext(root));
    expect(r.is_error).toBeFalsy();
    expect(r.content).toBe("     1\talpha\n     2\tbeta\n     3\t\tgamma");
  });

  it("honours offset and limit and says where to continue", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n");
    await writeTree(root, { "b.txt": lines });
    const r = await call(readTool, { path: "b.txt", offset: 10, limit: 3 }, makeContext(root));
    expect(r.content).toBe("    10\tline 10\n    11\tline 11\n    12\tline 12\n\n[showing lines 10-12 of 30; continue with offset=13]");
  });

  it("drops CR of CRLF lines and refuses an offset past the end", async () => {
    await writeTree(root, { "c.txt": "one\r\ntwo\r\n" });
    const ctx = makeContext(root);
    expect((await call(readTool, { path: "c.txt" }, ctx)).content).toBe("     1\tone\n     2\ttwo");
    const past = await call(readTool, { path: "c.txt", offset: 5 }, ctx);
    expect(past.is_error).toBe(true);
    expect(past.content).toContain("past the end");
    expect(past.content).toContain("2 lines");
  });

  it("cuts long lines at 2000 characters", async () => {
    await writeTree(root, { "long.txt": `${"x".repeat(2500)}\nshort\n` });
    const r = await call(readTool, { path: "long.txt" }, makeContext(root));
    const first = r.content.split("\n")[0]!;
    expect(first.startsWith(`     1\t${"x".repeat(2000)}…`)).toBe(true);
    expect(first).not.toContain("x".repeat(2001));
    expect(first).toContain("2500 chars");
    expect(r.content).toContain("     2\tshort");
  });

  it("measures cut lines exactly in UTF-16 units, across CRLF, multibyte text and read chunks", async () => {
    // 3-byte and 4-byte characters, long enough to span several 64 KiB read chunks.
    await writeTree(root, { "mb.txt": `${"é".repeat(70_000)}\r\n${"€".repeat(30_000)}\n${"😀".repeat(20_000)}\r\nlast` });
    const r = await call(readTool, { path: "mb.txt" }, makeContext(root));
    const lines = r.content.split("\n");
    expect(lines[0]).toBe(`     1\t${"é".repeat(2000)}… [line cut: 70000 chars]`);
    expect(lines[1]).toBe(`     2\t${"€".repeat(2000)}… [line cut: 30000 chars]`);
    // 2000 units end inside no pair: 1000 emoji.
    expect(lines[2]).toBe(`     3\t${"😀".repeat(1000)}… [line cut: 40000 chars]`);
    expect(lines[3]).toBe("     4\tlast");
    expect(r.content).not.toContain("\uFFFD");
  });

  it("reads a one-line file larger than a JavaScript string can hold without loading it", async () => {
    // A sparse file: a text head, then ~540 MB of hole on one line (over V8's ~536.9M-char string limit).
    const size = 540_000_000;
    const fh = await open(join(root, "huge.min.js"), "w");
    try {
      await fh.write("x".repeat(10_000), 0);
      await fh.truncate(size);
      await fh.write("\nnext\n", size);
    } finally {
      await fh.close();
    }
    const r = await call(readTool, { path: "huge.min.js" }, makeContext(root));
    expect(r.is_error, r.content).toBeFalsy();
    expect(r.content).toBe(`     1\t${"x".repeat(2000)}… [line cut: ${size} chars]\n     2\tnext`);
  }, 60_000);

  it("stops at the size budget of one result and gives the next offset", async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `${i} ${"y".repeat(100)}`).join("\n");
    await writeTree(root, { "big.txt": lines });
    const r = await call(readTool, { path: "big.txt" }, makeContext(root));
    expect(Buffer.byteLength(r.content)).toBeLessThan(30_000);
    const m = /\[showing lines 1-(\d+) of 2000 \(size limit of one result\); continue with offset=(\d+)\]/.exec(r.content);
    expect(m).not.toBeNull();
    expect(Number(m![2])).toBe(Number(m![1]) + 1);
  });

  it("refuses binary files and directories with a clear message", async () => {
    await writeTree(root, { "bin.dat": Buffer.from([1, 2, 0, 3, 4]) });
    await mkdir(join(root, "dir"));
    const ctx = makeContext(root);
    const bin = await call(readTool, { path: "bin.dat" }, ctx);
    expect(bin.is_error).toBe(true);
    expect(bin.content).toContain("binary file");
    const dir = await call(readTool, { path: "dir" }, ctx);
    expect(dir.is_error).toBe(true);
    expect(dir.content).toContain("is a directory");
    const missing = await call(readTool, { path: "nope.txt" }, ctx);
    expect(missing.is_error).toBe(true);
    expect(missing.content).toBe("file not found: nope.txt");
  });

  it("returns images as images", async () => {
    await writeTree(root, { "dot.png": PNG });
    const r = await call(readTool, { path: "dot.png" }, makeContext(root));
    expect(r.is_error).toBeFalsy();
    expect(r.images).toEqual([{ media_type: "image/png", data: PNG.toString("base64") }]);
  });

  it("answers a truncated or corrupt image with a text error instead of sending it", async () => {
    // a real JPEG and PNG (CPython's test images), cut or damaged as a failed download leaves them
    const jpg = readFileSync(join(FIXTURES, "python.jpg"));
    const png = readFileSync(join(FIXTURES, "python.png"));
    const flipped = Buffer.from(png);
    flipped[60]! ^= 0xff;
    await writeTree(root, { "cut.jpg": jpg.subarray(0, jpg.length - 40), "cut.png": png.subarray(0, 700), "bad.png": flipped, "ok.jpg": jpg });
    const ctx = makeContext(root);
    const results = await Promise.all(["cut.jpg", "cut.png", "bad.png"].map((path) => call(readTool, { path }, ctx)));
    expect(results.map((r) => [r.is_error, r.images, r.content])).toEqual([
      [true, undefined, "cut.jpg could not be read as an image: truncated JPEG (no end-of-image marker); it was not sent to the model"],
      [true, undefined, "cut.png could not be read as an image: truncated PNG (the IDAT chunk runs past the end of the file); it was not sent to the model"],
      [true, undefined, "bad.png could not be read as an image: corrupt PNG (bad checksum in the cHRM chunk); it was not sent to the model"],
    ]);
    // the whole file still goes out as an image
    expect((await call(readTool, { path: "ok.jpg" }, ctx)).images).toEqual([{ media_type: "image/jpeg", data: jpg.toString("base64") }]);
  });

  it("sends an image with the type its bytes say, not its name's", async () => {
    const jpg = readFileSync(join(FIXTURES, "python.jpg"));
    await writeTree(root, { "shot.png": jpg });
    const r = await call(readTool, { path: "shot.png" }, makeContext(root));
    expect([r.is_error, r.content, r.images?.[0]?.media_type]).toEqual([undefined, `Image shot.png (image/jpeg, ${jpg.length} bytes)`, "image/jpeg"]);
  });

  it("records the mtime for freshness", async () => {
    await writeTree(root, { "m.txt": "x\n" });
    const ctx = makeContext(root);
    await call(readTool, { path: "m.txt" }, ctx);
    expect(ctx.files.lastRead(join(root, "m.txt"))).toBe((await stat(join(root, "m.txt"))).mtimeMs);
  });

  it("records the mtime of an image it returns too, so the image may then be replaced", async () => {
    await writeTree(root, { "dot.png": PNG });
    const ctx = makeContext(root);
    await call(readTool, { path: "dot.png" }, ctx);
    expect(ctx.files.lastRead(join(root, "dot.png"))).toBe((await stat(join(root, "dot.png"))).mtimeMs);
  });

  it("answers a repeated unchanged read briefly once, then returns the text again", async () => {
    await writeTree(root, { "r.txt": "hello\n" });
    const ctx = makeContext(root);
    const first = await call(readTool, { path: "r.txt" }, ctx);
    expect(first.content).toBe("     1\thello");
    const second = await call(readTool, { path: "r.txt" }, ctx);
    expect(second.content).toContain("unchanged since your last read");
    const third = await call(readTool, { path: "r.txt" }, ctx);
    expect(third.content).toBe("     1\thello");
    // A different range is a new read.
    expect((await call(readTool, { path: "r.txt", limit: 5 }, ctx)).content).toBe("     1\thello");
    // A change on disk is a new read too.
    await writeFile(join(root, "r.txt"), "world\n");
    const later = new Date(Date.now() + 5_000);
    await utimes(join(root, "r.txt"), later, later);
    expect((await call(readTool, { path: "r.txt", limit: 5 }, ctx)).content).toBe("     1\tworld");
  });

  it("reads through symlinks and outside the project (read is not confined)", async () => {
    const { dir: other, cleanup: c2 } = await tempDir();
    try {
      await writeTree(other, { "o.txt": "outside\n" });
      await symlink(join(other, "o.txt"), join(root, "link.txt"));
      const ctx = makeContext(root);
      expect((await call(readTool, { path: "link.txt" }, ctx)).content).toBe("     1\toutside");
      expect((await call(readTool, { path: join(other, "o.txt") }, ctx)).content).toBe("     1\toutside");
    } finally {
      await c2();
    }
  });

  it("reports an empty file and validates arguments", async () => {
    await writeTree(root, { "e.txt": "" });
    const ctx = makeContext(root);
    expect((await call(readTool, { path: "e.txt" }, ctx)).content).toBe("e.txt is empty");
    const bad = await call(readTool, { path: "e.txt", offset: 0 }, ctx);
    expect(bad.is_error).toBe(true);
    expect(bad.content).toMatch(/^INVALID_ARGUMENTS: read: offset/);
  });
});
