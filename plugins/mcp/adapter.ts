/**
 * An MCP tool as a kernel tool (LARIK-REFERENCE §15 "Tool naming"): named `mcp__<server>__<tool>`,
 * advertised with the normalized schema, validated against the server's schema by the kernel
 * before the permission check, `read` only when the server says `readOnlyHint: true` and
 * `openWorldHint: false` (the MCP spec's defaults are the unsafe ones: not read-only, open
 * world), otherwise `other`, which asks.
 */
import { errorText, type AnyTool, type ToolDefinition } from "../../kernel/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { McpConnection } from "./connection.js";
import { buildValidator, normalizeSchema, toolInput, type ValidatorKind } from "./schema.js";
import { convertToolResult } from "./results.js";

/** Longest tool description sent to the model, in characters. */
const MAX_DESCRIPTION = 2048;

/** A kernel tool built from an MCP tool, with where it came from. */
export interface McpTool {
  tool: AnyTool;
  server: string;
  /** The tool's name on its server. */
  remoteName: string;
  validator: ValidatorKind;
}

/** True when MCP annotations let the tool run without asking (both hints must be explicit). */
export function isReadOnly(t: Pick<Tool, "annotations">): boolean {
  return t.annotations?.readOnlyHint === true && t.annotations?.openWorldHint === false;
}

/** The description the model sees: the server's, or its title, cut to {@link MAX_DESCRIPTION}. */
function describe(t: Tool, server: string): string {
  const text = (t.description ?? t.annotations?.title ?? t.title ?? "").trim() || `Tool ${t.name} of MCP server ${server}.`;
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text;
}

/** Builds the kernel tool `name` that calls `t` on `conn`. */
export async function adaptTool(conn: McpConnection, t: Tool, name: string): Promise<McpTool> {
  const advertised = normalizeSchema(t.inputSchema);
  const validator = await buildValidator(t.inputSchema);
  const def: ToolDefinition = {
    name,
    description: describe(t, conn.name),
    input: toolInput(advertised, validator.check),
    // What `toolSpec` would derive from `input` anyway; given, it needs no JSON Schema generator.
    inputJsonSchema: advertised,
    kind: isReadOnly(t) ? "read" : "other",
    async run(input, ctx) {
      try {
        const result = await conn.callTool(t.name, input as Record<string, unknown>, ctx.signal);
        return convertToolResult(result);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        if (conn.state === "failed") ctx.notice(`mcp server "${conn.name}" is down: ${conn.error ?? "it exited"}`);
        return { content: `${name} failed: ${errorText(err)}`, is_error: true };
      }
    },
  };
  return { tool: def, server: conn.name, remoteName: t.name, validator: validator.kind };
}
