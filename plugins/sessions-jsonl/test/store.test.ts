import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Host, projectKey, replay, type Message } from "../../../kernel/index.js";
import plugin from "../index.js";
import { SESSION_ID_RE } from "../ids.js";
import { assistant, meta, tempStore, usage, user } from "./helpers.js";

let t: ReturnType<typeof tempStore>;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => t.done());

describe("create, append, reopen", () => {
  it("lays out <data>/sessions/<projectKey>/<id>.jsonl with a meta first line and linked entries", async () => {
    const h = await t.store.create(meta(t.cwd));
    expect(h.id).toMatch(SESSION_ID_RE);
    expect(h.location).toBe(join(t.root, "sessions", projectKey(t.cwd), `${h.id}.jsonl`));
    h.append({ type: "message", message: user("hello") });
    h.append({ type: "message", message: assistant("hi"), usage });
    await h.close();

    const lines = readFileSync(h.location, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    const entries = lines.map((l) => JSON.parse(l));
    expect(entries.map((e) => e.type)).toEqual(["meta", "message", "message"]);
    expect(entries[0].meta).toEqual(meta(t.cwd));
    expect(entries.map((e) => e.id)).toEqual([0, 1, 2].map((n) => `${h.id}-${n}`));
    expect(entries.map((e) => e.parent_id)).toEqual([null, `${h.id}-0`, `${h.id}-1`]);
    for (const e of entries) expect(Number.isNaN(Date.parse(e.ts))).toBe(false);
  });

  it("reopens with the same entries and continues the id sequence", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("one") });
    const written = h.entries().map((e) => ({ ...e }));
    await h.close();

    const r = await t.store.open(t.cwd, h.id);
    expect(r.warnings).toEqual([]);
    expect(r.entries()).toEqual(written);
    expect(r.meta).toEqual(meta(t.cwd));
    const e = r.append({ type: "message", message: assistant("two") });
    expect(e.id).toBe(`${h.id}-2`);
    expect(e.parent_id).toBe(`${h.id}-1`);
    await r.close();
    expect((await t.store.open(t.cwd, h.id)).entries()).toHaveLength(3);
  });

  it("replay of a reopened session reproduces exactly the messages appended", async () => {
    const msgs: Message[] = [
      user("fix the bug"),
      { role: "assistant", model: "m1", blocks: [{ type: "thinking", text: "hmm", signature: "sig" }, { type: "tool_use", id: "t1", name: "read", input: { path: "a.ts" } }] },
      { role: "user", blocks: [{ type: "tool_result", id: "t1", content: "line1\nline2", is_error: false }] },
      assistant("done"),
      user("thanks"),
      assistant("bye"),
    ];
    const h = await t.store.create(meta(t.cwd));
    for (const m of msgs) h.append({ type: "message", message: m, ...(m.role === "assistant" ? { usage } : {}) });
    h.append({ type: "usage", model: "sub", usage });
    h.append({ type: "decision", data: { tool: "read", allow: true, by: "user" } });
    await h.close();

    const r = await t.store.open(t.cwd, h.id);
    const rep = replay(r.entries());
    expect(rep.all).toEqual(msgs);
    expect(rep.messages).toEqual(msgs);
    expect(rep.usageByModel.get("m1")).toEqual({ usage: { input: 30, output: 15, cache_read: 6, cache_write: 3 }, requests: 3 });
    expect(rep.usageByModel.get("sub")?.requests).toBe(1);
    await r.close();
  });

  it("replay: a compaction replaces the context, a clear empties it", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("a") });
    h.append({ type: "message", message: assistant("b") });
    h.append({ type: "compaction", summary: "summary of a/b", data: { saved: 100 } });
    h.append({ type: "message", message: user("c") });
    let rep = replay(h.entries());
    expect(rep.messages).toEqual([{ role: "user", blocks: [{ type: "text", text: "summary of a/b" }, { type: "text", text: "c" }] }]);
    expect(rep.compactions).toBe(1);
    h.append({ type: "message", message: assistant("d") });
    h.append({ type: "compaction", summary: "", data: { clear: true } });
    rep = replay(h.entries());
    expect(rep.messages).toEqual([]);
    expect(rep.all).toHaveLength(4);
    expect(rep.compactions).toBe(1);
    h.append({ type: "message", message: user("fresh") });
    expect(replay(h.entries()).messages).toEqual([user("fresh")]);
    await h.close();
  });

  it("keeps U+2028, U+2029, U+0085, CR and NUL escapes inside strings intact", async () => {
    const tricky = "a\u2028b\u2029c\u0085d\re\r\nf\u0000g \u{1F600}";
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user(tricky) });
    h.append({ type: "message", message: assistant(`${tricky}!`) });
    await h.close();
    // The raw separators really are in the file (JSON.stringify does not escape them).
    expect(readFileSync(h.location, "utf8")).toContain("\u2028");
    expect(readFileSync(h.location, "utf8").split("\n")).toHaveLength(4);
    const r = await t.store.open(t.cwd, h.id);
    expect(r.warnings).toEqual([]);
    expect(replay(r.entries()).all).toEqual([user(tricky), assistant(`${tricky}!`)]);
    await r.close();
  });

  it("creates folders 0700 and files 0600", async () => {
    const h = await t.store.create(meta(t.cwd));
    expect(statSync(h.location).mode & 0o777).toBe(0o600);
    expect(statSync(`${h.location}.lock`).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(h.location)).mode & 0o777).toBe(0o700);
    expect(statSync(join(t.root, "sessions")).mode & 0o777).toBe(0o700);
    h.append({ type: "message", message: user("x") });
    await h.close();
    const f = await t.store.fork(t.cwd, h.id);
    expect(statSync(f.location).mode & 0o777).toBe(0o600);
    await f.close();
  });

  it("makes an existing, wider project folder 0700 again", async () => {
    const dir = t.store.dirOf(t.cwd);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chmodSync(dir, 0o755);
    const h = await t.store.create(meta(t.cwd));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    await h.close();
  });

  it("refuses appends after close and removes the lock", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("x") });
    await h.close();
    await h.close();
    expect(() => h.append({ type: "message", message: user("x") })).toThrow(/is closed/);
    expect(readdirSync(dirname(h.location))).toEqual([`${h.id}.jsonl`]);
  });

  it("rejects invalid meta with a one-line error", async () => {
    await expect(t.store.create({ cwd: t.cwd, provider: "p" } as never)).rejects.toThrow(/^invalid session meta/);
  });
});

describe("open by prefix", () => {
  function fake(id: string, text = "x"): void {
    const dir = t.store.dirOf(t.cwd);
    const m = { id: `${id}-0`, parent_id: null, type: "meta", ts: "2025-01-01T00:00:00.000Z", meta: meta(t.cwd) };
    const u = { id: `${id}-1`, parent_id: `${id}-0`, type: "message", ts: "2025-01-01T00:00:00.000Z", message: user(text) };
    writeFileSync(join(dir, `${id}.jsonl`), `${JSON.stringify(m)}\n${JSON.stringify(u)}\n`, { mode: 0o600 });
  }

  beforeEach(async () => {
    await (await t.store.create(meta(t.cwd))).close(); // makes the folder
  });

  it("accepts a unique prefix and the full id", async () => {
    fake("19900101-100000-aaaaaa");
    fake("19900102-100000-bbbbbb");
    const h = await t.store.open(t.cwd, "19900101");
    expect(h.id).toBe("19900101-100000-aaaaaa");
    await h.close();
    const g = await t.store.open(t.cwd, "19900102-100000-bbbbbb");
    expect(g.id).toBe("19900102-100000-bbbbbb");
    await g.close();
  });

  it("an ambiguous prefix lists the candidates in one line", async () => {
    fake("19900101-100000-aaaaaa");
    fake("19900101-110000-bbbbbb");
    const err = await t.store.open(t.cwd, "1990010").catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/ambiguous/);
    expect((err as Error).message).toContain("19900101-100000-aaaaaa");
    expect((err as Error).message).toContain("19900101-110000-bbbbbb");
    expect((err as Error).message).not.toContain("\n");
  });

  it("an unknown id says how to list sessions", async () => {
    await expect(t.store.open(t.cwd, "17000101")).rejects.toThrow(/no session "17000101".*larik --sessions/);
    await expect(t.store.open(t.cwd, "../../etc/passwd")).rejects.toThrow(/not a session id/);
  });

  it("does not see another directory's sessions", async () => {
    fake("19900101-100000-aaaaaa");
    await expect(t.store.open(dirname(t.cwd), "19900101")).rejects.toThrow(/no session/);
  });
});

describe("list", () => {
  it("is newest first, titled by the first prompt (≤80 chars), skipping notes and attachments", async () => {
    const a = await t.store.create(meta(t.cwd));
    a.append({ type: "message", message: { role: "user", blocks: [{ type: "text", text: "<task-notification id=1>done</task-notification>" }] } });
    a.append({ type: "message", message: { role: "user", blocks: [{ type: "text", text: "file body", attachment: "@a.ts" }, { type: "text", text: "  explain\n\nthis   file " }] } });
    await a.close();
    const b = await t.store.create(meta(t.cwd));
    b.append({ type: "message", message: user(`<system-note>plan mode</system-note>\n${"long words ".repeat(20)}`) });
    await b.close();
    const c = await t.store.create(meta(t.cwd));
    c.append({ type: "message", message: assistant("no prompt before me"), usage }); // kept, untitled
    await c.close();
    const now = Date.now() / 1000;
    utimesSync(a.location, now - 30, now - 30);
    utimesSync(b.location, now - 10, now - 10);
    utimesSync(c.location, now - 20, now - 20);

    const list = await t.store.list(t.cwd);
    expect(list.map((s) => s.id)).toEqual([b.id, c.id, a.id]);
    expect(list[2]!.title).toBe("explain this file");
    expect(list[0]!.title).toHaveLength(80);
    expect(list[0]!.title).toMatch(/^long words long words .*…$/);
    expect(list[1]!.title).toBe("");
    expect(list[0]!.updated).toBeCloseTo((now - 10) * 1000, -3);
    expect(list[0]!.location).toBe(b.location);
  });

  it("is empty for a directory without sessions and skips unreadable files", async () => {
    expect(await t.store.list(t.cwd)).toEqual([]);
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("x") });
    await h.close();
    writeFileSync(join(dirname(h.location), "20200101-000000-abcdef.jsonl"), '{"id":"20200101-000000-abc');
    writeFileSync(join(dirname(h.location), "notes.jsonl"), "{}\n");
    expect((await t.store.list(t.cwd)).map((s) => s.id)).toEqual([h.id]);
  });

  it("shows fork_of for branches", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("root prompt") });
    await h.close();
    const f = await t.store.fork(t.cwd, h.id);
    await f.close();
    const list = await t.store.list(t.cwd);
    const branch = list.find((s) => s.id === f.id);
    expect(branch?.fork_of).toBe(h.id);
    expect(branch?.title).toBe("root prompt");
  });
});

describe("plugin", () => {
  it("registers a lazily loaded store that uses the host's environment", async () => {
    const host = await Host.create({ plugins: [plugin], cwd: t.cwd, env: t.env });
    const store = host.sessionStore;
    expect(store?.name).toBe("jsonl");
    const h = await store!.create(meta(t.cwd));
    expect(h.location.startsWith(t.root)).toBe(true);
    h.append({ type: "message", message: user("x") });
    await h.close();
    expect((await store!.list(t.cwd)).map((s) => s.id)).toEqual([h.id]);
    await host.dispose();
  });
});
