import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readLock, removeStale } from "../lock.js";
import { meta, tempStore, user } from "./helpers.js";

const CHILD = fileURLToPath(new URL("./fixtures/open-session.mjs", import.meta.url));
const RACER = fileURLToPath(new URL("./fixtures/lock-race.mjs", import.meta.url));
const ROOT_DIR = fileURLToPath(new URL("../../../", import.meta.url));

let t: ReturnType<typeof tempStore>;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => t.done());

/** Runs the child to completion and returns its JSON answer. */
function childTry(id: string, mode = "try"): { ok?: boolean; error?: string } {
  const r = spawnSync(process.execPath, [CHILD, t.root, t.cwd, id, mode], { cwd: ROOT_DIR, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
}

// Children load the TypeScript sources through jiti; on a busy machine with a cold jiti cache
// that alone can take tens of seconds.
describe("one writer per session", { timeout: 120_000 }, () => {
  it("a second process gets the one-line 'already open' error naming our pid", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("hello") }); // an empty one is removed at close
    const r = childTry(h.id);
    expect(r.error).toMatch(new RegExp(`^session ${h.id} is already open for writing in another process \\(pid ${process.pid}\\): wait for it, or branch it with --fork; `));
    expect(r.error).not.toContain("\n");
    await h.close();
    expect(childTry(h.id)).toEqual({ ok: true, pid: expect.any(Number) });
  });

  it("while a live child holds it we are refused; once it is killed the stale lock is taken over", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("hello") });
    await h.close();

    const child = spawn(process.execPath, [CHILD, t.root, t.cwd, h.id, "hold"], { cwd: ROOT_DIR, stdio: ["pipe", "pipe", "inherit"] });
    const first = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once("line", resolve));
    expect(JSON.parse(first)).toEqual({ ok: true, pid: child.pid });

    await expect(t.store.open(t.cwd, h.id)).rejects.toThrow(`session ${h.id} is already open for writing in another process (pid ${child.pid})`);

    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    // The dead child's lock file is still there, naming its pid.
    expect(readFileSync(`${h.location}.lock`, "utf8").trim()).toBe(String(child.pid));
    const again = await t.store.open(t.cwd, h.id);
    expect(readFileSync(`${h.location}.lock`, "utf8").trim()).toBe(String(process.pid));
    await again.close();
  });

  it("a stale lock with a dead pid (or our own pid from an earlier life) is taken over", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("hello") });
    await h.close();
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    writeFileSync(`${h.location}.lock`, `${dead.stdout}\n`);
    const a = await t.store.open(t.cwd, h.id);
    await a.close();
    writeFileSync(`${h.location}.lock`, `${process.pid}\n`);
    const b = await t.store.open(t.cwd, h.id);
    await b.close();
    expect(existsSync(`${h.location}.lock`)).toBe(false);
  });

  it("the same process cannot open a session twice", async () => {
    const h = await t.store.create(meta(t.cwd));
    await expect(t.store.open(t.cwd, h.id)).rejects.toThrow(/already open for writing in this process/);
    await h.close();
  });

  it("closing leaves alone a lock that another process holds by now (ours was deleted and taken over)", async () => {
    const h = await t.store.create(meta(t.cwd));
    const lock = `${h.location}.lock`;
    rmSync(lock);
    writeFileSync(lock, "1\n"); // pid 1 is alive in every container and on every host
    await h.close();
    expect(readFileSync(lock, "utf8")).toBe("1\n");
    rmSync(lock);
  });

  it("a process that exits without closing releases its lock", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("hello") });
    await h.close();
    expect(childTry(h.id, "exit").ok).toBe(true);
    expect(existsSync(`${h.location}.lock`)).toBe(false);
  });

  it("processes racing to take over one stale lock: exactly one wins each time", async () => {
    // Each racer reads the stale lock, then removes the file and creates its own. Unguarded, a
    // late racer's removal deleted the lock a faster one had just made, and both held it; with
    // the guard but a pid check only, so did one that found an empty lock gone and then a new
    // empty one.
    const dir = mkdtempSync(join(tmpdir(), "larik-lock-race-"));
    try {
      const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout;
      const rounds = 40;
      // odd rounds: a crash between creating the lock and writing its pid left it empty, long ago
      const old = new Date(Date.now() - 60_000);
      for (let i = 0; i < rounds; i++) {
        writeFileSync(join(dir, `${i}.lock`), i % 2 ? "" : `${dead}\n`);
        if (i % 2) utimesSync(join(dir, `${i}.lock`), old, old);
      }
      const racers = Array.from({ length: 6 }, () => spawn(process.execPath, [RACER, dir, String(rounds), "25"], { cwd: ROOT_DIR, stdio: ["pipe", "pipe", "inherit"] }));
      const lines = racers.map((c) => {
        const out: string[] = [];
        const rl = createInterface({ input: c.stdout! }).on("line", (l) => out.push(l));
        const line = (n: number) => new Promise<string>((r) => (out.length >= n ? r(out[n - 1]!) : rl.on("line", () => out.length === n && r(out[n - 1]!))));
        return { ready: line(1), done: line(2) };
      });
      await Promise.all(lines.map((l) => l.ready));
      const start = Date.now() + 300;
      for (const c of racers) c.stdin!.write(`${start}\n`);
      // the racers hold what they won until every one has answered
      const won = (await Promise.all(lines.map((l) => l.done))).map((out) => JSON.parse(out) as number[]);
      for (const c of racers) c.stdin!.end();
      const winners = Array.from({ length: rounds }, (_, i) => won.filter((w) => w.includes(i)).length);
      expect(winners).toEqual(Array(rounds).fill(1));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a stale lock replaced by a fresh one before the takeover is left alone, even when both are empty", () => {
    // The interleaving the race test cannot force: B judged an old empty lock stale, then A removed
    // it and created its own (still empty); B's removal must not take A's.
    const dir = mkdtempSync(join(tmpdir(), "larik-lock-swap-"));
    try {
      const path = join(dir, "s.lock");
      writeFileSync(path, "");
      const old = new Date(Date.now() - 60_000);
      utimesSync(path, old, old);
      const seen = readLock(path)!;
      expect(seen.pid).toBeUndefined();
      rmSync(path);
      writeFileSync(path, "");
      utimesSync(path, old, old); // even with the same times
      removeStale(path, seen, "s", Date.now() + 1000);
      expect(existsSync(path)).toBe(true);
      // the very file judged stale is removed, and the guard with it
      removeStale(path, readLock(path)!, "s", Date.now() + 1000);
      expect(existsSync(path)).toBe(false);
      expect(existsSync(`${path}.takeover`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
