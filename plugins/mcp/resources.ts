/**
 * MCP resources (LARIK-REFERENCE §15 "Resources"): the `list_mcp_resources` and
 * `read_mcp_resource` tools, offered when a connected server advertises the `resources`
 * capability, and `@<server>:<uri>` mentions in a prompt, read and attached as
 * `<mcp-resource>` text (at most 256 KB each). Reading is side-effect free by the MCP spec, so
 * both tools are `read`.
 */
import * as z from "zod/mini";
import { capOutput, defineTool, errorText, type AnyTool } from "../../kernel/index.js";
import type { McpConnection } from "./connection.js";
import { ContentCollector } from "./results.js";

/** Largest text of one `@server:uri` mention attached to a prompt, in bytes. */
const MAX_MENTION_BYTES = 256 * 1024;

function withResources(conns: McpConnection[]): McpConnection[] {
  return conns.filter((c) => c.state === "connected" && c.hasResources);
}

/** The two resource tools over the servers `conns()` returns at call time. */
export function resourceTools(conns: () => McpConnection[]): AnyTool[] {
  const list = defineTool({
    name: "list_mcp_resources",
    description:
      "List the resources (files, documents, data) that connected MCP servers offer. Give `server` to list one server's. Read one with read_mcp_resource.",
    input: z.object({ server: z.optional(z.string()).check(z.describe("Only this MCP server's resources")) }),
    kind: "read",
    async run(input, ctx) {
      const all = withResources(conns());
      const targets = input.server ? all.filter((c) => c.name === input.server) : all;
      if (input.server && !targets.length) {
        return { content: `no connected MCP server "${input.server}" offers resources; servers with resources: ${all.map((c) => c.name).join(", ") || "none"}`, is_error: true };
      }
      const rows: unknown[] = [];
      const errors: string[] = [];
      for (const c of targets) {
        try {
          for (const r of await c.listResources(ctx.signal)) {
            rows.push({ server: c.name, uri: r.uri, name: r.name, mimeType: r.mimeType, description: r.description });
          }
        } catch (err) {
          errors.push(`${c.name}: ${errorText(err)}`);
        }
      }
      const text = [JSON.stringify(rows, null, 1), ...errors.map((e) => `error: ${e}`)].join("\n");
      return { content: capOutput(text).text, is_error: rows.length === 0 && errors.length > 0 ? true : undefined };
    },
  });
  const read = defineTool({
    name: "read_mcp_resource",
    description: "Read one resource of an MCP server by its URI (as listed by list_mcp_resources).",
    input: z.object({
      server: z.string().check(z.describe("The MCP server's name")),
      uri: z.string().check(z.describe("The resource URI")),
    }),
    kind: "read",
    async run(input, ctx) {
      const c = conns().find((x) => x.name === input.server);
      if (!c || !c.hasResources) {
        const names = withResources(conns()).map((x) => x.name);
        return { content: `no MCP server "${input.server}" with resources; servers with resources: ${names.join(", ") || "none"}`, is_error: true };
      }
      try {
        const r = await c.readResource(input.uri, ctx.signal);
        const col = new ContentCollector();
        for (const item of r.contents) col.resource(item as Record<string, unknown>);
        return { content: capOutput(col.parts.join("\n") || "(empty resource)").text, images: col.images.length ? col.images : undefined };
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        return { content: `read_mcp_resource failed: ${errorText(err)}`, is_error: true };
      }
    },
  });
  return [list as unknown as AnyTool, read as unknown as AnyTool];
}

const MENTION_RE = /(?:^|\s)@([A-Za-z0-9_.-]+):(\S+)/g;

/**
 * The `@server:uri` mentions of a prompt that name a server with resources, read and framed as
 * `<mcp-resource server uri>` text. A mention of an unknown server stays prose (returns nothing
 * for it); a failed read returns a one-line note in its place. Images inside resources are
 * described, not attached: prompt context is text.
 */
export async function expandMentions(prompt: string, conns: McpConnection[], signal?: AbortSignal): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const m of prompt.matchAll(MENTION_RE)) {
    const [, server, rawUri] = m as unknown as [string, string, string];
    const uri = rawUri.replace(/[.,;:!?)]+$/, "");
    const c = conns.find((x) => x.name === server && x.hasResources);
    if (!c || seen.has(`${server}:${uri}`)) continue;
    seen.add(`${server}:${uri}`);
    try {
      const r = await c.readResource(uri, signal);
      const col = new ContentCollector();
      for (const item of r.contents) col.resource(item as Record<string, unknown>, false);
      for (const img of col.images.splice(0)) col.parts.push(`[image ${img.media_type} in the resource: read it with read_mcp_resource to see it]`);
      const text = capOutput(col.parts.join("\n"), MAX_MENTION_BYTES).text;
      out.push(`<mcp-resource server="${server}" uri="${uri}">\n${text}\n</mcp-resource>`);
    } catch (err) {
      out.push(`@${server}:${uri} could not be read: ${errorText(err)}`);
    }
  }
  return out;
}
