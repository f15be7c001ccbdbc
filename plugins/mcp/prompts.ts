/**
 * MCP prompts as slash commands (LARIK-REFERENCE §15 "Prompts"): each prompt of a connected
 * server is `/mcp__<server>__<prompt>` with the argument hint `<required> [optional]`. Arguments
 * are split on spaces in the prompt's order, the last one taking the rest of the line. The
 * expanded messages become the user's prompt; a failure throws, so the turn ends before any
 * model request.
 */
import type { Command } from "../../kernel/index.js";
import type { Prompt, PromptMessage } from "@modelcontextprotocol/sdk/types.js";
import type { McpConnection } from "./connection.js";
import { ContentCollector } from "./results.js";

/** `<req> [opt]` for the palette. */
function argHint(p: Prompt): string {
  return (p.arguments ?? []).map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ");
}

/**
 * Maps the text after the command to the prompt's arguments: split on whitespace in order, the
 * last argument takes the rest (inner spaces kept).
 * @throws Error naming the missing required arguments and the usage.
 */
export function splitPromptArgs(p: Prompt, command: string, text: string): Record<string, string> {
  const defs = p.arguments ?? [];
  const out: Record<string, string> = {};
  let rest = text.trim();
  for (let i = 0; i < defs.length && rest; i++) {
    if (i === defs.length - 1) {
      out[defs[i]!.name] = rest;
      rest = "";
      break;
    }
    const m = /^(\S+)\s*([\s\S]*)$/.exec(rest)!;
    out[defs[i]!.name] = m[1]!;
    rest = m[2]!;
  }
  const missing = defs.filter((d) => d.required && !(d.name in out)).map((d) => d.name);
  if (missing.length) throw new Error(`/${command} needs ${missing.map((m) => `<${m}>`).join(" ")}: usage /${command} ${argHint(p)}`);
  return out;
}

/** The expanded messages as one prompt text (assistant turns are labelled, media described). */
function promptText(messages: PromptMessage[]): string {
  const col = new ContentCollector();
  for (const m of messages) {
    const before = col.parts.length;
    col.add(m.content as unknown as Record<string, unknown>);
    if (m.role === "assistant") for (let i = before; i < col.parts.length; i++) col.parts[i] = `[assistant] ${col.parts[i]}`;
  }
  for (const img of col.images) col.parts.push(`[an image ${img.media_type} in the prompt was left out]`);
  return col.parts.join("\n\n");
}

/** The slash command `name` that expands prompt `p` of `conn`. */
export function promptCommand(conn: McpConnection, p: Prompt, name: string): Command {
  const hint = argHint(p);
  return {
    name,
    description: (p.description ?? p.title ?? `Prompt ${p.name} of MCP server ${conn.name}`).split("\n")[0]!.slice(0, 200),
    args: hint || undefined,
    section: "MCP prompts",
    async run(ctx) {
      const args = splitPromptArgs(p, name, ctx.args);
      const r = await conn.getPrompt(p.name, args);
      const text = promptText(r.messages);
      if (!text.trim()) throw new Error(`/${name}: the server returned an empty prompt`);
      return { prompt: text };
    },
  };
}
