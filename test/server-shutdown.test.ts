/**
 * The `larik serve` front end (LARIK-REFERENCE §21): option validation, the one JSON line on
 * stdout, and graceful shutdown on SIGTERM/SIGINT with a session mid-turn (agents closed first,
 * the session file left whole, then the server stopped).
 */
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, Host, type CliArgs } from "../kernel/index.js";
import sessionsJsonl from "../plugins/sessions-jsonl/index.js";
import serverPlugin from "../plugins/server/index.js";
import { runServe } from "../plugins/server/serve.js";
import { startServer } from "../plugins/server/server.js";
import { parseAddr, serveConfig } from "../plugins/server/options.js";
import { Gates, SseClient, request, testPlugin, tmp } from "./server-harness.js";

const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

async function makeHost(env: Record<string, string> = {}) {
  const gates = new Gates();
  const data = tmp("larik-data-");
  const host = await Host.create({
    plugins: [sessionsJsonl, testPlugin(gates), serverPlugin],
    settings: {},
    cwd: tmp(),
    env: { ...process.env, XDG_DATA_HOME: data, XDG_CONFIG_HOME: join(data, "config"), LARIK_SERVER_TOKEN: "", ...env },
  });
  hosts.push(host);
  return { host, gates };
}

const args = (values: CliArgs["values"], positionals: string[] = []): CliArgs => ({ values, positionals });

describe("serve options", () => {
  it("parses addresses", () => {
    expect(parseAddr("127.0.0.1:4096")).toEqual({ hostname: "127.0.0.1", port: 4096 });
    expect(parseAddr(":0")).toEqual({ hostname: "127.0.0.1", port: 0 });
    expect(parseAddr("[::1]:80")).toEqual({ hostname: "::1", port: 80 });
    for (const bad of ["4096", "localhost", "host:99999", "a:b", "[::1]"]) expect(() => parseAddr(bad), bad).toThrow(/invalid --addr/);
  });

  it("validates the command line and resolves the token", async () => {
    const { host } = await makeHost();
    const d = serveConfig(host, args({}));
    expect(d).toMatchObject({ hostname: "127.0.0.1", port: 4096, allowRemote: false });
    expect(d.token).toMatch(/^[0-9a-f]{48}$/);
    expect(serveConfig(host, args({})).token).not.toBe(d.token);
    expect(serveConfig(host, args({ token: "flag-token-flag-token" })).token).toBe("flag-token-flag-token");
    expect(() => serveConfig(host, args({ addr: "0.0.0.0:4096" }))).toThrow(/not a loopback address: add --allow-remote/);
    expect(serveConfig(host, args({ addr: "0.0.0.0:4096", "allow-remote": true })).allowRemote).toBe(true);
    expect(() => serveConfig(host, args({ mode: "wild" }))).toThrow(ConfigError);
    expect(() => serveConfig(host, args({ effort: "extreme" }))).toThrow(/unknown effort "extreme"/);
    expect(() => serveConfig(host, args({ model: "nosuch/m" }))).toThrow(/unknown provider/);
    expect(() => serveConfig(host, args({ token: "short" }))).toThrow(/at least 16/);
    expect(() => serveConfig(host, args({}, ["extra"]))).toThrow(/takes no arguments/);
    const { host: envHost } = await makeHost({ LARIK_SERVER_TOKEN: "env-token-env-token" });
    expect(serveConfig(envHost, args({})).token).toBe("env-token-env-token");
    expect(serveConfig(envHost, args({ token: "flag-wins-flag-wins" })).token).toBe("flag-wins-flag-wins");
  });

  it("names the address when the port is taken", async () => {
    const { host } = await makeHost();
    const first = await startServer(host, { port: 0, token: "port-taken-0123456789", log: () => {} });
    try {
      await expect(startServer(host, { port: first.port, token: "port-taken-0123456789", log: () => {} })).rejects.toThrow(
        new RegExp(`cannot listen on 127.0.0.1:${first.port}: the port is in use`),
      );
    } finally {
      await first.close();
    }
  });

  it("is served by the package entry's startServer for an embedder's own host, loopback unless allowRemote", async () => {
    const { startServer: fromPackage } = await import("../index.js");
    const host = await Host.create({ plugins: [sessionsJsonl], settings: {}, cwd: tmp(), env: { XDG_DATA_HOME: tmp("larik-data-") } });
    hosts.push(host);
    await expect(fromPackage(host, { hostname: "0.0.0.0", port: 0, token: "embedded-0123456789", log: () => {} })).rejects.toThrow(
      new ConfigError("hostname 0.0.0.0 is not a loopback address: pass allowRemote: true to listen there (anyone who can reach it and has the token controls this machine)"),
    );
    const server = await fromPackage(host, { port: 0, token: "embedded-0123456789", log: () => {} });
    try {
      const res = await fetch(`${server.url}/v1/sessions`, { headers: { authorization: "Bearer embedded-0123456789" } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ sessions: [] });
    } finally {
      await server.close();
    }
  });

  it("is registered as the serve subcommand without loading the server code", async () => {
    const { host } = await makeHost();
    const fe = host.frontends.get("server")!;
    expect(fe.subcommand).toBe("serve");
    expect(Object.keys(fe.options ?? {})).toEqual(expect.arrayContaining(["addr", "token", "allow-remote"]));
  });
});

describe("graceful shutdown", () => {
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    it(`on ${signal}: closes the running session (file intact), then the server`, async () => {
      const { host, gates } = await makeHost();
      const signals = new EventEmitter();
      let stdout = "";
      let stderr = "";
      const exit = runServe(host, args({ addr: "127.0.0.1:0", model: "scripted/x", token: "shutdown-token-123456" }), {
        stdout: { write: (s: string) => (stdout += s) },
        stderr: { write: (s: string) => (stderr += s) },
        signals,
      });
      await new Promise<void>((r) => {
        const check = () => (stdout.includes("\n") ? r() : setTimeout(check, 10));
        check();
      });
      const lines = stdout.trim().split("\n");
      expect(lines).toHaveLength(1);
      const { url, token } = JSON.parse(lines[0]!) as { url: string; token: string };
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(token).toBe("shutdown-token-123456");
      expect(stderr).toContain("listening on");
      const auth = { authorization: `Bearer ${token}` };

      const created = await request(url, "POST", "/v1/sessions", {}, auth);
      const id = created.body.id as string;
      const location = created.body.location as string;
      const sse = new SseClient(`${url}/v1/sessions/${id}/events`, { token });
      await sse.until(() => sse.comments.includes("connected"), "stream open");
      await request(url, "POST", `/v1/sessions/${id}/prompt`, { text: "hello", wait: true }, auth);
      const entered = gates.entered("shut");
      await request(url, "POST", `/v1/sessions/${id}/prompt`, { text: "gate shut" }, auth);
      await entered;

      signals.emit(signal);
      // a closing terminal sends more than one hangup; they must not cut the shutdown short
      if (signal === "SIGHUP") signals.emit("SIGHUP");
      expect(await exit).toBe(0);
      await sse.until(() => sse.ended, "stream end");
      expect(sse.events.at(-1)!.data).toMatchObject({ type: "session_closed", reason: "shutdown" });
      expect(sse.events.some((e) => e.event === "done" && e.data.stop_reason === "interrupted")).toBe(true);
      expect(stderr).toMatch(new RegExp(`${signal}: closing 1 session`));
      await expect(fetch(`${url}/v1/health`)).rejects.toThrow();
      expect(signals.listenerCount("SIGTERM") + signals.listenerCount("SIGINT")).toBe(0);

      // every line is whole JSON, the turn's interruption was recorded, and the lock is gone
      const file = readFileSync(location, "utf8");
      expect(file.endsWith("\n")).toBe(true);
      const entries = file.trim().split("\n").map((l) => JSON.parse(l));
      expect(entries[0].type).toBe("meta");
      const blocks = entries.filter((e) => e.type === "message").flatMap((e) => e.message.blocks);
      expect(blocks.filter((b: any) => b.type === "text").map((b: any) => b.text)).toEqual(expect.arrayContaining(["hello", "hi there", "gate shut"]));
      expect(blocks.find((b: any) => b.type === "tool_result")).toMatchObject({ content: "interrupted by user", is_error: true });
      expect(existsSync(`${location}.lock`)).toBe(false);
      const reopened = await host.sessionStore!.open(host.cwd, id);
      expect(reopened.warnings).toEqual([]);
      await reopened.close();
    });
  }

  it("stops waiting on a second signal", async () => {
    const { host, gates } = await makeHost();
    const signals = new EventEmitter();
    let stdout = "";
    const exit = runServe(host, args({ addr: "127.0.0.1:0", model: "scripted/x", token: "second-signal-123456" }), {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: () => true },
      signals,
    });
    await new Promise<void>((r) => {
      const check = () => (stdout.includes("\n") ? r() : setTimeout(check, 10));
      check();
    });
    const { url, token } = JSON.parse(stdout) as { url: string; token: string };
    const auth = { authorization: `Bearer ${token}` };
    const id = (await request(url, "POST", "/v1/sessions", {}, auth)).body.id as string;
    const entered = gates.entered("stubborn");
    await request(url, "POST", `/v1/sessions/${id}/prompt`, { text: "gate stubborn" }, auth);
    await entered;
    let settled = false;
    void exit.then(() => (settled = true));
    signals.emit("SIGINT");
    // the tool ignores cancellation, so the graceful close cannot finish
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toBe(false);
    signals.emit("SIGINT");
    expect(await exit).toBe(130);
    await expect(fetch(`${url}/v1/health`)).rejects.toThrow();
    gates.open("stubborn");
  });
});

/** A child process that serves a host with the test plugin, loading TypeScript through jiti. */
const CHILD = `
const [root] = process.argv.slice(2);
const { createJiti } = await import(root + "/node_modules/jiti/lib/jiti.mjs");
const jiti = createJiti(import.meta.url);
const { Host } = await jiti.import(root + "/kernel/index.ts");
const sessions = (await jiti.import(root + "/plugins/sessions-jsonl/index.ts")).default;
const server = (await jiti.import(root + "/plugins/server/index.ts")).default;
const { Gates, testPlugin } = await jiti.import(root + "/test/server-harness.ts");
const host = await Host.create({ plugins: [sessions, testPlugin(new Gates()), server], settings: {}, cwd: process.cwd() });
const fe = host.frontends.get("server");
const code = await fe.run(host, { values: { addr: "127.0.0.1:0", model: "scripted/x" }, positionals: [] });
await host.dispose();
process.exitCode = code;
`;

describe("larik serve as a process", () => {
  for (const signal of ["SIGTERM", "SIGHUP"] as const)
  it(`prints {url, token}, and on a real ${signal} closes the open session and exits 0`, async () => {
    const root = resolve(import.meta.dirname, "..");
    const dir = tmp("larik-serve-proc-");
    const script = join(dir, "serve-child.mjs");
    writeFileSync(script, CHILD);
    const data = tmp("larik-data-");
    const child = spawn(process.execPath, [script, root], {
      cwd: dir,
      env: { ...process.env, XDG_DATA_HOME: data, XDG_CONFIG_HOME: join(data, "config"), LARIK_SERVER_TOKEN: "process-token-0123456789" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    try {
      await new Promise<void>((r, reject) => {
        const check = () => (stdout.includes("\n") ? r() : child.exitCode !== null ? reject(new Error(stderr)) : setTimeout(check, 20));
        check();
      });
      const { url, token } = JSON.parse(stdout.trim()) as { url: string; token: string };
      expect(token).toBe("process-token-0123456789");
      const auth = { authorization: `Bearer ${token}` };
      const created = await request(url, "POST", "/v1/sessions", {}, auth);
      expect(created.status).toBe(201);
      expect((await request(url, "POST", `/v1/sessions/${created.body.id}/prompt`, { text: "hello", wait: true }, auth)).body.text).toBe("hi there");
      const sse = new SseClient(`${url}/v1/sessions/${created.body.id}/events`, { token });
      await sse.until(() => sse.comments.includes("connected"), "stream open");
      await request(url, "POST", `/v1/sessions/${created.body.id}/prompt`, { text: "gate forever" }, auth);
      await sse.next("tool_start");

      child.kill(signal);
      // the terminal closing: the kernel's hangup, then the shell passes its own on
      if (signal === "SIGHUP") child.kill("SIGHUP");
      expect(await exited).toBe(0);
      expect(stdout.trim().split("\n")).toHaveLength(1);
      expect(stderr).toContain(`${signal}: closing 1 session(s)`);
      await sse.until(() => sse.ended, "stream end");
      expect(sse.events.at(-1)!.data.type).toBe("session_closed");
      const location = created.body.location as string;
      const entries = readFileSync(location, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      expect(entries.filter((e) => e.type === "message").map((e) => e.message.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
      expect(existsSync(`${location}.lock`)).toBe(false);
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
  }, 90_000);
});
