/** Unit tests of the mcp plugin's pure parts: config, names, schemas, results, search, prompt args. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_IMAGE_BYTES, toolSpec, type AnyTool } from "../../kernel/index.js";
import { collectServers, configHash, expandVars, parseEntry, toolSearchSetting } from "./config.js";
import { mcpName, NameAllocator, TOOL_NAME_RE } from "./naming.js";
import { buildValidator, normalizeSchema, toolInput } from "./schema.js";
import { base64Bytes, convertToolResult } from "./results.js";
import { parseArguments, rankTools, searchIndex, shouldDefer, INDEX_BYTES } from "./deferred.js";
import { splitPromptArgs } from "./prompts.js";
import { isReadOnly, type McpTool } from "./adapter.js";

describe("config", () => {
  const env = { HOME: "/home/u", EMPTY: "", TOKEN: "t" };
  it("expands ${VAR} and ${VAR:-default}", () => {
    expect(expandVars("${HOME}/x", env)).toBe("/home/u/x");
    expect(expandVars("${NOPE:-dflt}", env)).toBe("dflt");
    expect(expandVars("${EMPTY:-dflt}", env)).toBe("dflt");
    expect(expandVars("${EMPTY}", env)).toBe("");
    expect(expandVars("$HOME and $${x", env)).toBe("$HOME and $${x");
    expect(() => expandVars("${NOPE}", env)).toThrow("environment variable NOPE is not set");
  });
  it("parses the three transports and says what is wrong", () => {
    expect(parseEntry({ command: "srv", args: ["--t", "${TOKEN}"] }, env)).toEqual({ type: "stdio", command: "srv", args: ["--t", "t"], env: {} });
    expect(parseEntry({ url: "https://x.test/mcp" }, env)).toMatchObject({ type: "http", url: "https://x.test/mcp", headers: {} });
    expect(parseEntry({ type: "sse", url: "http://h/sse", headers: { A: "${TOKEN}" } }, env)).toMatchObject({ type: "sse", headers: { A: "t" } });
    expect(() => parseEntry({ args: [] }, env)).toThrow('a stdio server needs "command"');
    expect(() => parseEntry({ type: "http" }, env)).toThrow('a http server needs "url"');
    expect(() => parseEntry({ type: "http", url: "ftp://h" }, env)).toThrow("is not an absolute http(s) URL");
    expect(() => parseEntry({ command: "x", args: "nope" }, env)).toThrow(/^args: /);
    expect(() => parseEntry({ command: "x", env: { K: "${NOPE}" } }, env)).toThrow("environment variable NOPE is not set (used in env.K)");
  });
  it("hashes configs independent of key order and sensitive to every value", () => {
    expect(configHash({ a: 1, b: { c: 2, d: 3 } })).toBe(configHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(configHash({ command: "x", oauth: { scopes: "a" } })).not.toBe(configHash({ command: "x", oauth: { scopes: "b" } }));
    expect(configHash({ command: "x" })).toMatch(/^[0-9a-f]{64}$/);
  });
  it("collects personal and shared servers, reading .mcp.json when the loader gave none", () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-cfg-"));
    try {
      writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { b: { command: "b" }, a: { command: "shared-a" } } }));
      const r = collectServers({ settings: { mcp_servers: { a: { command: "a" } }, mcpServers: { "bad name!": { command: "x" } } }, projectRoot: dir, env });
      expect(r.servers.map((s) => [s.name, s.source])).toEqual([
        ["a", "personal"],
        ["b", "shared"],
        ["bad name!", "personal"],
      ]);
      expect(r.servers[0]!.config).toMatchObject({ command: "a" });
      expect(r.servers[2]!.error).toMatch(/bad server name/);
      writeFileSync(join(dir, ".mcp.json"), "{ nope");
      expect(collectServers({ settings: {}, projectRoot: dir, env }).warnings[0]).toMatch(/^\.mcp\.json ignored: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("reads tool_search", () => {
    expect(toolSearchSetting({})).toBe("auto");
    expect(toolSearchSetting({ tool_search: "on" })).toBe("on");
    expect(toolSearchSetting({ tool_search: false })).toBe("off");
  });
});

describe("naming", () => {
  it("sanitizes to what every provider accepts", () => {
    expect(mcpName("my.server", "read file/v2")).toBe("mcp__my_server__read_file_v2");
    const long = mcpName("server", "a".repeat(100));
    expect(long).toMatch(TOOL_NAME_RE);
    expect(long).toHaveLength(64);
    expect(mcpName("server", `${"a".repeat(100)}b`)).not.toBe(long);
  });
  it("de-duplicates within 64 chars", () => {
    const alloc = new NameAllocator(["read"]);
    expect(alloc.take("read")).toBe("read_2");
    expect(alloc.take("read")).toBe("read_3");
    const base = "x".repeat(64);
    expect(alloc.take(base)).toBe(base);
    const second = alloc.take(base);
    expect(second).toHaveLength(64);
    expect(second.endsWith("_2")).toBe(true);
  });
});

describe("schema normalization", () => {
  it("inlines refs, cuts recursion, collapses nullable unions and fixes the root", () => {
    const s = normalizeSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      properties: {
        node: { $ref: "#/definitions/Node", description: "root node" },
        maybe: { oneOf: [{ type: "null" }, { $ref: "#/definitions/Leaf" }] },
        either: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
      },
      required: ["node", "missing"],
      definitions: {
        Node: { type: "object", properties: { next: { $ref: "#/definitions/Node" } } },
        Leaf: { type: "string" },
      },
    });
    expect(JSON.stringify(s)).not.toMatch(/\$ref|\$defs|definitions|\$schema|"null"/);
    expect(s.type).toBe("object");
    expect(s.required).toEqual(["node"]);
    const props = s.properties as Record<string, Record<string, unknown>>;
    expect(props.node!.description).toBe("root node");
    expect(props.maybe).toEqual({ type: "string" });
    expect(props.either).toEqual({ anyOf: [{ type: "string" }, { type: "number" }] });
    // Recursion is cut after a bounded depth.
    let depth = 0;
    let cur: Record<string, unknown> | undefined = props.node;
    while (cur && (cur.properties as Record<string, unknown> | undefined)?.next) {
      cur = (cur.properties as Record<string, Record<string, unknown>>).next;
      depth++;
    }
    expect(depth).toBeGreaterThan(0);
    expect(depth).toBeLessThan(10);
    expect(normalizeSchema(undefined)).toEqual({ type: "object", properties: {} });
    expect(normalizeSchema({ type: "string" })).toEqual({ type: "object", properties: {} });
  });

  it("advertises exactly the normalized schema and validates with the original", async () => {
    const original = { type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] };
    const v = await buildValidator(original);
    expect(v.kind).toBe("zod");
    const input = toolInput(normalizeSchema(original), v.check);
    const tool = { name: "t", description: "d", input, kind: "read", run: async () => ({ content: "" }) } as AnyTool;
    // derived from `input` (no inputJsonSchema): the metadata must render the schema as is
    expect(toolSpec(tool).input_schema).toEqual({ type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] });
    expect(input.safeParse({ n: 2 })).toEqual({ success: true, data: { n: 2 } });
    const bad = input.safeParse({ n: 0 });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(["n"]);
    expect(input.safeParse("text").success).toBe(false);
  });

  it("falls back to Ajv for schemas zod cannot represent", async () => {
    const v = await buildValidator({ type: "object", properties: { s: { not: { type: "string" } } } });
    expect(v.kind).toBe("ajv");
    expect(v.check({ s: 1 })).toEqual([]);
    expect(v.check({ s: "x" })).toHaveLength(1);
  });
});

describe("results", () => {
  it("measures base64 and limits image size", () => {
    expect(base64Bytes("AAAA")).toBe(3);
    expect(base64Bytes("AA==")).toBe(1);
    const big = "A".repeat(Math.ceil(((MAX_IMAGE_BYTES + 10) * 4) / 3));
    const r = convertToolResult({ content: [{ type: "image", mimeType: "image/png", data: big }] });
    expect(r.images).toBeUndefined();
    expect(r.content).toMatch(/over the 5 MB limit/);
  });
  it("uses structured content only when there is no text, and marks errors", () => {
    expect(convertToolResult({ content: [], structuredContent: { a: 1 } }).content).toBe('{\n  "a": 1\n}');
    expect(convertToolResult({ content: [{ type: "text", text: "t" }], structuredContent: { a: 1 } }).content).toBe("t");
    expect(convertToolResult({ content: [], isError: true })).toEqual({ content: "the tool failed without a message", is_error: true });
    expect(convertToolResult({ content: [{ type: "resource_link", uri: "file:///x", name: "x" }] }).content).toBe("[resource link: x file:///x]");
    expect(convertToolResult({ content: [{ type: "text", text: "z".repeat(100_000) }] }).content.length).toBeLessThan(31_000);
  });
});

describe("deferred tools", () => {
  const mk = (server: string, name: string, description: string): McpTool => ({
    server,
    remoteName: name,
    validator: "zod",
    tool: {
      name: `mcp__${server}__${name}`,
      description,
      input: toolInput({ type: "object", properties: {} }, () => []),
      inputJsonSchema: { type: "object", properties: {} },
      kind: "read",
      run: async () => ({ content: "" }),
    } as AnyTool,
  });
  it("ranks name hits over description hits, exact names first", () => {
    const tools = [mk("a", "weather", "Forecast for a city"), mk("a", "city_info", "Facts about a place"), mk("b", "forecast", "Weather forecast")];
    expect(rankTools("weather", tools, 5).map((t) => t.remoteName)).toEqual(["weather", "forecast"]);
    expect(rankTools("mcp__a__city_info", tools, 5)[0]!.remoteName).toBe("city_info");
    expect(rankTools("nothing", tools, 5)).toEqual([]);
  });
  it("shrinks the index past 8 KB: grouped names, then counts", () => {
    const many = Array.from({ length: 120 }, (_, i) => mk(`s${i % 3}`, `tool_${i}`, "d".repeat(200)));
    const grouped = searchIndex(many);
    expect(Buffer.byteLength(grouped)).toBeLessThanOrEqual(INDEX_BYTES);
    expect(grouped).toMatch(/^s0: mcp__s0__tool_0, mcp__s0__tool_3/);
    const huge = Array.from({ length: 600 }, (_, i) => mk(`s${i % 2}`, `a_rather_long_tool_name_${i}`, "d"));
    expect(searchIndex(huge)).toBe("s0: 300 tools (search to see them)\ns1: 300 tools (search to see them)");
    expect(searchIndex([mk("a", "x", `${"w ".repeat(100)}`)])).toMatch(/^mcp__a__x: (w ){44}w…$/);
  });
  it("defers past 30 tools unless off", () => {
    const tools = Array.from({ length: 31 }, (_, i) => mk("s", `t${i}`, "d"));
    expect(shouldDefer("auto", tools)).toBe(true);
    expect(shouldDefer("auto", tools.slice(0, 30))).toBe(false);
    expect(shouldDefer("off", tools)).toBe(false);
    expect(shouldDefer("on", tools.slice(0, 1))).toBe(true);
    expect(shouldDefer("on", [])).toBe(false);
  });
  it("accepts arguments as an object or a JSON string", () => {
    expect(parseArguments('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseArguments(undefined)).toEqual({ ok: true, value: {} });
    expect(parseArguments("[1]")).toEqual({ ok: false, message: "arguments must be an object" });
    expect(parseArguments("{nope")).toMatchObject({ ok: false });
  });
});

describe("prompt arguments and read-only hints", () => {
  const p = { name: "p", arguments: [{ name: "a", required: true }, { name: "b" }, { name: "c" }] };
  it("splits on spaces in order, the last taking the rest", () => {
    expect(splitPromptArgs(p, "cmd", "one two three four  five")).toEqual({ a: "one", b: "two", c: "three four  five" });
    expect(splitPromptArgs(p, "cmd", " one ")).toEqual({ a: "one" });
    expect(() => splitPromptArgs(p, "cmd", "")).toThrow("/cmd needs <a>: usage /cmd <a> [b] [c]");
  });
  it("needs both hints for read-only", () => {
    expect(isReadOnly({ annotations: { readOnlyHint: true, openWorldHint: false } })).toBe(true);
    expect(isReadOnly({ annotations: { readOnlyHint: true } })).toBe(false);
    expect(isReadOnly({ annotations: { openWorldHint: false } })).toBe(false);
    expect(isReadOnly({})).toBe(false);
  });
});
