/**
 * Deferred MCP tools (LARIK-REFERENCE §15 "Deferred tools", §5): when the MCP tool set is big
 * (over 30 tools or about 6,000 tokens of definitions, or `tool_search: "on"`; `"off"` never
 * defers) the MCP definitions are withheld and two tools stand in: `tool_search`, whose
 * description carries the index and which returns full definitions, and `call_tool`, which
 * runs one of them.
 *
 * Permissions: the kernel checks the tool that was called, so `call_tool` has the strictest
 * kind of its targets (`other`, which asks). A late `preToolUse` tap
 * ({@link callToolDecision}) runs the kernel's checker on the *target*: a deny for the target
 * denies, an allow (read-only target, `mcp__server__tool` allow rule, yolo) allows, otherwise
 * `call_tool` asks as itself. What the kernel cannot do from a plugin: PreToolUse shell hooks,
 * traces and permission prompts still see `call_tool` rather than the target, and "always
 * allow" saves the rule `call_tool` (which then covers every deferred tool).
 */
import * as z from "zod/mini";
import { estimateTokens, invalidArguments, toolSpec, validateToolInput, type AnyTool, type PreToolDecision, type ToolCallInfo } from "../../kernel/index.js";
import type { McpTool } from "./adapter.js";

/** More MCP tools than this defers them (auto mode). */
const DEFER_TOOL_COUNT = 30;
/** More estimated tokens of MCP definitions than this defers them (auto mode). */
const DEFER_TOKENS = 6000;
/** Index size in bytes past which the index lists names grouped by server, then counts only. */
export const INDEX_BYTES = 8 * 1024;
/** Characters of each description in the index. */
const INDEX_DESCRIPTION_CHARS = 90;

/** Whether to withhold the MCP definitions. */
export function shouldDefer(setting: "auto" | "on" | "off", tools: McpTool[]): boolean {
  if (!tools.length || setting === "off") return false;
  if (setting === "on") return true;
  // the definitions as the request would carry them, counted as compaction counts them
  return tools.length > DEFER_TOOL_COUNT || estimateTokens(tools.map((t) => JSON.stringify(toolSpec(t.tool))).join("")) > DEFER_TOKENS;
}

function oneLineClip(s: string, n: number): string {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

/**
 * The index text: `name: description` (90 chars) per tool; past {@link INDEX_BYTES}, names
 * grouped by server; past that again, tool counts per server.
 */
export function searchIndex(tools: McpTool[]): string {
  const full = tools.map((t) => `${t.tool.name}: ${oneLineClip(t.tool.description, INDEX_DESCRIPTION_CHARS)}`).join("\n");
  if (Buffer.byteLength(full) <= INDEX_BYTES) return full;
  const byServer = new Map<string, string[]>();
  for (const t of tools) byServer.set(t.server, [...(byServer.get(t.server) ?? []), t.tool.name]);
  const grouped = [...byServer].map(([s, names]) => `${s}: ${names.join(", ")}`).join("\n");
  if (Buffer.byteLength(grouped) <= INDEX_BYTES) return grouped;
  return [...byServer].map(([s, names]) => `${s}: ${names.length} tools (search to see them)`).join("\n");
}

/**
 * Ranks tools for a query: each query word found in the name scores 3, in the description 1;
 * an exact name scores highest. Ties keep index order. Returns at most `max`.
 */
export function rankTools(query: string, tools: McpTool[], max: number): McpTool[] {
  const q = query.trim().toLowerCase();
  const words = q.split(/[\s,]+/).filter(Boolean);
  const scored = tools.map((t, i) => {
    const name = t.tool.name.toLowerCase();
    const desc = t.tool.description.toLowerCase();
    let score = name === q ? 1000 : 0;
    for (const w of words) {
      if (name.includes(w)) score += 3;
      if (desc.includes(w)) score += 1;
    }
    return { t, i, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, max)
    .map((s) => s.t);
}

/** Parses `call_tool`'s `arguments`: an object, a JSON string of one, or absent (`{}`). */
export function parseArguments(v: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  if (v === undefined || v === null || v === "") return { ok: true, value: {} };
  let value = v;
  if (typeof v === "string") {
    try {
      value = JSON.parse(v);
    } catch {
      return { ok: false, message: "arguments is a string that is not JSON: send an object" };
    }
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return { ok: false, message: "arguments must be an object" };
  return { ok: true, value: value as Record<string, unknown> };
}

/** The `tool_search` and `call_tool` tools over `tools`, and the tap that checks targets. */
export function deferredTools(tools: McpTool[]): { tools: AnyTool[]; callTool: AnyTool; resolve(input: unknown): { target: AnyTool; args: Record<string, unknown> } | undefined } {
  const byName = new Map(tools.map((t) => [t.tool.name, t.tool]));
  const search: AnyTool = {
    name: "tool_search",
    description:
      "Search the MCP tools whose definitions are not loaded, by keywords or exact name; returns their full definitions. Run one with call_tool. Index (name: description):\n" +
      searchIndex(tools),
    input: z.object({
      query: z.string().check(z.describe("Keywords or an exact tool name")),
      max_results: z.optional(z.int().check(z.gte(1), z.lte(20))).check(z.describe("At most this many tools (default 5)")),
    }),
    kind: "read",
    async run(input) {
      const { query, max_results } = input as { query: string; max_results?: number };
      const hits = rankTools(query, tools, max_results ?? 5);
      if (!hits.length) return { content: `no deferred tool matches "${query}": try other words, or an exact name from the index in tool_search's description` };
      const defs = hits.map((h) => JSON.stringify(toolSpec(h.tool)));
      return { content: `${defs.join("\n")}\nRun one with call_tool {"tool": "<name>", "arguments": {…}}.` };
    },
  };
  const resolve = (input: unknown) => {
    const i = input as { tool?: unknown; arguments?: unknown };
    const target = typeof i?.tool === "string" ? byName.get(i.tool) : undefined;
    const args = parseArguments(i?.arguments);
    return target && args.ok ? { target, args: args.value } : undefined;
  };
  const callTool: AnyTool = {
    name: "call_tool",
    description: "Run a deferred MCP tool found with tool_search. `arguments` must match that tool's input schema.",
    input: z
      .object({
        tool: z.string().check(z.describe("The tool's exact name")),
        arguments: z.unknown().check(z.meta({ type: "object", description: "The tool's arguments" })),
      })
      .check(
        z.superRefine((v, ctx) => {
          const target = byName.get(v.tool);
          if (!target) {
            ctx.addIssue({ code: "custom", path: ["tool"], message: `unknown deferred tool "${v.tool}": find tools with tool_search` });
            return;
          }
          const args = parseArguments(v.arguments);
          if (!args.ok) {
            ctx.addIssue({ code: "custom", path: ["arguments"], message: args.message });
            return;
          }
          const r = validateToolInput(target.input, args.value);
          if (!r.success) ctx.addIssue({ code: "custom", path: ["arguments"], message: invalidArguments(target.name, r.error, args.value) });
        }),
      ),
    kind: "other",
    async run(input, ctx) {
      const r = resolve(input);
      if (!r) return { content: "call_tool: unknown tool or bad arguments", is_error: true };
      return r.target.run(r.args, ctx);
    },
  };
  return { tools: [search, callTool], callTool, resolve };
}

/**
 * The `preToolUse` decision for a `call_tool` call: the kernel's checker applied to the target.
 * Returns undefined to let `call_tool` be checked as itself (it then asks).
 */
export function callToolDecision(info: ToolCallInfo, resolved: { target: AnyTool; args: Record<string, unknown> }): PreToolDecision | undefined {
  const { target, args } = resolved;
  const d = info.agent.checker.decide({
    tool: target.name,
    kind: target.kind,
    input: args,
    subject: target.subject?.(args),
    writePaths: target.writePaths?.(args),
  });
  if (d.decision === "deny") return { decision: "deny", reason: `${target.name}: ${d.reason}` };
  if (d.decision === "allow") return { decision: "allow", reason: `${target.name}: ${d.reason}` };
  return undefined;
}
