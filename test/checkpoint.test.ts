/**
 * Checkpoints and /undo on a real git repository in a temp folder (LARIK-REFERENCE §8,
 * invariant 15): file-tool captures, bash change tracking, protected and symlink rejection,
 * reload from disk, retention.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCheckpointStore, pruneCheckpoints, pruneCheckpointsDaily, type CheckpointStore } from "../kernel/checkpoint.js";
import { gitBefore, GIT_COPY_LIMITS, parsePorcelainZ } from "../kernel/kit/checkpoint-git.js";

let base: string;
let repo: string;
let data: string;
let warnings: string[];

function git(...args: string[]): string {
  return execFileSync("git", args, { cwd: repo, encoding: "utf8" });
}

function bash(command: string): void {
  const r = spawnSync("bash", ["-c", command], { cwd: repo, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`bash failed: ${r.stderr}`);
}

function store(sessionId = "20260101-000000-abcdef"): CheckpointStore {
  return createCheckpointStore({ dataDir: data, sessionId, projectRoot: repo, warn: (t) => warnings.push(t) });
}

const read = (rel: string) => readFileSync(join(repo, rel), "utf8");
const mode = (rel: string) => statSync(join(repo, rel)).mode & 0o777;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "larik-ckpt-")));
  repo = join(base, "repo");
  data = join(base, "data");
  warnings = [];
  mkdirSync(repo);
  git("init", "-q");
  git("config", "user.email", "t@example.com");
  git("config", "user.name", "t");
  writeFileSync(join(repo, "a.txt"), "a from HEAD\n");
  writeFileSync(join(repo, "b.txt"), "b from HEAD\n");
  writeFileSync(join(repo, "dirty.txt"), "dirty from HEAD\n");
  writeFileSync(join(repo, "run.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(join(repo, "run.sh"), 0o755);
  mkdirSync(join(repo, "src"));
  writeFileSync(join(repo, "src", "keep.ts"), "export {};\n");
  writeFileSync(join(repo, ".gitignore"), "secret.env\n");
  git("add", "-A");
  git("commit", "-qm", "init");
});

afterEach(() => {
  GIT_COPY_LIMITS.maxFiles = 2000;
  GIT_COPY_LIMITS.perFile = 2 * 1024 * 1024;
  rmSync(base, { recursive: true, force: true });
});

describe("file tool captures", () => {
  it("restores bytes and mode, deletes new files and their new folders, in reverse order", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "run.sh"));
    writeFileSync(join(repo, "run.sh"), "changed\n");
    chmodSync(join(repo, "run.sh"), 0o600);
    await s.capture(join(repo, "run.sh")); // second capture in the turn: no-op
    writeFileSync(join(repo, "run.sh"), "changed twice\n");
    await s.capture(join(repo, "new", "deep", "file.txt"));
    mkdirSync(join(repo, "new", "deep"), { recursive: true });
    writeFileSync(join(repo, "new", "deep", "file.txt"), "new\n");

    const restored = await s.undo();
    expect(restored.sort()).toEqual(["new/deep/file.txt", "run.sh"]);
    expect(read("run.sh")).toBe("#!/bin/sh\necho hi\n");
    expect(mode("run.sh")).toBe(0o755);
    expect(existsSync(join(repo, "new"))).toBe(false);
    expect(git("status", "--porcelain")).toBe("");
  });

  it("pops only the newest turn that changed files", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "a.txt"));
    writeFileSync(join(repo, "a.txt"), "turn 1\n");
    await s.beginTurn();
    await s.capture(join(repo, "a.txt"));
    writeFileSync(join(repo, "a.txt"), "turn 2\n");
    await s.beginTurn(); // a turn that wrote nothing
    expect(await s.undo()).toEqual(["a.txt"]);
    expect(read("a.txt")).toBe("turn 1\n");
    expect(await s.undo()).toEqual(["a.txt"]);
    expect(read("a.txt")).toBe("a from HEAD\n");
    expect(await s.undo()).toEqual([]);
  });

  it("a failed capture throws, so the write does not happen", async () => {
    const s = store();
    await s.beginTurn();
    await expect(s.capture(join(repo, "src"))).rejects.toThrow(/could not save src for \/undo: it is a directory/);
    writeFileSync(join(base, "data-file"), "");
    const broken = createCheckpointStore({ dataDir: join(base, "data-file"), sessionId: "s1", projectRoot: repo });
    await broken.beginTurn();
    await expect(broken.capture(join(repo, "a.txt"))).rejects.toThrow(/could not save a.txt for \/undo: cannot create the checkpoint folder/);
  });

  it("keeps its files private and the manifest well-formed", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "a.txt"));
    await s.capture(join(repo, "gone.txt"));
    const dir = join(data, "checkpoints", "20260101-000000-abcdef", "1");
    expect(readdirSync(dir).sort()).toEqual(["0.bin", "manifest.json"]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "0.bin")).mode & 0o777).toBe(0o600);
    const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(m).toMatchObject({ version: 1, turn: 1, project_root: repo });
    expect(m.entries).toEqual([
      { kind: "file", path: "a.txt", mode: statSync(join(repo, "a.txt")).mode & 0o7777, blob: "0.bin", size: 12 },
      { kind: "absent", path: "gone.txt" },
    ]);
  });

  it("rejects a session id that is not a plain folder name", () => {
    expect(() => createCheckpointStore({ dataDir: data, sessionId: "../x", projectRoot: repo })).toThrow(/session id/);
  });
});

describe("bash tracking in a git repository", () => {
  it("records what a command changed and undo restores all of it, without touching the index", async () => {
    writeFileSync(join(repo, "dirty.txt"), "dirty before the command\n");
    writeFileSync(join(repo, "untracked.txt"), "untracked before\n");
    const index = git("ls-files", "-s");
    const s = store();
    await s.beginTurn();
    const out = await s.trackCommand!(repo, async () => {
      bash(
        [
          "echo modified >> a.txt",
          "rm b.txt",
          "echo again > dirty.txt",
          "echo changed > untracked.txt",
          "echo brand-new > new.txt",
          "mkdir -p made/sub && echo x > made/sub/f.txt",
          "chmod -x run.sh",
        ].join(" && "),
      );
      return "ran";
    });
    expect(out).toBe("ran");
    expect(warnings).toEqual([]);

    const restored = await s.undo();
    expect(restored.sort()).toEqual(["a.txt", "b.txt", "dirty.txt", "made/sub/f.txt", "new.txt", "run.sh", "untracked.txt"]);
    expect(read("a.txt")).toBe("a from HEAD\n");
    expect(read("b.txt")).toBe("b from HEAD\n");
    expect(read("dirty.txt")).toBe("dirty before the command\n");
    expect(read("untracked.txt")).toBe("untracked before\n");
    expect(mode("run.sh") & 0o100).toBe(0o100);
    expect(existsSync(join(repo, "new.txt"))).toBe(false);
    expect(existsSync(join(repo, "made"))).toBe(false);
    expect(git("ls-files", "-s")).toBe(index);
    expect(git("stash", "list")).toBe("");
    expect(git("log", "--oneline").trim().split("\n")).toHaveLength(1);
    expect(git("status", "--porcelain", "-uall").split("\n").filter(Boolean).sort()).toEqual([" M dirty.txt", "?? untracked.txt"]);
  });

  it("file-tool captures and commands share the turn; the first capture of a path wins", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "a.txt"));
    writeFileSync(join(repo, "a.txt"), "edited by a tool\n");
    await s.trackCommand!(repo, async () => bash("echo by bash > a.txt && echo x >> b.txt"));
    expect((await s.undo()).sort()).toEqual(["a.txt", "b.txt"]);
    expect(read("a.txt")).toBe("a from HEAD\n");
    expect(read("b.txt")).toBe("b from HEAD\n");
  });

  it("records changes even when the command fails", async () => {
    const s = store();
    await s.beginTurn();
    await expect(
      s.trackCommand!(repo, async () => {
        bash("echo half > a.txt");
        throw new Error("exit status 1");
      }),
    ).rejects.toThrow("exit status 1");
    expect(await s.undo()).toEqual(["a.txt"]);
    expect(read("a.txt")).toBe("a from HEAD\n");
  });

  it("does not delete an ignored file that a .gitignore edit revealed", async () => {
    writeFileSync(join(repo, "secret.env"), "TOKEN=1\n");
    await sleep(150); // the file is older than the command
    const s = store();
    await s.beginTurn();
    await s.trackCommand!(repo, async () => bash("echo '# nothing ignored' > .gitignore"));
    expect(await s.undo()).toEqual([".gitignore"]);
    expect(read("secret.env")).toBe("TOKEN=1\n");
    expect(read(".gitignore")).toBe("secret.env\n");
  });

  it("runs untracked, with a warning, above the dirty-file limit; skips files over the size limit", async () => {
    GIT_COPY_LIMITS.maxFiles = 2;
    for (const n of [1, 2, 3]) writeFileSync(join(repo, `u${n}.txt`), "u\n");
    const s = store();
    await s.beginTurn();
    await s.trackCommand!(repo, async () => bash("echo x > a.txt"));
    expect(warnings).toEqual(["/undo will not cover this command: 3 dirty or untracked files (more than 2)"]);
    expect(await s.undo()).toEqual([]);

    GIT_COPY_LIMITS.maxFiles = 2000;
    GIT_COPY_LIMITS.perFile = 4;
    git("checkout", "--", "a.txt");
    writeFileSync(join(repo, "u1.txt"), "more than four bytes\n");
    await s.beginTurn();
    await s.trackCommand!(repo, async () => bash("echo changed > a.txt && echo x > u1.txt"));
    expect(await s.undo()).toEqual([]); // a.txt's HEAD blob and u1.txt are over 4 bytes
  });

  it("sends tracking warnings to the call's own warn when given", async () => {
    GIT_COPY_LIMITS.maxFiles = 0;
    writeFileSync(join(repo, "u.txt"), "u\n");
    const own: string[] = [];
    const s = store();
    await s.beginTurn();
    await s.trackCommand!(repo, async () => undefined, { warn: (t) => own.push(t) });
    expect(own).toEqual(["/undo will not cover this command: 1 dirty or untracked files (more than 0)"]);
    expect(warnings).toEqual([]);
  });

  it("tracks a repository without commits", async () => {
    const fresh = join(base, "fresh");
    mkdirSync(fresh);
    execFileSync("git", ["init", "-q"], { cwd: fresh });
    writeFileSync(join(fresh, "u.txt"), "before\n");
    const s = createCheckpointStore({ dataDir: data, sessionId: "s3", projectRoot: fresh, warn: (t) => warnings.push(t) });
    await s.beginTurn();
    await s.trackCommand!(fresh, async () => {
      writeFileSync(join(fresh, "u.txt"), "after\n");
      writeFileSync(join(fresh, "n.txt"), "new\n");
    });
    expect(warnings).toEqual([]);
    expect((await s.undo()).sort()).toEqual(["n.txt", "u.txt"]);
    expect(readFileSync(join(fresh, "u.txt"), "utf8")).toBe("before\n");
    expect(existsSync(join(fresh, "n.txt"))).toBe(false);
  });

  it("runs the command untouched outside a repository", async () => {
    const plain = join(base, "plain");
    mkdirSync(plain);
    const s = createCheckpointStore({ dataDir: data, sessionId: "s2", projectRoot: plain, warn: (t) => warnings.push(t) });
    await s.beginTurn();
    expect(await s.trackCommand!(plain, async () => 42)).toBe(42);
    expect(warnings).toEqual([]);
  });

  it("asks git nothing about a folder with no .git at or above it", async () => {
    // a git that records its calls, first on PATH
    const bin = mkdtempSync(join(tmpdir(), "fake-git-"));
    const calls = join(bin, "calls");
    writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$@" >> '${calls}'\nexit 128\n`, { mode: 0o755 });
    const plain = mkdtempSync(join(tmpdir(), "no-repo-"));
    const withGit = mkdtempSync(join(tmpdir(), "fake-repo-"));
    mkdirSync(join(withGit, ".git"));
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      expect(await gitBefore(plain, () => false)).toEqual({ untracked: "not a git repository" });
      expect(existsSync(calls)).toBe(false);
      // the control: with a .git folder, git is asked (and says no)
      expect(await gitBefore(withGit, () => false)).toEqual({ untracked: "not a git repository" });
      expect(existsSync(calls)).toBe(true);
    } finally {
      process.env.PATH = path;
    }
  });

  it("parses porcelain -z including renames", () => {
    const m = parsePorcelainZ("R  new name.txt\0old.txt\0?? dir/u.txt\0 M a b.txt\0");
    expect([...m]).toEqual([
      ["new name.txt", "R "],
      ["old.txt", "R "],
      ["dir/u.txt", "??"],
      ["a b.txt", " M"],
    ]);
  });
});

describe("undo safety", () => {
  it("never captures protected paths or paths outside the project", async () => {
    const s = store();
    await s.beginTurn();
    mkdirSync(join(repo, ".larik"));
    await s.capture(join(repo, ".larik", "settings.json"));
    await s.capture(join(repo, ".git", "config"));
    await s.capture(join(base, "outside.txt"));
    await s.trackCommand!(repo, async () => bash("echo '{}' > .mcp.json"));
    expect(await s.undo()).toEqual([]);
    expect(existsSync(join(repo, ".mcp.json"))).toBe(true);
  });

  it("rejects a snapshot naming a protected path and keeps it", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "a.txt"));
    const manifestPath = join(data, "checkpoints", "20260101-000000-abcdef", "1", "manifest.json");
    const m = JSON.parse(readFileSync(manifestPath, "utf8"));
    m.entries.push({ kind: "file", path: ".git/hooks/pre-commit", mode: 0o755, blob: "0.bin", size: 12 });
    writeFileSync(manifestPath, JSON.stringify(m));
    await expect(s.undo()).rejects.toThrow(/undo stopped at .git\/hooks\/pre-commit: .*\.git\/hooks is protected.*snapshot is kept/);
    expect(existsSync(join(repo, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(existsSync(manifestPath)).toBe(true);
    m.entries.pop();
    m.entries.push({ kind: "absent", path: "../escape.txt" });
    writeFileSync(manifestPath, JSON.stringify(m));
    await expect(s.undo()).rejects.toThrow(/not a plain project-relative path/);
  });

  it("does not restore through a folder that became a symlink", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "src", "keep.ts"));
    const elsewhere = join(base, "elsewhere");
    mkdirSync(elsewhere);
    rmSync(join(repo, "src"), { recursive: true });
    symlinkSync(elsewhere, join(repo, "src"));
    await expect(s.undo()).rejects.toThrow(/undo stopped at src\/keep.ts: src\/keep.ts: src is a symlink/);
    expect(readdirSync(elsewhere)).toEqual([]);
    // fixing the problem and running undo again works: the snapshot was kept
    unlinkSync(join(repo, "src"));
    expect(await s.undo()).toEqual(["src/keep.ts"]);
    expect(read("src/keep.ts")).toBe("export {};\n");
  });

  it("replaces a file that became a symlink instead of writing through it", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "a.txt"));
    const target = join(base, "target.txt");
    writeFileSync(target, "outside\n");
    unlinkSync(join(repo, "a.txt"));
    symlinkSync(target, join(repo, "a.txt"));
    expect(await s.undo()).toEqual(["a.txt"]);
    expect(lstatSync(join(repo, "a.txt")).isSymbolicLink()).toBe(false);
    expect(read("a.txt")).toBe("a from HEAD\n");
    expect(readFileSync(target, "utf8")).toBe("outside\n");
  });

  it("deletes a symlink created where nothing was, not its target", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "link"));
    const target = join(base, "t.txt");
    writeFileSync(target, "keep me\n");
    symlinkSync(target, join(repo, "link"));
    expect(await s.undo()).toEqual(["link"]);
    expect(existsSync(join(repo, "link"))).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("keep me\n");
    expect(() => readlinkSync(join(repo, "link"))).toThrow();
  });

  it("refuses to capture a symlink", async () => {
    symlinkSync(join(repo, "a.txt"), join(repo, "alias.txt"));
    const s = store();
    await s.beginTurn();
    await expect(s.capture(join(repo, "alias.txt"))).rejects.toThrow(/it is a symlink/);
  });

  it("keeps the snapshot when a restore fails, and recreates removed folders", async () => {
    const s = store();
    await s.beginTurn();
    await s.capture(join(repo, "src", "keep.ts"));
    rmSync(join(repo, "src", "keep.ts"));
    mkdirSync(join(repo, "src", "keep.ts", "inner"), { recursive: true });
    await expect(s.undo()).rejects.toThrow(/a folder is there now/);
    rmSync(join(repo, "src"), { recursive: true });
    expect(await s.undo()).toEqual(["src/keep.ts"]);
    expect(read("src/keep.ts")).toBe("export {};\n");
  });
});

describe("persistence and retention", () => {
  it("continues turn numbers after a reload and undoes turns written before it", async () => {
    const first = store();
    await first.beginTurn();
    await first.capture(join(repo, "a.txt"));
    writeFileSync(join(repo, "a.txt"), "one\n");
    await first.beginTurn();
    await first.capture(join(repo, "a.txt"));
    writeFileSync(join(repo, "a.txt"), "two\n");
    expect(await first.undo()).toEqual(["a.txt"]); // turn 2 undone, its folder kept

    const second = store();
    await second.beginTurn();
    await second.capture(join(repo, "b.txt"));
    writeFileSync(join(repo, "b.txt"), "three\n");
    const turns = readdirSync(join(data, "checkpoints", "20260101-000000-abcdef")).sort();
    expect(turns).toEqual(["1", "2", "3"]);
    expect(await second.undo()).toEqual(["b.txt"]);
    expect(await second.undo()).toEqual(["a.txt"]); // turn 1, written by the first store
    expect(read("a.txt")).toBe("a from HEAD\n");
    expect(await second.undo()).toEqual([]);
  });

  it("prunes session folders older than the retention, keeps newer ones; negative keeps all", async () => {
    const root = join(data, "checkpoints");
    for (const [id, ageDays] of [
      ["old", 10],
      ["recent", 2],
      ["kept", 30],
    ] as const) {
      mkdirSync(join(root, id, "1"), { recursive: true });
      const t = (Date.now() - ageDays * 86_400_000) / 1000;
      utimesSync(join(root, id, "1"), t, t);
      utimesSync(join(root, id), t, t);
    }
    expect(await pruneCheckpoints(data, -1)).toEqual([]);
    expect((await pruneCheckpoints(data, 7, { keep: ["kept"] })).sort()).toEqual(["old"]);
    expect(readdirSync(root).sort()).toEqual(["kept", "recent"]);
    expect(await pruneCheckpoints(data)).toEqual(["kept"]); // default 7 days
    expect(await pruneCheckpoints(join(base, "missing"), 7)).toEqual([]);
  });

  it("the automatic prune runs at most once a day (or once per retention, when shorter)", async () => {
    const root = join(data, "checkpoints");
    const stamp = join(root, ".pruned");
    const age = (path: string, days: number) => {
      const t = (Date.now() - days * 86_400_000) / 1000;
      utimesSync(path, t, t);
    };
    const ancient = () => {
      mkdirSync(join(root, "ancient"), { recursive: true });
      age(join(root, "ancient"), 40);
    };
    ancient();
    expect(await pruneCheckpointsDaily(data, 7)).toEqual(["ancient"]);
    expect(existsSync(stamp)).toBe(true);
    ancient();
    expect(await pruneCheckpointsDaily(data, 7)).toEqual([]); // pruned less than a day ago
    expect(existsSync(join(root, "ancient"))).toBe(true);
    age(stamp, 2);
    expect(await pruneCheckpointsDaily(data, 7)).toEqual(["ancient"]);
    ancient();
    expect(await pruneCheckpointsDaily(data, 0)).toEqual(["ancient"]); // retention 0: every time
    ancient();
    expect(await pruneCheckpointsDaily(data, -1)).toEqual([]);
    expect(await pruneCheckpointsDaily(join(base, "missing"), 7)).toEqual([]);
  });

  it("a first turn within a day of the last prune leaves other sessions alone", async () => {
    const root = join(data, "checkpoints");
    mkdirSync(join(root, "ancient"), { recursive: true });
    const old = (Date.now() - 40 * 86_400_000) / 1000;
    utimesSync(join(root, "ancient"), old, old);
    writeFileSync(join(root, ".pruned"), "");
    const hourAgo = (Date.now() - 3_600_000) / 1000;
    utimesSync(join(root, ".pruned"), hourAgo, hourAgo);
    const s = createCheckpointStore({ dataDir: data, sessionId: "me", projectRoot: repo, retentionDays: 7 });
    await s.beginTurn();
    await sleep(300);
    expect(existsSync(join(root, "ancient"))).toBe(true);
    expect(Math.round(statSync(join(root, ".pruned")).mtimeMs / 1000)).toBe(Math.round(hourAgo));
  });

  it("prunes other sessions once at the first turn when retentionDays is set", async () => {
    const root = join(data, "checkpoints");
    mkdirSync(join(root, "ancient"), { recursive: true });
    const t = (Date.now() - 40 * 86_400_000) / 1000;
    utimesSync(join(root, "ancient"), t, t);
    const dataDir = data;
    const s = createCheckpointStore({ dataDir, sessionId: "me", projectRoot: repo, retentionDays: 7 });
    await s.beginTurn();
    for (let i = 0; i < 50 && existsSync(join(root, "ancient")); i++) await sleep(20);
    expect(readdirSync(root).filter((n) => n !== ".pruned")).toEqual(["me"]);
  });
});
