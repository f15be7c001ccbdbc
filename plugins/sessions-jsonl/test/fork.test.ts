import { readFileSync, statSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replay, type Message } from "../../../kernel/index.js";
import { assistant, meta, tempStore, usage, user } from "./helpers.js";

let t: ReturnType<typeof tempStore>;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => t.done());

const toolTurn: Message[] = [
  user("read a.ts"),
  { role: "assistant", model: "m1", blocks: [{ type: "tool_use", id: "t1", name: "read", input: { path: "a.ts" } }] },
  { role: "user", blocks: [{ type: "tool_result", id: "t1", content: "x" }] },
  assistant("it says x"),
];
const secondTurn: Message[] = [user("now b.ts"), assistant("ok")];

/** A closed source session: turn 1 (messages 0–3), a compaction, turn 2 (messages 4–5). */
async function source(): Promise<{ id: string; path: string; bytes: Buffer; mtime: number }> {
  const h = await t.store.create(meta(t.cwd));
  for (const m of toolTurn) h.append({ type: "message", message: m, ...(m.role === "assistant" ? { usage } : {}) });
  h.append({ type: "decision", data: { tool: "read", allow: true } });
  h.append({ type: "usage", model: "sub", usage });
  h.append({ type: "compaction", summary: "turn one summary", data: { saved: 900, summarizer_input: 1000 } });
  for (const m of secondTurn) h.append({ type: "message", message: m, ...(m.role === "assistant" ? { usage } : {}) });
  await h.close();
  return { id: h.id, path: h.location, bytes: readFileSync(h.location), mtime: statSync(h.location).mtimeMs };
}

describe("fork", () => {
  it("at the end copies messages and compactions, without usage, decisions or metrics", async () => {
    const src = await source();
    const f = await t.store.fork(t.cwd, src.id);
    expect(f.id).not.toBe(src.id);
    expect(f.meta).toEqual({ ...meta(t.cwd), fork_of: src.id, fork_at: 6 });
    const types = f.entries().map((e) => e.type);
    expect(types).toEqual(["meta", "message", "message", "message", "message", "compaction", "message", "message"]);
    expect(f.entries().every((e) => e.usage === undefined)).toBe(true);
    expect(f.entries()[5]).toMatchObject({ summary: "turn one summary" });
    expect(f.entries()[5]!.data).toBeUndefined();
    expect(f.entries().map((e) => e.id)).toEqual(types.map((_, i) => `${f.id}-${i}`));
    expect(f.entries().map((e) => e.parent_id)).toEqual([null, ...types.slice(1).map((_, i) => `${f.id}-${i}`)]);
    const rep = replay(f.entries());
    expect(rep.all).toEqual([...toolTurn, ...secondTurn]);
    expect(rep.usageByModel.size).toBe(0);

    // It is a normal session: appendable, and it reopens to the same entries.
    f.append({ type: "message", message: user("branch prompt") });
    await f.close();
    const r = await t.store.open(t.cwd, f.id);
    expect(replay(r.entries()).all.at(-1)).toEqual(user("branch prompt"));
    expect(r.meta.fork_of).toBe(src.id);
    await r.close();

    expect(readFileSync(src.path).equals(src.bytes)).toBe(true);
    expect(statSync(src.path).mtimeMs).toBe(src.mtime);
  });

  it("at the end of a turn cut short by a crash, answers its tool calls so the branch starts at a turn boundary", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("read both") });
    const calls: Message = {
      role: "assistant",
      model: "m1",
      blocks: [
        { type: "tool_use", id: "t1", name: "read", input: { path: "a.ts" } },
        { type: "tool_use", id: "t2", name: "read", input: { path: "b.ts" } },
      ],
    };
    h.append({ type: "message", message: calls });
    await h.close();
    const f = await t.store.fork(t.cwd, h.id);
    const all = replay(f.entries()).all;
    expect(all).toHaveLength(3);
    expect(all[2]).toEqual({
      role: "user",
      blocks: ["t1", "t2"].map((id) => ({ type: "tool_result", id, content: "interrupted: the session was forked before this tool call had a result", is_error: true })),
    });
    expect(f.meta.fork_at).toBe(2);
    await f.close();
    // one result was written before the crash: only the other is answered
    const g0 = await t.store.open(t.cwd, h.id);
    g0.append({ type: "message", message: { role: "user", blocks: [{ type: "tool_result", id: "t1", content: "a" }] } });
    await g0.close();
    const g = await t.store.fork(t.cwd, h.id);
    const after = replay(g.entries()).all.slice(2);
    expect(after.flatMap((m) => m.blocks.map((b) => [(b as { id: string }).id, (b as { content: string }).content]))).toEqual([
      ["t1", "a"],
      ["t2", "interrupted: the session was forked before this tool call had a result"],
    ]);
    await g.close();
    // a whole turn needs nothing
    const k = await t.store.fork(t.cwd, (await source()).id);
    expect(replay(k.entries()).all).toEqual([...toolTurn, ...secondTurn]);
    await k.close();
  });

  it("at a prompt index keeps the messages before it (and compactions among them)", async () => {
    const src = await source();
    const f = await t.store.fork(t.cwd, src.id.slice(0, 17), 4);
    expect(f.meta.fork_at).toBe(4);
    expect(replay(f.entries()).all).toEqual(toolTurn);
    expect(f.entries().filter((e) => e.type === "compaction")).toHaveLength(1);
    await f.close();

    const g = await t.store.fork(t.cwd, src.id, 0);
    expect(replay(g.entries()).all).toEqual([]);
    expect(g.entries()).toHaveLength(1);
    await g.close();
    expect(readFileSync(src.path).equals(src.bytes)).toBe(true);
  });

  it("keeps a /clear among the copied entries", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("a") });
    h.append({ type: "message", message: assistant("b") });
    h.append({ type: "compaction", summary: "", data: { clear: true } });
    h.append({ type: "message", message: user("c") });
    await h.close();
    const f = await t.store.fork(t.cwd, h.id);
    expect(f.entries()[3]!.data).toEqual({ clear: true });
    expect(replay(f.entries()).messages).toEqual([user("c")]);
    await f.close();
  });

  it("refuses a non-boundary index or one out of range, and leaves no file behind", async () => {
    const src = await source();
    await expect(t.store.fork(t.cwd, src.id, 2)).rejects.toThrow(/cannot fork .* at message 2: .*not a prompt/);
    await expect(t.store.fork(t.cwd, src.id, 1)).rejects.toThrow(/message 1 is not a prompt/);
    await expect(t.store.fork(t.cwd, src.id, 7)).rejects.toThrow(/between 0 and 6/);
    await expect(t.store.fork(t.cwd, src.id, 1.5)).rejects.toThrow(/between 0 and 6/);
    expect((await t.store.list(t.cwd)).map((s) => s.id)).toEqual([src.id]);
    expect(readFileSync(src.path).equals(src.bytes)).toBe(true);
  });

  it("can fork a session another writer has open", async () => {
    const h = await t.store.create(meta(t.cwd));
    h.append({ type: "message", message: user("a") });
    const f = await t.store.fork(t.cwd, h.id);
    expect(replay(f.entries()).all).toEqual([user("a")]);
    await f.close();
    await h.close();
  });
});
