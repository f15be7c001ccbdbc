/**
 * `larik serve` over real HTTP on loopback (LARIK-REFERENCE §21): every route, auth, the Host
 * check, body rules, 409s on busy sessions, permission round trips and cancel.
 */
import { request as httpRequest } from "node:http";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTES } from "../plugins/server/routes.js";
import { SseClient, TOKEN, request, startTestServer, type TestServer } from "./server-harness.js";

/** A raw request with a chosen Host header (fetch does not let us set it). */
function rawGet(url: string, path: string, host: string, token = TOKEN): Promise<{ status: number; body: any }> {
  const u = new URL(url);
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      { host: u.hostname, port: u.port, path, method: "GET", headers: { host, authorization: `Bearer ${token}` } },
      (res) => {
        let data = "";
        res.on("data", (d) => (data += d));
        res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : undefined }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

async function newSession(body: Record<string, unknown> = {}): Promise<string> {
  const r = await t.api("POST", "/v1/sessions", body);
  expect(r.status).toBe(201);
  return r.body.id as string;
}

/** Subscribes, starts a prompt and returns the client once the stream is open. */
async function subscribe(id: string, opts: ConstructorParameters<typeof SseClient>[1] = {}): Promise<SseClient> {
  const c = new SseClient(`${t.url}/v1/sessions/${id}/events`, opts);
  await c.until(() => c.comments.includes("connected"), "stream open");
  return c;
}

describe("security", () => {
  it("serves GET /v1/health without a token, and nothing else", async () => {
    const h = await request(t.url, "GET", "/v1/health");
    expect(h).toMatchObject({ status: 200, body: { ok: true } });
    const info = await request(t.url, "GET", "/v1/info");
    expect(info.status).toBe(401);
    expect(info.body).toEqual({ error: { code: "unauthorized", message: expect.stringContaining("missing token") } });
    expect(info.headers.get("www-authenticate")).toContain("Bearer");
  });

  it("rejects a wrong token, a malformed header and ?token= outside the events route", async () => {
    const wrong = await request(t.url, "GET", "/v1/info", undefined, { authorization: "Bearer nope-nope-nope-nope" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.message).toContain("wrong token");
    const malformed = await request(t.url, "GET", "/v1/info", undefined, { authorization: `Token ${TOKEN}` });
    expect(malformed.status).toBe(401);
    const prefix = await request(t.url, "GET", "/v1/info", undefined, { authorization: `Bearer ${TOKEN.slice(0, -1)}` });
    expect(prefix.status).toBe(401);
    const query = await request(t.url, "GET", `/v1/sessions?token=${TOKEN}`);
    expect(query.status).toBe(401);
    const ok = await t.api("GET", "/v1/info");
    expect(ok.status).toBe(200);
  });

  it("accepts ?token= on the events route only, and refuses a wrong one there", async () => {
    const id = await newSession();
    const c = await subscribe(id, { query: true });
    expect(c.status).toBe(200);
    await c.close();
    const bad = new SseClient(`${t.url}/v1/sessions/${id}/events`, { query: true, token: "x".repeat(24) });
    await bad.until(() => bad.ended, "refusal");
    expect(bad.status).toBe(401);
  });

  it("refuses a Host that is not loopback (DNS rebinding), even on health", async () => {
    for (const host of ["evil.example", "evil.example:80", "10.0.0.1", "localhost.evil.example", "[fe80::1]:4096"]) {
      const r = await rawGet(t.url, "/v1/info", host);
      expect(r.status, host).toBe(403);
      expect(r.body.error.code).toBe("forbidden_host");
    }
    expect((await rawGet(t.url, "/v1/health", "evil.example")).status).toBe(403);
    for (const host of ["localhost", `localhost:${t.server.port}`, `127.0.0.1:${t.server.port}`, "127.1.2.3", "[::1]:80"]) {
      expect((await rawGet(t.url, "/v1/info", host)).status, host).toBe(200);
    }
  });

  it("serves any Host with --allow-remote", async () => {
    const remote = await startTestServer({ allowRemote: true });
    try {
      expect((await rawGet(remote.url, "/v1/info", "evil.example")).status).toBe(200);
      expect((await rawGet(remote.url, "/v1/info", "evil.example", "wrong-token-wrong-token")).status).toBe(401);
    } finally {
      await remote.close();
    }
  });
});

describe("request bodies and errors", () => {
  it("requires exactly one JSON value and rejects empty bodies", async () => {
    const cases: [string, number, string][] = [
      ["", 400, "empty_body"],
      ["   ", 400, "empty_body"],
      ["{}{}", 400, "invalid_json"],
      ['{"model": "scripted/x"} 1', 400, "invalid_json"],
      ["{bad json", 400, "invalid_json"],
      ["[1, 2]", 400, "bad_request"],
      ['{"modle": "x"}', 400, "bad_request"],
      ['{"mode": "sideways"}', 400, "bad_request"],
    ];
    for (const [body, status, code] of cases) {
      const r = await t.api("POST", "/v1/sessions", body);
      expect(r.status, body).toBe(status);
      expect(r.body.error.code, body).toBe(code);
      expect(typeof r.body.error.message).toBe("string");
    }
  });

  it("answers 413 for a body over 1 MiB", async () => {
    const id = await newSession();
    const r = await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "y".repeat(1024 * 1024 + 10) });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("payload_too_large");
  });

  it("refuses a body on parameterless routes unless it is one JSON value", async () => {
    const id = await newSession();
    expect((await t.api("POST", `/v1/sessions/${id}/cancel`)).status).toBe(204);
    expect((await t.api("POST", `/v1/sessions/${id}/cancel`, "{}")).status).toBe(204);
    const bad = await t.api("POST", `/v1/sessions/${id}/cancel`, "{} {}");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_json");
  });

  it("answers unknown routes with 404 and wrong methods with 405, as JSON", async () => {
    const nf = await t.api("GET", "/v1/nope");
    expect(nf).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
    const na = await t.api("PUT", "/v1/sessions");
    expect(na.status).toBe(405);
    expect(na.body.error.code).toBe("method_not_allowed");
    expect(na.headers.get("allow")).toBe("GET, POST");
    const ns = await t.api("GET", "/v1/sessions/20990101-000000-abcdef/permissions");
    expect(ns.status).toBe(404);
    expect(ns.body.error.message).toContain("not loaded");
  });
});

describe("routes", () => {
  it("GET /v1/info describes the server", async () => {
    const r = await t.api("GET", "/v1/info");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ cwd: t.host.cwd, session_store: "jsonl", defaults: { model: "scripted/x" } });
    expect(r.body.providers).toContain("scripted");
    expect(r.body.plugins).toEqual(expect.arrayContaining(["sessions-jsonl", "server"]));
    expect(r.body.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("creates, lists, gets, patches and deletes sessions", async () => {
    const c = await t.api("POST", "/v1/sessions", { mode: "accept-edits", effort: "low" });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ loaded: true, busy: false, model: "scripted/x", mode: "accept-edits", effort: "low", last_seq: 0, permissions: [], tasks: [] });
    const id = c.body.id as string;
    expect(id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{6}$/);

    const list = await t.api("GET", "/v1/sessions");
    expect(list.body.sessions.find((s: any) => s.id === id)).toMatchObject({ loaded: true, busy: false });

    const byPrefix = await t.api("GET", `/v1/sessions/${id}`);
    expect(byPrefix.body.id).toBe(id);

    const p = await t.api("PATCH", `/v1/sessions/${id}`, { mode: "plan", effort: "high", model: "scripted/y" });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ mode: "plan", effort: "high", model: "scripted/y" });
    const badModel = await t.api("PATCH", `/v1/sessions/${id}`, { model: "nosuch/model" });
    expect(badModel.status).toBe(400);
    expect(badModel.body.error.message).toContain("unknown provider");

    expect((await t.api("DELETE", `/v1/sessions/${id}`)).status).toBe(204);
    // nothing was ever sent to it: closed, its file is not kept
    expect((await t.api("GET", `/v1/sessions/${id}`)).status).toBe(404);
    expect((await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello" })).status).toBe(404);

    // one that got a prompt is unloaded and kept
    const k = await t.api("POST", "/v1/sessions", {});
    const kid = k.body.id as string;
    expect((await t.api("POST", `/v1/sessions/${kid}/prompt`, { text: "hello", wait: true })).status).toBe(200);
    expect((await t.api("DELETE", `/v1/sessions/${kid}`)).status).toBe(204);
    expect((await t.api("GET", `/v1/sessions/${kid}`)).body).toMatchObject({ id: kid, loaded: false, busy: false });
  });

  it("refuses bad session options with one-line errors", async () => {
    const m = await t.api("POST", "/v1/sessions", { model: "nosuch/model" });
    expect(m.status).toBe(400);
    expect(m.body.error.message).toMatch(/unknown provider "nosuch"/);
    const both = await t.api("POST", "/v1/sessions", { resume: "2026", continue: true });
    expect(both.status).toBe(400);
    const fork = await t.api("POST", "/v1/sessions", { fork: true });
    expect(fork.status).toBe(400);
    const unknown = await t.api("POST", "/v1/sessions", { resume: "19990101" });
    expect(unknown.status).toBe(404);
  });

  it("runs a prompt: 202 {after_seq} then events; wait:true answers with the final text", async () => {
    const id = await newSession();
    const sse = await subscribe(id);
    const r = await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello" });
    expect(r).toMatchObject({ status: 202, body: { after_seq: 0 } });
    await sse.idle();
    expect(sse.events.map((e) => e.event)).toEqual(["user_message", "status", "text_delta", "assistant_message", "usage", "done", "status"]);
    expect(sse.events[0]!.data).toEqual({ type: "user_message", text: "hello", seq: 1, session: id });
    expect(sse.events[1]!.data).toMatchObject({ busy: true, busy_with: "prompt" });
    expect(sse.seqs()).toEqual([1, 2, 3, 4, 5, 6, 7]);

    const w = await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "say this", wait: true });
    expect(w.status).toBe(200);
    expect(w.body).toEqual({ after_seq: 7, stop_reason: "end_turn", text: "echo: say this" });
    await sse.close();

    const info = await t.api("GET", `/v1/sessions/${id}`);
    expect(info.body.title).toBe("hello");
    expect(info.body.usage.total).toMatchObject({ input: 20, output: 10 });
    expect(info.body.usage.by_model["scripted/x"]).toMatchObject({ requests: 2 });
  });

  it("attaches a prompt's @ mentions; one refused or naming nothing is a notice event", async () => {
    writeFileSync(join(t.cwd, "note.txt"), "first line\nsecond line\n");
    const id = await newSession();
    const sse = await subscribe(id);
    const w = await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "read @note.txt#L2 and @nowhere.txt but not @Override", wait: true });
    // the scripted model echoes the newest block: the attachment
    expect(w.body.text).toBe('echo: <file path="note.txt" lines="2-2">\n     2\tsecond line\n</file>');
    mkdirSync(join(t.cwd, "big"));
    writeFileSync(join(t.cwd, "big", "huge.txt"), "x".repeat(300 * 1024));
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "see @big/huge.txt", wait: true });
    await sse.until(() => sse.events.filter((e) => e.event === "done").length === 2, "the second turn's done");
    const notices = sse.events.filter((e) => e.event === "notice").map((e) => e.data.text);
    // a path where there is nothing is named too (a typo); `@Override` reads as no path and is prose
    expect(notices).toEqual([
      "@nowhere.txt not attached: there is no file or folder at nowhere.txt",
      expect.stringMatching(/^@big\/huge\.txt not attached: 300 KB is over the 256 KB limit/),
    ]);
    await sse.close();
  });

  it("returns messages (also for an unloaded session), resumes, continues and forks", async () => {
    const id = await newSession();
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "first", wait: true });
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "second", wait: true });
    const m = await t.api("GET", `/v1/sessions/${id}/messages`);
    expect(m.body.messages.map((x: any) => x.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(m.body.prompts).toEqual([
      { index: 0, text: "first" },
      { index: 2, text: "second" },
    ]);

    // fork at prompt 2: keeps the first exchange and hands back the prompt text
    const f = await t.api("POST", `/v1/sessions/${id}/fork`, { at: 2 });
    expect(f.status).toBe(201);
    expect(f.body).toMatchObject({ loaded: true, fork_of: id, prompt: "second" });
    const fm = await t.api("GET", `/v1/sessions/${f.body.id}/messages`);
    expect(fm.body.messages).toHaveLength(2);
    const bad = await t.api("POST", `/v1/sessions/${id}/fork`, { at: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("use one of 0, 2");
    const all = await t.api("POST", `/v1/sessions/${id}/fork`, {});
    expect((await t.api("GET", `/v1/sessions/${all.body.id}/messages`)).body.messages).toHaveLength(4);
    expect((await t.api("POST", `/v1/sessions/${id}/fork`)).status).toBe(400); // a body is required

    // unload, read messages from the file, then resume (by prefix) and continue
    expect((await t.api("DELETE", `/v1/sessions/${id}`)).status).toBe(204);
    const unloaded = await t.api("GET", `/v1/sessions/${id}/messages`);
    expect(unloaded.body.messages).toHaveLength(4);
    const r = await t.api("POST", "/v1/sessions", { resume: id.slice(0, 20) });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id, loaded: true, model: "scripted/x" });
    const again = await t.api("POST", "/v1/sessions", { resume: id });
    expect(again.status).toBe(200);
    const w = await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "third", wait: true });
    expect(w.body.text).toBe("echo: third");
    const cont = await t.api("POST", "/v1/sessions", { continue: true });
    expect(cont.status).toBe(200);
    expect(cont.body.id).toBe(id);
    const branched = await t.api("POST", "/v1/sessions", { resume: id, fork: true });
    expect(branched.status).toBe(201);
    expect(branched.body).toMatchObject({ fork_of: id });
    expect(branched.body.id).not.toBe(id);
  });

  it("titles a session whose first prompt a command made by what was typed, loaded or not", async () => {
    // a -p or TUI run of `/review main..HEAD`: the model gets the review prompt, the store what was typed
    const agent = await t.host.openAgent({ model: "scripted/x" });
    for await (const ev of agent.run("Review the code changes that Larik collected below", { typed: "/review main..HEAD" })) if (ev.type === "done") break;
    const id = agent.session.id;
    await agent.close("exit");
    const list = await t.api("GET", "/v1/sessions");
    expect(list.body.sessions.find((s: any) => s.id === id)).toMatchObject({ title: "/review main..HEAD", loaded: false });
    expect((await t.api("POST", "/v1/sessions", { resume: id })).status).toBe(201);
    expect((await t.api("GET", `/v1/sessions/${id}`)).body.title).toBe("/review main..HEAD");
    const loaded = await t.api("GET", "/v1/sessions");
    expect(loaded.body.sessions.find((s: any) => s.id === id)).toMatchObject({ title: "/review main..HEAD", loaded: true });
    // what the model got is unchanged
    const m = await t.api("GET", `/v1/sessions/${id}/messages`);
    expect(m.body.messages[0].blocks.at(-1).text).toBe("Review the code changes that Larik collected below");
  });

  it("lists a command's prompt with what was typed beside the text the model got, loaded or not; fork returns both", async () => {
    const agent = await t.host.openAgent({ model: "scripted/x" });
    for await (const ev of agent.run("Review the code changes that Larik collected below", { typed: "/review main..HEAD" })) if (ev.type === "done") break;
    for await (const ev of agent.run("and the tests?")) if (ev.type === "done") break;
    const id = agent.session.id;
    await agent.close("exit");
    const prompts = [
      { index: 0, text: "Review the code changes that Larik collected below", typed: "/review main..HEAD" },
      { index: 2, text: "and the tests?" },
    ];
    // unloaded: read from the file
    expect((await t.api("GET", `/v1/sessions/${id}/messages`)).body.prompts).toEqual(prompts);
    expect((await t.api("POST", "/v1/sessions", { resume: id })).status).toBe(201);
    expect((await t.api("GET", `/v1/sessions/${id}/messages`)).body.prompts).toEqual(prompts);
    // the text is what re-sends the turn (POST …/prompt runs no slash command); typed is for showing
    const f = await t.api("POST", `/v1/sessions/${id}/fork`, { at: 0 });
    expect(f.status).toBe(201);
    expect(f.body).toMatchObject({ fork_of: id, prompt: "Review the code changes that Larik collected below", typed: "/review main..HEAD" });
    const plain = await t.api("POST", `/v1/sessions/${id}/fork`, { at: 2 });
    expect(plain.body.prompt).toBe("and the tests?");
    expect(plain.body).not.toHaveProperty("typed");
  });

  it("compacts, undoes and clears", async () => {
    const id = await newSession();
    const empty = await t.api("POST", `/v1/sessions/${id}/compact`);
    expect(empty.status).toBe(409);
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true });
    const sse = await subscribe(id, { lastEventId: 0 });
    const c = await t.api("POST", `/v1/sessions/${id}/compact`);
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ summary: "we said hello", trigger: "manual" });
    expect(typeof c.body.saved_tokens).toBe("number");
    const compacted = await sse.next("compacted");
    expect(compacted.data.summary).toBe("we said hello");
    expect(sse.events.filter((e) => e.event === "status").map((e) => e.data.busy_with ?? "idle").slice(-2)).toEqual(["compact", "idle"]);

    const u = await t.api("POST", `/v1/sessions/${id}/undo`);
    expect(u).toMatchObject({ status: 200, body: { restored: [] } });
    expect((await t.api("POST", `/v1/sessions/${id}/clear`)).status).toBe(204);
    const s = await t.api("GET", `/v1/sessions/${id}`);
    expect(s.body.busy).toBe(false);
    await sse.close();
  });

  it("lists tasks (none yet) and 404s an unknown task", async () => {
    const id = await newSession();
    expect(await t.api("GET", `/v1/sessions/${id}/tasks`)).toMatchObject({ status: 200, body: { tasks: [] } });
    const d = await t.api("DELETE", `/v1/sessions/${id}/tasks/bg-1`);
    expect(d.status).toBe(404);
    expect(d.body.error.message).toContain("bg-1");
  });
});

describe("without a session store", () => {
  it("keeps sessions in memory with distinct ids and refuses what needs a store", async () => {
    const mem = await startTestServer({ memory: true });
    try {
      const created = await Promise.all([1, 2, 3].map(() => mem.api("POST", "/v1/sessions", {})));
      const ids = created.map((c) => c.body.id as string);
      expect(new Set(ids).size).toBe(3);
      expect(created[0]!.body.location).toBe("(memory)");
      for (const id of ids) expect((await mem.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true })).body.text).toBe("hi there");
      expect((await mem.api("GET", "/v1/sessions")).body.sessions.map((s: any) => s.id).sort()).toEqual([...ids].sort());
      expect((await mem.api("GET", `/v1/sessions/${ids[0]}/messages`)).body.messages).toHaveLength(2);
      const fork = await mem.api("POST", `/v1/sessions/${ids[0]}/fork`, {});
      expect(fork.status).toBe(501);
      expect(fork.body.error.message).toContain("session store");
      const resume = await mem.api("POST", "/v1/sessions", { resume: ids[0] });
      expect(resume.status).toBe(400);
      expect((await mem.api("DELETE", `/v1/sessions/${ids[0]}`)).status).toBe(204);
      expect((await mem.api("GET", `/v1/sessions/${ids[0]}/messages`)).status).toBe(404);
    } finally {
      await mem.close();
    }
  });
});

describe("busy sessions", () => {
  it("answers 409 to prompt, compact, undo, clear, fork and model/effort changes while a turn runs; mode may change", async () => {
    const id = await newSession();
    const sse = await subscribe(id);
    const entered = t.gates.entered("busy1");
    expect((await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "gate busy1" })).status).toBe(202);
    await entered;
    for (const [method, path, body] of [
      ["POST", "prompt", { text: "hello" }],
      ["POST", "compact", undefined],
      ["POST", "undo", undefined],
      ["POST", "clear", undefined],
      ["POST", "fork", {}],
      ["PATCH", "", { model: "scripted/z" }],
      ["PATCH", "", { effort: "max" }],
    ] as const) {
      const r = await t.api(method, `/v1/sessions/${id}${path ? `/${path}` : ""}`, body);
      expect(r.status, `${method} ${path}`).toBe(409);
      expect(r.body.error.code).toBe("busy");
    }
    const mode = await t.api("PATCH", `/v1/sessions/${id}`, { mode: "yolo" });
    expect(mode.status).toBe(200);
    expect(mode.body).toMatchObject({ mode: "yolo", busy: true, busy_with: "prompt" });
    expect((await t.api("GET", "/v1/sessions")).body.sessions.find((s: any) => s.id === id)).toMatchObject({ busy: true });
    t.gates.open("busy1");
    await sse.idle();
    expect(sse.events.find((e) => e.event === "tool_end")!.data.output).toBe("gate busy1 passed");
    expect((await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true })).body.text).toBe("hi there");
    await sse.close();
  });

  it("cancels mid-tool: the tool ends interrupted and the session is idle again", async () => {
    const id = await newSession();
    const sse = await subscribe(id);
    const entered = t.gates.entered("never");
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "gate never" });
    await entered;
    await sse.next("tool_start");
    expect((await t.api("POST", `/v1/sessions/${id}/cancel`)).status).toBe(204);
    const end = await sse.next("tool_end");
    expect(end.data).toMatchObject({ tool_name: "gate", is_error: true, output: "interrupted by user" });
    expect((await sse.next("done")).data.stop_reason).toBe("interrupted");
    await sse.idle();
    const m = await t.api("GET", `/v1/sessions/${id}/messages`);
    const results = m.body.messages.flatMap((x: any) => x.blocks).filter((b: any) => b.type === "tool_result");
    expect(results).toEqual([{ type: "tool_result", id: expect.any(String), content: "interrupted by user", is_error: true }]);
    expect((await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true })).body.text).toBe("hi there");
    await sse.close();
  });

  it("cancels mid-reply: the partial reply is an assistant_message marked partial, not wait:true's answer", async () => {
    const id = await newSession();
    const sse = await subscribe(id);
    // 100 deltas of 8 characters, 50 ms apart: cancelled long before the end
    const waited = t.api("POST", `/v1/sessions/${id}/prompt`, { text: "stream 800 50", wait: true });
    await sse.until(() => sse.events.filter((e) => e.event === "text_delta").length >= 2, "two deltas");
    expect((await t.api("POST", `/v1/sessions/${id}/cancel`)).status).toBe(204);
    const w = await waited;
    expect(w.body).toMatchObject({ stop_reason: "interrupted", text: "" });
    await sse.idle();
    const replies = sse.events.filter((e) => e.event === "assistant_message");
    expect(replies).toHaveLength(1);
    const [got, marker] = replies[0]!.data.message.blocks;
    expect(replies[0]!.data.partial).toBe(true);
    expect(got.text).toMatch(/^x{16,792}$/);
    expect(marker).toEqual({ type: "text", text: "[interrupted by user]" });
    await sse.close();
  });
});

describe("permissions", () => {
  it("holds a request until a second client answers it; both see the outcome", async () => {
    const id = await newSession();
    const a = await subscribe(id);
    const b = await subscribe(id, { query: true });
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "ask notes.txt" });
    const req = await b.next("permission_request");
    expect(req.data).toMatchObject({ request_id: "perm-1", tool_name: "ask_write", input: { path: "notes.txt" }, seq: Number(req.id), session: id });
    const pending = await t.api("GET", `/v1/sessions/${id}/permissions`);
    expect(pending.body.permissions).toEqual([{ request_id: "perm-1", seq: Number(req.id), event: expect.objectContaining({ tool_name: "ask_write" }) }]);
    expect((await t.api("GET", `/v1/sessions/${id}`)).body.permissions).toHaveLength(1);

    const answer = await request(t.url, "POST", `/v1/sessions/${id}/permissions/perm-1`, { allow: true }, { authorization: `Bearer ${TOKEN}` });
    expect(answer.status).toBe(204);
    for (const c of [a, b]) expect((await c.next("permission_resolved")).data).toMatchObject({ request_id: "perm-1", outcome: "allowed" });
    expect((await a.next("tool_end")).data).toMatchObject({ output: "wrote notes.txt", is_error: false });
    await a.idle();
    const twice = await t.api("POST", `/v1/sessions/${id}/permissions/perm-1`, { allow: false });
    expect(twice.status).toBe(409);
    expect(twice.body.error.message).toContain("already allowed");
    const unknown = await t.api("POST", `/v1/sessions/${id}/permissions/perm-99`, { allow: true });
    expect(unknown.status).toBe(404);
    expect((await t.api("GET", `/v1/sessions/${id}/permissions`)).body.permissions).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });

  it("returns a denial's reason to the model", async () => {
    const id = await newSession();
    const sse = await subscribe(id);
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "ask secret.txt" });
    const req = await sse.next("permission_request");
    const bad = await t.api("POST", `/v1/sessions/${id}/permissions/${req.data.request_id}`, { allow: "yes" });
    expect(bad.status).toBe(400);
    expect((await t.api("POST", `/v1/sessions/${id}/permissions/${req.data.request_id}`, { allow: false, reason: "not that file" })).status).toBe(204);
    expect((await sse.next("permission_resolved")).data.outcome).toBe("denied");
    const end = await sse.next("tool_end");
    expect(end.data.is_error).toBe(true);
    expect(end.data.output).toContain("not that file");
    await sse.close();
  });

  it("answers always with {allowed, persisted}", async () => {
    const id = await newSession();
    const sse = await subscribe(id);
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "ask a.txt" });
    const req = await sse.next("permission_request");
    const r = await t.api("POST", `/v1/sessions/${id}/permissions/${req.data.request_id}`, { allow: true, always: true });
    expect(r.status).toBe(200);
    expect(r.body.allowed).toBe(true);
    expect(r.body.persisted).toBe(true);
    {
      const file = readFileSync(join(t.host.env.XDG_CONFIG_HOME!, "larik", "projects", readdirName(t.host.env.XDG_CONFIG_HOME!)), "utf8");
      expect(JSON.parse(file).permissions.allow).toContain("ask_write");
    }
    await sse.idle();
    await sse.close();
  });

  it("expires unanswered requests when the run ends", async () => {
    const id = await newSession();
    const sse = await subscribe(id);
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "ask late.txt" });
    const req = await sse.next("permission_request");
    await t.api("POST", `/v1/sessions/${id}/cancel`);
    expect((await sse.next("permission_resolved")).data).toMatchObject({ request_id: req.data.request_id, outcome: "expired" });
    await sse.idle();
    const late = await t.api("POST", `/v1/sessions/${id}/permissions/${req.data.request_id}`, { allow: true });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toContain("expired");
    await sse.close();
  });
});

describe("OpenAPI", () => {
  it("documents every route from the zod schemas and keeps docs/openapi.json current", async () => {
    const r = await t.api("GET", "/v1/openapi.json");
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toBe("3.0.3");
    for (const route of ROUTES) expect(doc.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    const create = doc.paths["/v1/sessions"].post;
    expect(create.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/CreateSessionRequest" });
    expect(doc.components.schemas.PromptRequest).toMatchObject({ type: "object", required: ["text"] });
    expect(doc.paths["/v1/health"].get.security).toEqual([]);
    expect(doc.paths["/v1/sessions/{id}/events"].get.responses["200"].content["text/event-stream"]).toBeDefined();
    const ids = Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    const file = resolve(import.meta.dirname, "..", "docs", "openapi.json");
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === "1") writeFileSync(file, text);
    // the committed document must match the routes: regenerate with UPDATE_OPENAPI=1 npx vitest run test/server.test.ts
    expect(readFileSync(file, "utf8"), "docs/openapi.json is out of date").toBe(text);
  });
});

describe("SSE event types: the OpenAPI document, docs/server.md and the stream agree", () => {
  /** The `type` values of the ServerEvent component's alternatives: the event types the OpenAPI promises. */
  function openApiTypes(schema: unknown, out = new Set<string>()): Set<string> {
    const o = schema as { properties?: { type?: { enum?: string[] } }; anyOf?: unknown[]; oneOf?: unknown[]; allOf?: unknown[] };
    for (const v of o.properties?.type?.enum ?? []) out.add(v);
    for (const s of [...(o.anyOf ?? []), ...(o.oneOf ?? []), ...(o.allOf ?? [])]) openApiTypes(s, out);
    return out;
  }

  /** The types docs/server.md's "Events (SSE)" section names: the §22 list, then its table of server types. */
  function documentedTypes(): Set<string> {
    const md = readFileSync(resolve(import.meta.dirname, "..", "docs", "server.md"), "utf8");
    const start = md.indexOf("## Events (SSE)");
    const section = md.slice(start, md.indexOf("\n## ", start));
    const list = /one of: ([^.]*)\./.exec(section.replace(/\s+/g, " "))![1]!;
    const agent = [...list.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    const server = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!);
    return new Set([...agent, ...server]);
  }

  it("lists the same types in both, each turn event among them, and a session's stream sends no other", async () => {
    const doc = (await t.api("GET", "/v1/openapi.json")).body;
    const listed = openApiTypes(doc.components.schemas.ServerEvent);
    const documented = documentedTypes();
    expect([...listed].sort()).toEqual([...documented].sort());
    const { AgentEventSchema } = await import("../kernel/index.js");
    const kernelTypes = (AgentEventSchema._zod.def.options as { _zod: { propValues?: { type?: Set<string> } } }[]).flatMap((o) => [...(o._zod.propValues?.type ?? [])]);
    // init is printed by -p itself, before its turn; every other type a turn may emit is relayed
    for (const type of kernelTypes) expect(listed.has(type), type).toBe(type !== "init");

    // what a client of a new session sees, from its very first event
    const id = await newSession();
    const sse = await subscribe(id, { after: 0 });
    expect((await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true })).status).toBe(200);
    await t.api("POST", `/v1/sessions/${id}/prompt`, { text: "ask types.txt" });
    const req = await sse.next("permission_request");
    expect((await t.api("POST", `/v1/sessions/${id}/permissions/${req.data.request_id}`, { allow: true })).status).toBe(204);
    await sse.idle(Number(req.id));
    expect((await t.api("POST", `/v1/sessions/${id}/compact`)).status).toBe(200);
    expect((await t.api("DELETE", `/v1/sessions/${id}`)).status).toBe(204);
    await sse.until(() => sse.ended, "the stream's end");
    expect(sse.events[0]!.event).toBe("user_message");
    const seen = new Set(sse.events.map((e) => e.event!));
    for (const type of ["user_message", "status", "text_delta", "assistant_message", "usage", "permission_request", "permission_resolved", "tool_start", "tool_end", "compacted", "done", "session_closed"]) {
      expect(seen.has(type), type).toBe(true);
    }
    for (const type of seen) expect(listed.has(type), `${type} is sent but not in the OpenAPI`).toBe(true);
  });
});

/** The private project settings file is the only file in projects/. */
function readdirName(configHome: string): string {
  return readdirSync(join(configHome, "larik", "projects"))[0]!;
}
