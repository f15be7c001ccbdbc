import { chmod, mkdir, readFile, readdir, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { protectedPathReason } from "../../kernel/index.js";
import { readTool } from "./read.js";
import { call, makeContext, tempDir, writeTree } from "./test-context.js";
import { writeTool } from "./write.js";
import { writeFilesTool } from "./write_files.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
});
afterEach(() => cleanup());

describe("write", () => {
  it("creates a file and its parent folders after a checkpoint", async () => {
    const ctx = makeContext(root);
    const r = await call(writeTool, { path: "a/b/new.txt", content: "hi\nthere\n" }, ctx);
    expect(r.is_error).toBeFalsy();
    expect(r.content).toBe("Created a/b/new.txt (2 lines, 9 bytes)");
    expect(await readFile(join(root, "a/b/new.txt"), "utf8")).toBe("hi\nthere\n");
    expect(ctx.checkpoints).toEqual([join(root, "a/b/new.txt")]);
    expect(r.display).toMatchObject({ type: "diff", path: "a/b/new.txt", created: true, added: 2, removed: 0 });
  });

  it("refuses to overwrite a file that was not read", async () => {
    await writeTree(root, { "x.txt": "old\n" });
    const ctx = makeContext(root);
    const r = await call(writeTool, { path: "x.txt", content: "new\n" }, ctx);
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("has not been read yet");
    expect(await readFile(join(root, "x.txt"), "utf8")).toBe("old\n");
    expect(ctx.checkpoints).toEqual([]);
  });

  it("refuses a file changed on disk since it was read, and accepts it after a fresh read", async () => {
    await writeTree(root, { "x.txt": "old\n" });
    const ctx = makeContext(root);
    await call(readTool, { path: "x.txt" }, ctx);
    await writeFile(join(root, "x.txt"), "edited by the user\n");
    const later = new Date(Date.now() + 10_000);
    await utimes(join(root, "x.txt"), later, later);
    const stale = await call(writeTool, { path: "x.txt", content: "new\n" }, ctx);
    expect(stale.is_error).toBe(true);
    expect(stale.content).toContain("changed on disk since it was last read");
    expect(await readFile(join(root, "x.txt"), "utf8")).toBe("edited by the user\n");
    await call(readTool, { path: "x.txt" }, ctx);
    const ok = await call(writeTool, { path: "x.txt", content: "new\n" }, ctx);
    expect(ok.content).toBe("Overwrote x.txt (1 line, 4 bytes)");
    expect(await readFile(join(root, "x.txt"), "utf8")).toBe("new\n");
  });

  it("keeps the file mode, leaves no temp file, and allows a second write without rereading", async () => {
    await writeTree(root, { "run.sh": "echo 1\n" });
    await chmod(join(root, "run.sh"), 0o750);
    const ctx = makeContext(root);
    await call(readTool, { path: "run.sh" }, ctx);
    await call(writeTool, { path: "run.sh", content: "echo 2\n" }, ctx);
    const again = await call(writeTool, { path: "run.sh", content: "echo 3\n" }, ctx);
    expect(again.is_error).toBeFalsy();
    expect((await stat(join(root, "run.sh"))).mode & 0o777).toBe(0o750);
    expect(await readdir(root)).toEqual(["run.sh"]);
  });

  it("keeps a mode the umask would narrow (group- and world-writable)", async () => {
    await writeTree(root, { "shared.txt": "1\n" });
    await chmod(join(root, "shared.txt"), 0o666);
    const ctx = makeContext(root);
    await call(readTool, { path: "shared.txt" }, ctx);
    expect((await call(writeTool, { path: "shared.txt", content: "2\n" }, ctx)).is_error).toBeFalsy();
    expect((await stat(join(root, "shared.txt"))).mode & 0o777).toBe(0o666);
  });

  it("does not write when the checkpoint fails", async () => {
    const ctx = makeContext(root, { failCheckpoint: () => true });
    const r = await call(writeTool, { path: "n.txt", content: "x" }, ctx);
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("could not checkpoint n.txt");
    expect(r.content).toContain("disk full");
    await expect(stat(join(root, "n.txt"))).rejects.toThrow();
  });

  it("takes ~/ as the home folder, as the permission checker does, never as a folder named ~", async () => {
    const home = process.env.HOME;
    process.env.HOME = root; // the project lies in the home folder, as most do
    try {
      const ctx = makeContext(root);
      const w = await call(writeTool, { path: "~/notes/a.txt", content: "hi\n" }, ctx);
      expect([w.is_error, w.content]).toEqual([undefined, "Created notes/a.txt (1 line, 3 bytes)"]);
      expect(await readFile(join(root, "notes/a.txt"), "utf8")).toBe("hi\n");
      const r = await call(readTool, { path: "~/notes/a.txt" }, ctx);
      expect(r.content).toBe("     1\thi");
      const dup = await call(writeFilesTool, { files: [{ path: "~/b.txt", content: "1" }, { path: "b.txt", content: "2" }] }, ctx);
      expect(dup.content).toContain("duplicate path");
      expect(existsSync(join(root, "~"))).toBe(false);
    } finally {
      process.env.HOME = home;
    }
  });

  it("refuses paths outside the project, `..` escapes and absolute paths elsewhere", async () => {
    await mkdir(join(root, "proj"));
    const proj = join(root, "proj");
    const ctx = makeContext(proj);
    for (const p of ["../escape.txt", "sub/../../escape.txt", join(root, "escape.txt"), "/etc/passwd-larik"]) {
      const r = await call(writeTool, { path: p, content: "x" }, ctx);
      expect(r.is_error, p).toBe(true);
      expect(r.content, p).toContain("outside the project");
    }
    await expect(stat(join(root, "escape.txt"))).rejects.toThrow();
    // `..` that stays inside is fine.
    const inside = await call(writeTool, { path: "sub/../ok.txt", content: "x" }, ctx);
    expect(inside.content).toBe("Created ok.txt (1 line, 1 byte)");
  });

  it("refuses any symlink component, to a file or to a folder, even inside the project", async () => {
    const { dir: outside, cleanup: c2 } = await tempDir();
    try {
      await writeTree(root, { "real/target.txt": "t\n" });
      await symlink(outside, join(root, "out"));
      await symlink(join(root, "real"), join(root, "alias"));
      await symlink(join(root, "real/target.txt"), join(root, "file-link.txt"));
      const ctx = makeContext(root);
      await call(readTool, { path: "file-link.txt" }, ctx);
      for (const [p, shown] of [
        ["out/x.txt", "out"],
        ["alias/target.txt", "alias"],
        ["alias/new/deeper.txt", "alias"],
        ["file-link.txt", "file-link.txt"],
        // `..` is normalized before any check, so this is out/y.txt.
        ["out/../out/y.txt", "out"],
      ] as const) {
        const r = await call(writeTool, { path: p, content: "pwned" }, ctx);
        expect(r.is_error, p).toBe(true);
        expect(r.content, p).toBe(`refused: ${shown} is a symlink; file tools do not write through symlinks`);
      }
      expect(await readdir(outside)).toEqual([]);
      expect(await readFile(join(root, "real/target.txt"), "utf8")).toBe("t\n");
    } finally {
      await c2();
    }
  });

  it("refuses protected paths in every form", async () => {
    const ctx = makeContext(root);
    for (const p of [
      ".git",
      ".git/hooks/pre-commit",
      ".git/config",
      ".git/info/exclude",
      ".git/modules/x/config",
      ".git/worktrees/w/HEAD",
      ".git/config.worktree",
      ".git/commondir",
      ".larik/settings.json",
      ".claude/settings.json",
      ".mcp.json",
      "sub/.git/hooks/post-checkout",
      ".GIT/HOOKS/pre-push",
    ]) {
      const r = await call(writeTool, { path: p, content: "x" }, ctx);
      expect(r.is_error, p).toBe(true);
      expect(r.content, p).toMatch(/^refused: [^:]+: \S+ (itself )?is protected: /);
    }
    expect(await readdir(root)).toEqual([]);
    expect(protectedPathReason(".git/objects/ab/cdef")).toBeUndefined();
    expect(protectedPathReason("src/mcp.json")).toBeUndefined();
  });

  it("refuses a directory target and a file used as a folder", async () => {
    await writeTree(root, { "d/f.txt": "x", "plain": "p" });
    const ctx = makeContext(root);
    expect((await call(writeTool, { path: "d", content: "x" }, ctx)).content).toContain("is a directory");
    expect((await call(writeTool, { path: "plain/child.txt", content: "x" }, ctx)).content).toContain("is not a directory");
    const slash = await call(writeTool, { path: "d/new/", content: "x" }, ctx);
    expect(slash.is_error).toBe(true);
    expect(slash.content).toBe("refused: d/new/ ends with a slash, so it names a folder; give a file path (folders are created as needed)");
    expect(existsSync(join(root, "d/new"))).toBe(false);
  });
});

describe("write_files", () => {
  it("writes every file with one checkpoint each", async () => {
    const ctx = makeContext(root);
    const r = await call(writeFilesTool, { files: [{ path: "a.txt", content: "a" }, { path: "b/c.txt", content: "c\n" }] }, ctx);
    expect(r.is_error).toBeFalsy();
    expect(r.content).toBe("Created a.txt (1 line, 1 byte)\nCreated b/c.txt (1 line, 2 bytes)");
    expect(ctx.checkpoints).toEqual([join(root, "a.txt"), join(root, "b/c.txt")]);
  });

  it("rejects duplicate paths, also when spelled differently", async () => {
    const ctx = makeContext(root);
    const r = await call(writeFilesTool, { files: [{ path: "a.txt", content: "1" }, { path: "./x/../a.txt", content: "2" }] }, ctx);
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("duplicate path");
    expect(await readdir(root)).toEqual([]);
  });

  it("checks every path before writing anything", async () => {
    await writeTree(root, { "exists.txt": "unread" });
    const ctx = makeContext(root);
    const r = await call(
      writeFilesTool,
      { files: [{ path: "first.txt", content: "1" }, { path: "exists.txt", content: "2" }, { path: ".mcp.json", content: "{}" }] },
      ctx,
    );
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("exists.txt exists and has not been read yet");
    expect(r.content).toContain("Nothing was written.");
    expect((await readdir(root)).sort()).toEqual(["exists.txt"]);
  });

  it("stops at the first failure while writing and reports what was written", async () => {
    const ctx = makeContext(root, { failCheckpoint: (abs) => abs.endsWith("two.txt") });
    const r = await call(
      writeFilesTool,
      {
        files: [
          { path: "one.txt", content: "1" },
          { path: "two.txt", content: "2" },
          { path: "three.txt", content: "3" },
        ],
      },
      ctx,
    );
    expect(r.is_error).toBe(true);
    expect(r.content).toContain("Stopped at two.txt");
    expect(r.content).toContain("Already written:\n- Created one.txt (1 line, 1 byte)");
    expect(r.content).toContain("Not written: three.txt");
    expect((await readdir(root)).sort()).toEqual(["one.txt"]);
  });

  it("needs 2 to 16 files", async () => {
    const r = await call(writeFilesTool, { files: [{ path: "a", content: "" }] }, makeContext(root));
    expect(r.is_error).toBe(true);
    // a model that meant `write` is told so
    expect(r.content).toMatch(/^INVALID_ARGUMENTS: write_files: files: give 2 to 16 files; to write one file, use write\. /);
    expect(writeFilesTool.writePaths!({ files: [{ path: "a", content: "" }, { path: "b/c", content: "" }] })).toEqual(["a", "b/c"]);
  });
});
