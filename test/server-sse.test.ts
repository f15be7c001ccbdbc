/**
 * The SSE stream of `larik serve` (LARIK-REFERENCE §21): replay with Last-Event-ID / ?after=
 * losing no event, the `: gap` announcement, live-only without a header, slow subscribers
 * dropped while others continue, keepalive comments, and `session_closed`.
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SseClient, TOKEN, startTestServer, type TestServer } from "./server-harness.js";

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function server(opts: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(opts);
  servers.push(s);
  return s;
}

async function session(t: TestServer): Promise<string> {
  return (await t.api("POST", "/v1/sessions", {})).body.id as string;
}

async function open(t: TestServer, id: string, opts: ConstructorParameters<typeof SseClient>[1] = {}): Promise<SseClient> {
  const c = new SseClient(`${t.url}/v1/sessions/${id}/events`, opts);
  await c.until(() => c.comments.includes("connected") || c.ended, "stream open");
  return c;
}

function contiguous(seqs: number[], from: number, to: number): void {
  expect(seqs).toEqual(Array.from({ length: to - from + 1 }, (_, i) => from + i));
}

describe("replay", () => {
  it("loses no event across a reconnect with Last-Event-ID (and with ?after=)", async () => {
    const t = await server();
    const id = await session(t);
    const witness = await open(t, id);
    const first = await open(t, id);
    const entered = t.gates.entered("r1");
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "gate r1" });
    await entered;
    await first.next("tool_start");
    await first.close();
    const lastSeen = Math.max(...first.seqs());

    // events published while nobody from this client listens
    t.gates.open("r1");
    await witness.idle();
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "long 200", wait: true });
    await witness.until(() => witness.events.filter((e) => e.event === "status" && e.data.busy === false).length === 2, "second turn");

    const again = await open(t, id, { lastEventId: lastSeen });
    const viaQuery = await open(t, id, { after: lastSeen });
    const total = witness.events.length;
    for (const c of [again, viaQuery]) await c.until(() => c.events.length === total - lastSeen, "replay");
    expect(again.comments).not.toContain("gap");
    const union = [...first.seqs(), ...again.seqs()];
    contiguous(union, 1, total);
    expect(viaQuery.seqs()).toEqual(again.seqs());
    expect([...first.events, ...again.events].map((e) => e.data)).toEqual(witness.events.map((e) => e.data));

    // the replaying client then continues live, without duplicates
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true });
    await again.until(() => again.events.length + lastSeen === witness.events.length && witness.events.at(-1)!.data.busy === false, "live after replay");
    contiguous([...first.seqs(), ...again.seqs()], 1, witness.events.length);
    await Promise.all([witness.close(), again.close(), viaQuery.close()]);
  });

  it("announces a gap when the events asked for are older than the ring", async () => {
    const t = await server({ bus: { ringSize: 16 } });
    const id = await session(t);
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "long 400", wait: true }); // 50 deltas
    const last = (await t.api("GET", `/v1/sessions/${id}`)).body.last_seq as number;
    expect(last).toBeGreaterThan(16);

    const late = await open(t, id, { lastEventId: 2 });
    await late.until(() => late.events.length === 16, "ring replay");
    expect(late.comments.slice(0, 2)).toEqual(["connected", "gap"]);
    contiguous(late.seqs(), last - 15, last);

    const inRing = await open(t, id, { lastEventId: last - 3 });
    await inRing.until(() => inRing.events.length === 3, "replay");
    expect(inRing.comments).not.toContain("gap");

    // a Last-Event-ID from before a restart (newer than anything here) is a gap too
    const future = await open(t, id, { lastEventId: last + 100 });
    await future.until(() => future.events.length === 16, "ring replay");
    expect(future.comments).toContain("gap");

    const bad = await open(t, id, { headers: { "last-event-id": "abc" } });
    await bad.until(() => bad.ended, "refusal");
    expect(bad.status).toBe(400);
    await Promise.all([late.close(), inRing.close(), future.close()]);
  });

  it("sends live events only when no replay point is given", async () => {
    const t = await server();
    const id = await session(t);
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true });
    const before = (await t.api("GET", `/v1/sessions/${id}`)).body.last_seq as number;
    const live = await open(t, id);
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true });
    await live.idle(before);
    expect(live.seqs()[0]).toBe(before + 1);
    await live.close();
  });
});

describe("subscribers", () => {
  it("drops a slow subscriber without blocking the run, while a fast one gets every event", async () => {
    const t = await server({ bus: { subscriberBuffer: 128 } });
    const id = await session(t);
    const fast = await open(t, id);
    // a client that subscribes and then never reads
    const u = new URL(t.url);
    const slow = connect(Number(u.port), u.hostname);
    let slowClosed = false;
    slow.on("close", () => (slowClosed = true));
    slow.on("error", () => {});
    slow.write(`GET /v1/sessions/${id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    await new Promise((r) => slow.once("data", r));
    slow.pause();
    const session0 = t.server.sessions.get(id);
    await fast.until(() => session0.bus.subscriberCount === 2, "both subscribed");

    // 600 notices of 32 KiB (~19 MiB): far more than socket buffers plus 128 queued events
    const done = await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "spam 600 32768", wait: true });
    expect(done.body).toMatchObject({ stop_reason: "end_turn", text: "tool said: spammed 600" });
    await fast.idle();
    expect(fast.ended).toBe(false);
    expect(fast.events.filter((e) => e.event === "notice")).toHaveLength(600);
    contiguous(fast.seqs(), 1, session0.bus.lastSeq);
    expect(session0.bus.droppedCount).toBe(1);
    expect(session0.bus.subscriberCount).toBe(1);
    expect(t.logs.some((l) => l.includes("dropped a slow event subscriber"))).toBe(true);
    slow.resume();
    await new Promise<void>((r) => (slowClosed ? r() : slow.once("close", () => r())));
    expect(slowClosed).toBe(true);
    await fast.close();
  });

  it("sends keepalive comments", async () => {
    const t = await server({ keepaliveMs: 30 });
    const id = await session(t);
    const c = await open(t, id);
    await c.until(() => c.comments.filter((x) => x === "keepalive").length >= 2, "keepalives");
    expect(c.events).toEqual([]);
    await c.close();
  });

  it("publishes session_closed and ends the streams when a session is deleted", async () => {
    const t = await server();
    const id = await session(t);
    const a = await open(t, id);
    const b = await open(t, id, { query: true });
    const entered = t.gates.entered("d1");
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "gate d1" });
    await entered;
    expect((await t.api("DELETE", `/v1/sessions/${id}`)).status).toBe(204);
    for (const c of [a, b]) {
      await c.until(() => c.ended, "stream end");
      expect(c.events.at(-1)!.data).toMatchObject({ type: "session_closed", reason: "deleted", session: id });
      expect(c.events.some((e) => e.event === "done" && e.data.stop_reason === "interrupted")).toBe(true);
    }
    const late = await open(t, id);
    expect(late.status).toBe(404);
  });
});
