import { execFileSync } from "node:child_process";
import { chmod, utimes } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { globTool } from "./glob.js";
import { splitPattern } from "./glob-core.js";
import { grepTool } from "./grep.js";
import { call, makeContext, tempDir, writeTree } from "./test-context.js";
import { ripgrepPath } from "./walk.js";

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir());
});
afterEach(() => cleanup());

let rg: string | undefined;
beforeAll(async () => {
  rg = await ripgrepPath(undefined);
});

async function age(rel: string, secondsAgo: number): Promise<void> {
  const t = new Date(Date.now() - secondsAgo * 1000);
  await utimes(join(root, rel), t, t);
}

it("finds the bundled ripgrep (otherwise the rg cases below test nothing)", () => {
  expect(rg).toBeTruthy();
});

it("splits a pattern into its literal leading folder and the glob", () => {
  expect(splitPattern("**/*.ts")).toEqual({ base: "", rest: "**/*.ts" });
  expect(splitPattern(".github/workflows/*.yml")).toEqual({ base: ".github/workflows", rest: "*.yml" });
  expect(splitPattern("src/index.ts")).toEqual({ base: "src", rest: "index.ts" });
  expect(splitPattern("/abs/dir/**/x")).toEqual({ base: "/abs/dir", rest: "**/x" });
});

for (const mode of ["ripgrep", "javascript"] as const) {
  const opts = mode === "ripgrep" ? {} : { ripgrep: false as const };

  describe(`glob (${mode})`, () => {
    beforeEach(async () => {
      await writeTree(root, {
        ".gitignore": "ignored/\n*.log\n",
        "src/old.ts": "",
        "src/new.ts": "",
        "src/deep/mid.ts": "",
        "top.ts": "",
        "ignored/x.ts": "",
        "debug.log": "",
        "node_modules/pkg/index.ts": "",
        ".github/workflows/ci.yml": "",
      });
      await age("src/old.ts", 300);
      await age("src/deep/mid.ts", 200);
      await age("top.ts", 100);
      await age("src/new.ts", 10);
    });

    it("lists matches newest first, relative to cwd, honouring .gitignore outside git", async () => {
      const r = await call(globTool(opts), { pattern: "**/*.ts" }, makeContext(root));
      // node_modules is skipped by the JS walker; rg skips it only when ignored, so it is left out of the check.
      const lines = r.content.split("\n").filter((l) => !l.startsWith("node_modules/"));
      expect(lines).toEqual(["src/new.ts", "top.ts", "src/deep/mid.ts", "src/old.ts"]);
    });

    it("matches only the top level for a pattern without **, and searches under path", async () => {
      expect((await call(globTool(opts), { pattern: "*.ts" }, makeContext(root))).content).toBe("top.ts");
      const sub = await call(globTool(opts), { pattern: "*.ts", path: "src" }, makeContext(root));
      expect(sub.content).toBe("src/new.ts\nsrc/old.ts");
      const fromSub = await call(globTool(opts), { pattern: "**/*.ts" }, makeContext(root, { cwd: join(root, "src") }));
      expect(fromSub.content.split("\n")).toEqual(["new.ts", "deep/mid.ts", "old.ts"]);
    });

    it("searches a literal leading dot-folder", async () => {
      const r = await call(globTool(opts), { pattern: ".github/workflows/*.yml" }, makeContext(root));
      expect(r.content).toBe(".github/workflows/ci.yml");
    });

    it("lists the files below a pattern that names a folder", async () => {
      const ctx = makeContext(root);
      for (const pattern of ["src/", "src", "./src/deep/", "src/deep"]) {
        const r = await call(globTool(opts), { pattern }, ctx);
        expect(r.content, pattern).toBe(pattern.includes("deep") ? "src/deep/mid.ts" : "src/new.ts\nsrc/deep/mid.ts\nsrc/old.ts");
      }
    });

    it("says when nothing matches", async () => {
      expect((await call(globTool(opts), { pattern: "**/*.rs" }, makeContext(root))).content).toBe("No files match **/*.rs");
      expect((await call(globTool(opts), { pattern: "nowhere/*.rs" }, makeContext(root))).content).toBe("No files match nowhere/*.rs");
    });
  });

  describe(`grep (${mode})`, () => {
    beforeEach(async () => {
      await writeTree(root, {
        ".gitignore": "secret/\n",
        "a.ts": "const needle = 1;\nconst other = 2;\n",
        "b.go": "package main // Needle here\n",
        "sub/c.ts": "x\nneedle again\n",
        "secret/d.ts": "needle hidden\n",
        "bin.dat": Buffer.from("needle\0binary"),
      });
    });

    it("prints path:line:text relative to cwd, sorted, honouring .gitignore without git", async () => {
      const r = await call(grepTool(opts), { pattern: "needle" }, makeContext(root));
      expect(r.content).toBe("a.ts:1:const needle = 1;\nsub/c.ts:2:needle again");
    });

    it("supports ignore_case, glob, a path and regex syntax", async () => {
      const ctx = makeContext(root);
      expect((await call(grepTool(opts), { pattern: "needle", ignore_case: true, glob: "*.go" }, ctx)).content).toBe(
        "b.go:1:package main // Needle here",
      );
      expect((await call(grepTool(opts), { pattern: "ne+dle\\s+again", path: "sub" }, ctx)).content).toBe("sub/c.ts:2:needle again");
      expect((await call(grepTool(opts), { pattern: "needle", path: "a.ts" }, ctx)).content).toBe("a.ts:1:const needle = 1;");
      const fromSub = await call(grepTool(opts), { pattern: "needle", path: ".." }, makeContext(root, { cwd: join(root, "sub") }));
      // Paths outside cwd are shown absolute.
      expect(fromSub.content).toBe(`${root}/a.ts:1:const needle = 1;\nc.ts:2:needle again`);
    });

    it("caps matches per file, line width and total lines", async () => {
      const many = Array.from({ length: 80 }, (_, i) => `hit ${i}`).join("\n");
      await writeTree(root, { "many.txt": many, "wide.txt": `hit ${"w".repeat(400)}\n` });
      const r = await call(grepTool(opts), { pattern: "hit", glob: "*.txt" }, makeContext(root));
      const lines = r.content.split("\n");
      expect(lines.filter((l) => l.startsWith("many.txt:")).length).toBe(50);
      const wide = lines.find((l) => l.startsWith("wide.txt:"))!;
      expect(wide).toContain("omitted");
      expect(wide.length).toBeLessThan(400);

      const files: Record<string, string> = {};
      for (let i = 0; i < 12; i++) files[`f${String(i).padStart(2, "0")}.txt`] = many;
      await writeTree(root, files);
      const big = await call(grepTool(opts), { pattern: "hit", glob: "f*.txt" }, makeContext(root));
      const out = big.content.split("\n");
      expect(out.filter((l) => /^f\d\d\.txt:/.test(l)).length).toBe(500);
      expect(big.content).toContain("[stopped at 500 lines");
    });

    it("accepts look-around and backreferences, as the JavaScript search does", async () => {
      const ctx = makeContext(root);
      expect((await call(grepTool(opts), { pattern: "const (?=needle)" }, ctx)).content).toBe("a.ts:1:const needle = 1;");
      expect((await call(grepTool(opts), { pattern: "(?<!const )needle" }, ctx)).content).toBe("sub/c.ts:2:needle again");
      expect((await call(grepTool(opts), { pattern: "(e)\\1d" }, ctx)).content).toBe(
        "a.ts:1:const needle = 1;\nb.go:1:package main // Needle here\nsub/c.ts:2:needle again",
      );
    });

    it("treats CRLF line ends like LF ones: `$` matches before them and no \\r is printed", async () => {
      await writeTree(root, { "win.txt": "alpha end\r\nbeta end\r\nend not\r\n" });
      const r = await call(grepTool(opts), { pattern: "end$", glob: "*.txt" }, makeContext(root));
      expect(r.content).toBe("win.txt:1:alpha end\nwin.txt:2:beta end");
      const all = await call(grepTool(opts), { pattern: "end", path: "win.txt" }, makeContext(root));
      expect(all.content).toBe("win.txt:1:alpha end\nwin.txt:2:beta end\nwin.txt:3:end not");
    });

    it("matches a glob with a folder against the path from cwd, also under path", async () => {
      const ctx = makeContext(root);
      expect((await call(grepTool(opts), { pattern: "needle", path: "sub", glob: "sub/*.ts" }, ctx)).content).toBe("sub/c.ts:2:needle again");
      expect((await call(grepTool(opts), { pattern: "needle", path: "sub", glob: "c.ts" }, ctx)).content).toBe("sub/c.ts:2:needle again");
      expect((await call(grepTool(opts), { pattern: "needle", glob: "sub/**" }, ctx)).content).toBe("sub/c.ts:2:needle again");
    });

    it("skips binary files in a folder, and says a binary file named by path matches", async () => {
      const ctx = makeContext(root);
      expect((await call(grepTool(opts), { pattern: "binary" }, ctx)).content).toBe("No matches for binary");
      expect((await call(grepTool(opts), { pattern: "needle", path: "bin.dat" }, ctx)).content).toBe("bin.dat: binary file matches");
      expect((await call(grepTool(opts), { pattern: "zzz", path: "bin.dat" }, ctx)).content).toBe("No matches for zzz in bin.dat");
    });

    it("reports no matches and bad regexes", async () => {
      expect((await call(grepTool(opts), { pattern: "zzz" }, makeContext(root))).content).toBe("No matches for zzz");
      const bad = await call(grepTool(opts), { pattern: "(unclosed" }, makeContext(root));
      expect(bad.is_error).toBe(true);
      // one line that names the pattern and says what is wrong with it
      const reasons = {
        "foo((": mode === "ripgrep" ? "missing closing parenthesis" : "Unterminated group",
        "a{2,1}": "numbers out of order in {} quantifier",
        "[z-a]": mode === "ripgrep" ? "range out of order in character class" : "Range out of order in character class",
      };
      for (const [pattern, reason] of Object.entries(reasons)) {
        const r = await call(grepTool(opts), { pattern }, makeContext(root));
        expect([r.is_error, r.content]).toEqual([true, `invalid regular expression ${JSON.stringify(pattern)}: ${reason}`]);
      }
    });
  });
}

describe("grep inside a git repository", () => {
  it("honours nested .gitignore files and .gitignore above the searched folder", async () => {
    execFileSync("git", ["init", "-q"], { cwd: root });
    await writeTree(root, {
      ".gitignore": "*.gen.ts\n",
      "pkg/.gitignore": "out/\n",
      "pkg/src/a.ts": "token\n",
      "pkg/src/a.gen.ts": "token\n",
      "pkg/out/b.ts": "token\n",
    });
    for (const opts of [{}, { ripgrep: false as const }]) {
      const r = await call(grepTool(opts), { pattern: "token", path: "pkg" }, makeContext(root));
      expect(r.content, JSON.stringify(opts)).toBe("pkg/src/a.ts:1:token");
      const g = await call(globTool(opts), { pattern: "**/*.ts", path: "pkg" }, makeContext(root));
      expect(g.content, JSON.stringify(opts)).toBe("pkg/src/a.ts");
    }
  });
});

describe("a literal leading folder that .gitignore excludes (LARIK-REFERENCE §3)", () => {
  it("is searched by glob and by grep with that path, with the other rules still applied inside it", async () => {
    execFileSync("git", ["init", "-q"], { cwd: root });
    await writeTree(root, {
      ".gitignore": "dist/\n*.map\n",
      "dist/a.js": "token\n",
      "dist/a.js.map": "token\n",
      "dist/sub/b.js": "token\n",
      "src/c.js": "token\n",
    });
    await age("dist/sub/b.js", 100);
    for (const opts of [{}, { ripgrep: false as const }]) {
      const mode = JSON.stringify(opts);
      expect((await call(globTool(opts), { pattern: "dist/**/*.js" }, makeContext(root))).content, mode).toBe("dist/a.js\ndist/sub/b.js");
      expect((await call(globTool(opts), { pattern: "dist/*" }, makeContext(root))).content, mode).toBe("dist/a.js");
      expect((await call(globTool(opts), { pattern: "**/*.js" }, makeContext(root))).content, mode).toBe("src/c.js");
      const g = await call(grepTool(opts), { pattern: "token", path: "dist" }, makeContext(root));
      expect(g.content, mode).toBe("dist/a.js:1:token\ndist/sub/b.js:1:token");
      const sub = await call(grepTool(opts), { pattern: "token", path: "dist/sub" }, makeContext(root));
      expect(sub.content, mode).toBe("dist/sub/b.js:1:token");
    }
  });
});

describe("an rg that cannot run", () => {
  it("falls back to the JavaScript search, with one notice, for a binary that is not executable or not a program", async () => {
    await writeTree(root, { "a.ts": "needle\n", "bin/rg-noexec": "not a program", "bin/rg-garbage": "\x7fELF garbage" });
    await chmod(join(root, "bin/rg-garbage"), 0o755);
    for (const rgFile of ["bin/rg-noexec", "bin/rg-garbage"]) {
      const opts = { ripgrep: join(root, rgFile) };
      const ctx = makeContext(root);
      expect((await call(grepTool(opts), { pattern: "needle" }, ctx)).content, rgFile).toBe("a.ts:1:needle");
      expect((await call(globTool(opts), { pattern: "*.ts" }, ctx)).content, rgFile).toBe("a.ts");
      expect((await call(grepTool(opts), { pattern: "needle", path: "a.ts" }, ctx)).content, rgFile).toBe("a.ts:1:needle");
      expect(ctx.notices, rgFile).toHaveLength(1);
      expect(ctx.notices[0]).toMatch(/^ripgrep cannot run \(.*rg-.*\); glob and grep use the slower built-in search$/);
    }
  });
});
