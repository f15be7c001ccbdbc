import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replay } from "../../../kernel/index.js";
import { assistant, meta, tempStore, user } from "./helpers.js";

let t: ReturnType<typeof tempStore>;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => t.done());

/** A closed session with two messages; returns its id and path. */
async function twoMessages(): Promise<{ id: string; path: string }> {
  const h = await t.store.create(meta(t.cwd));
  h.append({ type: "message", message: user("first") });
  h.append({ type: "message", message: assistant("second") });
  await h.close();
  return { id: h.id, path: h.location };
}

describe("torn last line", () => {
  it("is dropped with a warning and a recovery entry; the next append starts on its own line", async () => {
    const { id, path } = await twoMessages();
    const intact = readFileSync(path);
    const torn = `{"id":"${id}-3","parent_id":"${id}-2","type":"message","ts":"2026-01-01T00:00:00.000Z","message":{"role":"assi`;
    appendFileSync(path, torn);

    const h = await t.store.open(t.cwd, id);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/:4: dropped a torn last line \(\d+ bytes at byte \d+\)/);
    // the model is told what it means for the conversation, not where in which file
    expect(h.notes).toEqual(["This session's saved history ended in an entry cut short, probably by a crash, which was dropped: the last message or tool result before it may be missing."]);
    const rec = h.entries().at(-1)!;
    expect(rec.type).toBe("recovery");
    expect(rec.data).toMatchObject({ reason: "torn last line", offset: intact.length, bytes: Buffer.byteLength(torn), line: 4 });
    expect(rec.data?.dropped).toBe(torn);
    h.append({ type: "message", message: user("third") });
    await h.close();

    const bytes = readFileSync(path);
    // Nothing written was rewritten: the old bytes and the torn fragment are still there.
    expect(bytes.subarray(0, intact.length).equals(intact)).toBe(true);
    const lines = bytes.toString("utf8").split("\n");
    expect(lines[3]).toBe(torn);
    expect(JSON.parse(lines[4]!).type).toBe("recovery");
    expect(JSON.parse(lines[5]!).message).toEqual(user("third"));

    const again = await t.store.open(t.cwd, id);
    expect([again.warnings, again.notes]).toEqual([[], []]);
    expect(replay(again.entries()).all).toEqual([user("first"), assistant("second"), user("third")]);
    expect(again.entries().filter((e) => e.type === "recovery")).toHaveLength(1);
    await again.close();
  });

  it("treats invalid JSON on a newline-terminated last line as torn too", async () => {
    const { id } = await twoMessages();
    const { path } = { path: (await t.store.list(t.cwd))[0]!.location };
    appendFileSync(path, "{garbage\n");
    const h = await t.store.open(t.cwd, id);
    expect(h.warnings[0]).toMatch(/torn last line/);
    await h.close();
    const again = await t.store.open(t.cwd, id);
    expect(again.warnings).toEqual([]);
    await again.close();
  });

  it("a complete last record without its newline is kept, and the next append still gets its own line", async () => {
    const { id, path } = await twoMessages();
    writeFileSync(path, readFileSync(path).subarray(0, -1)); // drop the final "\n"
    const h = await t.store.open(t.cwd, id);
    expect(h.warnings).toEqual([]);
    expect(h.entries()).toHaveLength(3);
    h.append({ type: "message", message: user("third") });
    await h.close();
    const again = await t.store.open(t.cwd, id);
    expect(replay(again.entries()).all).toEqual([user("first"), assistant("second"), user("third")]);
    await again.close();
  });

  it("read-only fork of a torn source tolerates it without writing to the source", async () => {
    const { id, path } = await twoMessages();
    appendFileSync(path, '{"id":"x');
    const before = readFileSync(path);
    const f = await t.store.fork(t.cwd, id);
    expect(f.warnings[0]).toMatch(/^fork source .*torn last line/);
    expect(f.notes).toEqual([expect.stringMatching(/^The saved history of the session this one was forked from ended in an entry cut short/)]);
    expect(replay(f.entries()).all).toHaveLength(2);
    await f.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe("malformed lines", () => {
  it("a malformed middle line fails loading with a one-line error naming file and line", async () => {
    const { id, path } = await twoMessages();
    const lines = readFileSync(path, "utf8").split("\n");
    lines[1] = lines[1]!.slice(0, 20);
    writeFileSync(path, lines.join("\n"));
    const err = await t.store.open(t.cwd, id).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(`${path}:2: invalid JSON`);
    expect((err as Error).message).not.toContain("\n");
    // The failed open released its lock.
    await expect(t.store.open(t.cwd, id)).rejects.toThrow(`${path}:2:`);
  });

  it("a valid JSON line that is not an entry (a plugin's malformed append) is skipped with a warning, once", async () => {
    const { id } = await twoMessages();
    // appended through the store, as a plugin holding the handle would
    const h0 = await t.store.open(t.cwd, id);
    h0.append({ type: "message", message: { role: "user", blocks: "nope" } } as never);
    h0.append({ type: "message", message: user("after it") });
    await h0.close();
    const h = await t.store.open(t.cwd, id);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/:4: skipped an entry this version cannot read, not a session entry \(message\.blocks: .*\): a plugin wrote it malformed, or a newer Larik wrote it$/);
    expect(replay(h.entries()).all).toEqual([user("first"), assistant("second"), user("after it")]);
    expect(h.entries().at(-1)?.data).toMatchObject({ reason: "invalid entry", line: 4, kept: false });
    await h.close();
    const again = await t.store.open(t.cwd, id);
    expect(again.warnings).toEqual([]);
    await again.close();
  });

  it("a file whose first entry is not meta is refused", async () => {
    const { id, path } = await twoMessages();
    writeFileSync(path, readFileSync(path, "utf8").split("\n").slice(1).join("\n"));
    await expect(t.store.open(t.cwd, id)).rejects.toThrow(/first entry is a message entry, not meta/);
  });
});

describe("NUL bytes", () => {
  it("a NUL-filled region is reported as a warning, recorded once, and the rest still loads", async () => {
    const { id, path } = await twoMessages();
    const lines = readFileSync(path, "utf8").split("\n");
    // A crash zero-filled the block holding the assistant message; a later line survived.
    const zeroed = "\0".repeat(Buffer.byteLength(lines[2]!));
    const later = lines[2]!.replace(`"${id}-2"`, `"${id}-3"`).replace("second", "later");
    writeFileSync(path, [lines[0], lines[1], zeroed, later, ""].join("\n"));

    const h = await t.store.open(t.cwd, id);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/:3: dropped \d+ bytes holding \d+ NUL bytes at byte \d+/);
    expect(replay(h.entries()).all).toEqual([user("first"), assistant("later")]);
    expect(h.entries().at(-1)?.data).toMatchObject({ reason: "NUL bytes", line: 3, nul_bytes: zeroed.length });
    // fewer entries than sequence numbers used: the recovery entry still gets an id of its own
    const ids = h.entries().map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(h.entries().at(-1)?.id).toBe(`${id}-4`);
    await h.close();
    const again = await t.store.open(t.cwd, id);
    expect(again.warnings).toEqual([]);
    await again.close();
  });

  it("NUL padding at the end of the file (no newline) is reported and the next append is clean", async () => {
    const { id, path } = await twoMessages();
    appendFileSync(path, Buffer.alloc(4096));
    const h = await t.store.open(t.cwd, id);
    expect(h.warnings[0]).toMatch(/4096 NUL bytes/);
    h.append({ type: "message", message: user("after crash") });
    await h.close();
    const again = await t.store.open(t.cwd, id);
    expect(again.warnings).toEqual([]);
    expect(replay(again.entries()).all.at(-1)).toEqual(user("after crash"));
    await again.close();
  });

  it("a valid record with NUL padding in front is kept, with a warning", async () => {
    const { id, path } = await twoMessages();
    const lines = readFileSync(path, "utf8").split("\n");
    lines[2] = `\0\0\0${lines[2]}`;
    writeFileSync(path, lines.join("\n"));
    const h = await t.store.open(t.cwd, id);
    expect(h.warnings[0]).toMatch(/kept an entry padded with 3 NUL bytes/);
    expect(replay(h.entries()).all).toEqual([user("first"), assistant("second")]);
    await h.close();
  });
});
