/**
 * One MCP server connection and the manager of all of them (LARIK-REFERENCE §15 "Lifecycle").
 *
 * Servers connect in the background; each settles as `connected` or `failed` within a
 * handshake timeout, and nothing a server does (crash, junk on stdout, silence, dying mid-call)
 * throws past this file: failures become a state, a one-line notice naming the server, and
 * `is_error` tool results. The official TypeScript SDK (`@modelcontextprotocol/sdk` 1.32) does
 * the protocol; it is imported on first connect so registering the plugin stays free.
 */
import { createWriteStream, mkdirSync, openSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerEntry } from "./config.js";
import { authProviderFor, isAuthError } from "./auth.js";

/** Where a server is in its life. */
export type ServerState = "starting" | "connected" | "failed" | "unapproved" | "needs-sign-in" | "closed";

/** Timing knobs, in ms. Tests shorten them; the defaults suit real servers. */
export interface Timeouts {
  /** Spawn/connect plus the `initialize` handshake (default 30 000). */
  connectMs: number;
  /** One tool call, reset by progress notifications (default 600 000). */
  callMs: number;
  /** List, read and prompt requests (default 60 000). */
  requestMs: number;
}
export const DEFAULT_TIMEOUTS: Timeouts = { connectMs: 30_000, callMs: 600_000, requestMs: 60_000 };

/** Shared by every connection of a manager. */
export interface ConnectionOptions {
  /** Working directory of stdio servers (the project's cwd). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `<dataDir>/logs`: stdio stderr and transport errors go to `mcp-<name>.log` here. */
  logDir: string;
  timeouts: Timeouts;
  /** One-line notices for the user (failures, junk output). */
  notify(text: string): void;
  /** Called after a (re)listing of tools or prompts of a connected server. */
  onChange?(conn: McpConnection): void;
}

/** An error for a call to a server that is not (or no longer) connected. */
class ServerUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServerUnavailableError";
  }
}

const CLIENT_INFO = { name: "larik", version: "0.1.0" };
const MAX_PAGES = 50;

/** One configured server. */
export class McpConnection {
  readonly entry: ServerEntry;
  state: ServerState = "starting";
  /** One line: why the server failed, is unapproved or needs sign-in. */
  error?: string;
  tools: Tool[] = [];
  prompts: Prompt[] = [];
  /** True when the server advertised the `resources` capability. */
  hasResources = false;
  instructions?: string;
  serverInfo?: { name: string; version: string };
  /** Lines the server wrote to stdout that were not JSON-RPC (ignored). */
  junkLines = 0;
  /** `<logDir>/mcp-<name>.log`. */
  readonly logFile: string;
  #opts: ConnectionOptions;
  #client?: Client;
  #transport?: Transport;
  #log?: WriteStream;
  #stderrTail = "";
  #closing = false;
  /** The stdio server's pid once started (see #reap). */
  #pid: number | undefined;
  #ready?: Promise<void>;

  constructor(entry: ServerEntry, opts: ConnectionOptions) {
    this.entry = entry;
    this.#opts = opts;
    this.logFile = join(opts.logDir, `mcp-${entry.name}.log`);
  }

  get name(): string {
    return this.entry.name;
  }

  /** Settles (never rejects) once the server is connected or has failed; undefined before start. */
  get ready(): Promise<void> | undefined {
    return this.#ready;
  }

  /** Starts connecting in the background; returns the `ready` promise. Idempotent. */
  start(): Promise<void> {
    this.#ready ??= this.#connect().catch(() => {});
    return this.#ready;
  }

  #logLine(text: string): void {
    try {
      this.#openLog().write(`[${new Date().toISOString()}] ${text}\n`);
    } catch {
      // logging must never hurt the connection
    }
  }

  #openLog(): WriteStream {
    if (!this.#log) {
      mkdirSync(this.#opts.logDir, { recursive: true });
      // opened here, not by the stream on a worker thread: the file then exists before this
      // returns, and never appears later in a folder someone is removing (a test's, say)
      const fd = openSync(this.logFile, "a", 0o600);
      this.#log = createWriteStream(this.logFile, { fd });
      this.#log.on("error", () => {});
    }
    return this.#log;
  }

  #fail(state: "failed" | "needs-sign-in", message: string): void {
    if (this.state === "failed" || this.state === "closed") return;
    this.state = state;
    this.error = message;
    this.#logLine(`${state}: ${message}`);
    this.#opts.notify(
      state === "needs-sign-in"
        ? `mcp server "${this.name}" needs sign-in: ${message}`
        : `mcp server "${this.name}" failed: ${message}${this.entry.config?.type === "stdio" ? ` (log: ${this.logFile})` : ""}`,
    );
  }

  async #connect(): Promise<void> {
    const config = this.entry.config;
    if (!config) {
      this.#fail("failed", this.entry.error ?? "bad configuration");
      return;
    }
    this.state = "starting";
    this.#logLine(`starting (${config.type === "stdio" ? `${config.command} ${config.args.join(" ")}` : config.url})`);
    let transport: Transport;
    try {
      transport = await this.#makeTransport();
    } catch (err) {
      this.#fail("failed", oneLine(err));
      return;
    }
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    this.#client = client;
    this.#transport = transport;
    client.onerror = (err) => this.#onError(err);
    client.onclose = () => this.#onClose();
    try {
      await client.connect(transport, { timeout: this.#opts.timeouts.connectMs });
    } catch (err) {
      const timedOut = /timed? ?out/i.test(oneLine(err));
      let msg: string;
      if (isAuthError(err)) {
        this.#fail("needs-sign-in", `${oneLine(err)} (run /mcp login ${this.name})`);
        void this.#shutdown();
        return;
      } else if (timedOut) msg = `no handshake within ${Math.round(this.#opts.timeouts.connectMs / 1000)} s`;
      else if (/connection closed/i.test(oneLine(err))) msg = "the server exited before the handshake";
      else msg = oneLine(err);
      const tail = this.#stderrTail.trim().split("\n").pop();
      if (tail) msg += ` (stderr: ${tail.slice(0, 200)})`;
      if (this.junkLines) msg += ` (${this.junkLines} non-JSON line${this.junkLines > 1 ? "s" : ""} on stdout)`;
      this.#fail("failed", msg);
      void this.#shutdown().then(() => this.#reap());
      return;
    }
    try {
      const caps = client.getServerCapabilities() ?? {};
      this.serverInfo = client.getServerVersion();
      this.instructions = client.getInstructions();
      this.hasResources = !!caps.resources;
      if (caps.tools) this.tools = await this.#listTools();
      if (caps.prompts) {
        try {
          this.prompts = await this.#listPrompts();
        } catch (err) {
          this.#logLine(`prompts/list failed: ${oneLine(err)}`);
        }
      }
      await this.#watchLists(caps);
    } catch (err) {
      this.#fail("failed", `listing tools failed: ${oneLine(err)}`);
      void this.#shutdown();
      return;
    }
    if (this.state !== "starting") return; // closed while listing
    this.state = "connected";
    this.#logLine(`connected: ${this.tools.length} tools, ${this.prompts.length} prompts${this.hasResources ? ", resources" : ""}`);
    this.#opts.onChange?.(this);
  }

  async #makeTransport(): Promise<Transport> {
    const config = this.entry.config!;
    if (config.type === "stdio") {
      const { StdioClientTransport, getDefaultEnvironment } = await import("@modelcontextprotocol/sdk/client/stdio.js");
      // The SDK passes only a safe subset of the parent environment (STACK.md gotcha 7); the
      // configured env is how secrets reach the server.
      const t = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: { ...getDefaultEnvironment(), ...config.env },
        cwd: this.#opts.cwd,
        stderr: "pipe",
      });
      // The pid, kept past the SDK's own bookkeeping: see #reap.
      const start = t.start.bind(t);
      t.start = async () => {
        await start();
        this.#pid = t.pid ?? undefined;
      };
      const log = this.#openLog();
      log.write(`[${new Date().toISOString()}] --- stderr of ${config.command} ---\n`);
      t.stderr?.on("data", (chunk: Buffer) => {
        const s = chunk.toString("utf8");
        this.#stderrTail = (this.#stderrTail + s).slice(-2000);
        log.write(chunk);
      });
      return t;
    }
    const url = new URL(config.url);
    const authProvider = authProviderFor(this.name, config, this.#opts.env) as never;
    const requestInit: RequestInit = { headers: config.headers };
    if (config.type === "sse") {
      const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
      return new SSEClientTransport(url, { requestInit, authProvider });
    }
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    return new StreamableHTTPClientTransport(url, { requestInit, authProvider });
  }

  #onError(err: Error): void {
    const msg = oneLine(err);
    // The stdio transport reports each stdout line that is not JSON-RPC here and goes on.
    if (err instanceof SyntaxError || err.name === "ZodError" || /is not valid JSON|Unexpected token/i.test(msg)) {
      this.junkLines++;
      this.#logLine(`stdout line that is not JSON-RPC ignored: ${msg}`);
      if (this.junkLines === 1) {
        this.#opts.notify(`mcp server "${this.name}" wrote non-protocol output to stdout (ignored; servers must log to stderr): ${msg.slice(0, 120)}`);
      }
      return;
    }
    this.#logLine(`error: ${msg}`);
  }

  #onClose(): void {
    if (this.#closing) {
      this.state = "closed";
      return;
    }
    if (this.state === "connected") this.#fail("failed", "the server closed the connection (exited?)");
    // During the handshake, connect() rejects and reports.
  }

  async #watchLists(caps: { tools?: { listChanged?: boolean }; prompts?: { listChanged?: boolean } }): Promise<void> {
    const types = await import("@modelcontextprotocol/sdk/types.js");
    const client = this.#client!;
    if (caps.tools?.listChanged) {
      client.setNotificationHandler(types.ToolListChangedNotificationSchema, async () => {
        try {
          this.tools = await this.#listTools();
          this.#opts.onChange?.(this);
        } catch (err) {
          this.#logLine(`tools/list after list_changed failed: ${oneLine(err)}`);
        }
      });
    }
    if (caps.prompts?.listChanged) {
      client.setNotificationHandler(types.PromptListChangedNotificationSchema, async () => {
        try {
          this.prompts = await this.#listPrompts();
          this.#opts.onChange?.(this);
        } catch (err) {
          this.#logLine(`prompts/list after list_changed failed: ${oneLine(err)}`);
        }
      });
    }
  }

  async #listTools(): Promise<Tool[]> {
    const out: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await this.#client!.listTools(cursor ? { cursor } : undefined, { timeout: this.#opts.timeouts.requestMs });
      out.push(...r.tools);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  async #listPrompts(): Promise<Prompt[]> {
    const out: Prompt[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await this.#client!.listPrompts(cursor ? { cursor } : undefined, { timeout: this.#opts.timeouts.requestMs });
      out.push(...r.prompts);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  #live(): Client {
    if (this.state !== "connected" || !this.#client) {
      const why = this.state === "starting" ? "is still starting" : `is not connected (${this.state}${this.error ? `: ${this.error}` : ""})`;
      throw new ServerUnavailableError(`mcp server "${this.name}" ${why}; run /mcp for status`);
    }
    return this.#client;
  }

  /** Wraps a request so a server dying mid-request reads as such. */
  async #request<T>(what: string, fn: (c: Client) => Promise<T>): Promise<T> {
    const client = this.#live();
    try {
      return await fn(client);
    } catch (err) {
      if (/connection closed/i.test(oneLine(err)) || this.state !== "connected") {
        throw new ServerUnavailableError(`mcp server "${this.name}" exited during ${what}`);
      }
      throw err;
    }
  }

  /**
   * Calls a tool. Resolves to the server's result (which may itself have `isError`).
   * @throws ServerUnavailableError when the server is not connected or dies during the call;
   *   the SDK's `McpError` for protocol errors and timeouts; the abort reason when `signal` fires.
   */
  callTool(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    return this.#request(`the call of ${name}`, async (c) => {
      const r = await c.callTool({ name, arguments: args }, undefined, {
        signal,
        timeout: this.#opts.timeouts.callMs,
        resetTimeoutOnProgress: true,
        onprogress: () => {},
      });
      return r as CallToolResult;
    });
  }

  /** Every resource the server lists (all pages). @throws as {@link callTool}. */
  listResources(signal?: AbortSignal): Promise<Resource[]> {
    return this.#request("resources/list", async (c) => {
      const out: Resource[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const r = await c.listResources(cursor ? { cursor } : undefined, { signal, timeout: this.#opts.timeouts.requestMs });
        out.push(...r.resources);
        cursor = r.nextCursor;
        if (!cursor) break;
      }
      return out;
    });
  }

  /** Reads one resource. @throws as {@link callTool}. */
  readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    return this.#request(`the read of ${uri}`, (c) => c.readResource({ uri }, { signal, timeout: this.#opts.timeouts.requestMs }) as Promise<ReadResourceResult>);
  }

  /** Expands one prompt. @throws as {@link callTool}. */
  getPrompt(name: string, args: Record<string, string>): Promise<GetPromptResult> {
    return this.#request(`prompt ${name}`, (c) => c.getPrompt({ name, arguments: args }, { timeout: this.#opts.timeouts.requestMs }) as Promise<GetPromptResult>);
  }

  async #shutdown(): Promise<void> {
    this.#closing = true;
    const client = this.#client;
    this.#client = undefined;
    try {
      if (client) await client.close();
      else await this.#transport?.close();
    } catch {
      // the process may already be gone
    }
  }

  /**
   * Ends a stdio server that is still running after its transport closed. When the handshake
   * fails, the SDK's Client closes the transport itself without waiting (it ends stdin, and only
   * 2 s later sends SIGTERM), so a server that ignores stdin would outlive Larik. A server that
   * failed its handshake gets SIGTERM at once, then SIGKILL after 2 s.
   */
  async #reap(): Promise<void> {
    const pid = this.#pid;
    this.#pid = undefined;
    if (pid === undefined) return;
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (const [signal, waitMs] of [["SIGTERM", 2000], ["SIGKILL", 500]] as const) {
      if (!alive()) return;
      process.kill(pid, signal);
      for (let t = 0; t < waitMs && alive(); t += 50) await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Closes the connection (stopping a stdio server). Safe to call in any state. */
  async close(): Promise<void> {
    const wasFailed = this.state === "failed" || this.state === "needs-sign-in";
    await this.#shutdown();
    await this.#reap();
    if (!wasFailed) this.state = "closed";
    await new Promise<void>((resolve) => {
      if (!this.#log) return resolve();
      this.#log.end(resolve);
      this.#log = undefined;
    });
  }
}

/** One line of an error, whatever was thrown. */
export function oneLine(err: unknown): string {
  const s = err instanceof Error ? err.message : String(err);
  return s.replace(/\s+/g, " ").trim();
}
