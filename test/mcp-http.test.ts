/**
 * Remote MCP transports on loopback: streamable HTTP (`type: "http"`) and HTTP+SSE
 * (`type: "sse"`) against servers built with the SDK's own server classes, `${VAR}` in urls and
 * headers, and a server that wants credentials (reported as "needs sign-in", no browser).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import type { Host } from "../kernel/index.js";
import { ScriptedProvider, call, text } from "./fakes/scripted-provider.js";
import { makeProject, mcpHost, runTurn, toolResults, type Project } from "./fixtures/mcp/harness.js";

/** Headers of every request the server saw. */
const seen: Record<string, string | string[] | undefined>[] = [];

function mcpServer(transport: string): McpServer {
  const s = new McpServer({ name: "loopback", version: "1.0.0" });
  s.registerTool(
    "whoami",
    { description: "Say which transport and token reached the server", inputSchema: { suffix: z.string().optional() }, annotations: { readOnlyHint: true, openWorldHint: false } },
    async ({ suffix }, extra) => {
      const token = String(extra.requestInfo?.headers["x-token"] ?? "none");
      return { content: [{ type: "text", text: `${transport}:${token}${suffix ?? ""}` }] };
    },
  );
  return s;
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const t = Buffer.concat(chunks).toString("utf8");
  return t ? JSON.parse(t) : undefined;
}

const sse = new Map<string, SSEServerTransport>();
async function handle(req: IncomingMessage, res: ServerResponse) {
  seen.push({ ...req.headers });
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname === "/locked/mcp") {
    res.writeHead(401, { "www-authenticate": 'Bearer realm="test"' }).end("unauthorized");
    return;
  }
  if (url.pathname === "/mcp") {
    // Stateless streamable HTTP: a fresh server and transport per request.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = mcpServer("http");
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.method === "POST" ? await body(req) : undefined);
    return;
  }
  if (url.pathname === "/sse" && req.method === "GET") {
    const transport = new SSEServerTransport("/messages", res);
    sse.set(transport.sessionId, transport);
    res.on("close", () => sse.delete(transport.sessionId));
    await mcpServer("sse").connect(transport);
    return;
  }
  if (url.pathname === "/messages" && req.method === "POST") {
    const t = sse.get(url.searchParams.get("sessionId") ?? "");
    if (!t) return void res.writeHead(404).end();
    await t.handlePostMessage(req, res, await body(req));
    return;
  }
  res.writeHead(404).end();
}

let http: Server;
let port = 0;
beforeAll(async () => {
  http = createServer((req, res) => void handle(req, res).catch(() => res.writeHead(500).end()));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  port = (http.address() as AddressInfo).port;
});
afterAll(async () => {
  http.closeAllConnections();
  await new Promise((r) => http.close(r));
});

let p: Project | undefined;
let host: Host | undefined;
afterEach(async () => {
  await host?.dispose();
  p?.cleanup();
  host = undefined;
  p = undefined;
});

describe("remote transports", () => {
  it("streamable HTTP and SSE servers with ${VAR} in url and headers", async () => {
    p = makeProject({ MCP_PORT: String(port), MCP_TOKEN: "tok-123" });
    host = await mcpHost(p, {
      mcp_servers: {
        web: { type: "http", url: "http://127.0.0.1:${MCP_PORT}/mcp", headers: { "X-Token": "${MCP_TOKEN}" } },
        old: { type: "sse", url: "http://127.0.0.1:${MCP_PORT}/sse", headers: { "X-Token": "sse-${MISSING:-default}" } },
      },
    });
    const provider = new ScriptedProvider([
      { blocks: [call("c1", "mcp__web__whoami", { suffix: "!" }), call("c2", "mcp__old__whoami", {})] },
      { blocks: [text("ok")] },
    ]);
    const agent = await host.openAgent({ provider, mode: "default" });
    const events = await runTurn(agent, "who");
    expect(events.some((e) => e.type === "permission_request")).toBe(false); // both read-only
    expect(toolResults(provider, 1).map((r) => r.content)).toEqual(["http:tok-123!", "sse:sse-default"]);
    expect(seen.some((h) => h["x-token"] === "tok-123")).toBe(true);
  });

  it("a server answering 401 is reported as needing sign-in, without a browser", async () => {
    p = makeProject();
    host = await mcpHost(p, { mcp_servers: { locked: { type: "http", url: `http://127.0.0.1:${port}/locked/mcp` } } });
    const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
    const agent = await host.openAgent({ provider, mode: "yolo" });
    await runTurn(agent, "hi");
    expect(provider.requests[0]!.tools.some((t) => t.name.startsWith("mcp__locked"))).toBe(false);
    expect(host.notices.join("\n")).toMatch(/mcp server "locked" needs sign-in: .*run \/mcp login locked/);
    const lines: string[] = [];
    await expect(host.commands.get("mcp")!.run({ host, agent, args: "login locked", print: (t) => lines.push(t) })).rejects.toThrow(/not available yet/);
  });
});
