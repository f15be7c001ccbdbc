/**
 * `/export [file]` (LARIK-REFERENCE §7): the session as Markdown — prompts, replies, tool calls
 * and their results capped — with no thinking and no attachment contents (only where they came
 * from). The default file is `larik-<session>.md` in the working directory, and an existing file
 * is never overwritten (the write uses O_EXCL).
 */
import { writeFile } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { isPrompt, localMinute, typedPrompt, type Block, type Command, type SessionEntry, type ToolResultBlock } from "../../kernel/index.js";
import { COMMAND_META } from "./meta.js";
import { kTokens, oneLine, promptText } from "./format.js";

/** Longest tool result kept in an export, in characters; the rest is counted, not copied. */
const RESULT_CAP_CHARS = 2000;
/** Most lines of a tool result kept in an export. */
const RESULT_CAP_LINES = 40;

/** A code fence longer than any backtick run in `text`, so content cannot close it. */
function fence(text: string, lang = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const f = "`".repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}

/** `text` cut to the export caps, with a note of what was left out. */
function capResult(text: string): string {
  let out = text;
  const lines = out.split("\n");
  if (lines.length > RESULT_CAP_LINES) out = lines.slice(0, RESULT_CAP_LINES).join("\n");
  if (out.length > RESULT_CAP_CHARS) out = out.slice(0, RESULT_CAP_CHARS);
  const left = text.length - out.length;
  return left > 0 ? `${out}\n… [${left} more characters not exported]` : out;
}

function attachmentLine(b: Block): string | undefined {
  if (b.type === "text" && b.attachment) return `_attached: ${b.attachment}_`;
  if (b.type === "image") return `_attached image${b.attachment ? `: ${b.attachment}` : ""}_`;
  return undefined;
}

function toolCall(b: Extract<Block, { type: "tool_use" }>, result: ToolResultBlock | undefined): string {
  const parts = [`**Tool call: \`${b.name}\`**`, fence(b.raw_input ?? JSON.stringify(b.input ?? {}, null, 2), "json")];
  if (!result) parts.push("_no result recorded_");
  else {
    const images = result.images?.length ? ` · ${result.images.length} image${result.images.length === 1 ? "" : "s"} not exported` : "";
    parts.push(`${result.is_error ? "**Result (error)**" : "**Result**"}${images}`, fence(capResult(result.content)));
  }
  return parts.join("\n\n");
}

/**
 * Renders a session's entries as Markdown (what `/export` writes). A prompt a slash command made
 * shows what was typed (`/review main..HEAD`, kernel `typedPrompt`) and, folded in a `<details>`
 * block, the whole prompt the model got from it.
 */
function sessionMarkdown(entries: readonly SessionEntry[], opts: { id: string; title?: string; exportedAt?: number }): string {
  const meta = entries.find((e) => e.type === "meta")?.meta;
  const results = new Map<string, ToolResultBlock>();
  for (const e of entries) for (const b of e.message?.blocks ?? []) if (b.type === "tool_result") results.set(b.id, b);
  const out: string[] = [`# ${opts.title || `Larik session ${opts.id}`}`];
  const facts = [`Session \`${opts.id}\``];
  if (meta) facts.push(`model \`${meta.provider}/${meta.model}\``, `directory \`${meta.cwd}\``);
  if (meta?.fork_of) facts.push(`branch of \`${meta.fork_of}\` at message ${meta.fork_at ?? "?"}`);
  facts.push(`exported ${localMinute(opts.exportedAt ?? Date.now())}`);
  out.push(facts.join(" · "));
  let n = 0;
  for (const e of entries) {
    if (e.type === "compaction") {
      if (e.data?.clear === true) out.push("---\n\n_Context cleared (/clear)._");
      else {
        const saved = typeof e.data?.saved_tokens === "number" ? `: ~${kTokens(e.data.saved_tokens)} tokens freed` : "";
        out.push(`---\n\n_Context compacted${saved}._`);
      }
      continue;
    }
    const m = e.type === "message" ? e.message : undefined;
    if (!m) continue;
    if (m.role === "user") {
      if (isPrompt(m)) {
        const typed = typedPrompt(e);
        out.push(`## Prompt ${++n}`);
        if (typed === undefined) out.push(promptText(m));
        else {
          // what was typed, then what the model got from it, folded: a review's diff is long
          const sent = promptText(m);
          const chars = [...sent].length.toLocaleString("en-US");
          out.push(typed.trim(), `<details>\n<summary>The prompt it sent to the model (${chars} characters)</summary>\n\n${fence(sent)}\n\n</details>`);
        }
        const att = m.blocks.map(attachmentLine).filter((l): l is string => !!l);
        if (att.length) out.push(att.join("\n"));
      } else {
        // Hook feedback and task notifications: shown as quoted notes, tool results go with their call.
        const text = m.blocks.filter((b) => b.type === "text" && !b.attachment).map((b) => (b as { text: string }).text).join("\n").trim();
        if (text && !/^<system-note>[\s\S]*<\/system-note>$/.test(text)) out.push(text.split("\n").map((l) => `> ${l}`).join("\n"));
      }
      continue;
    }
    const body: string[] = [];
    for (const b of m.blocks) {
      if (b.type === "text" && b.text.trim()) body.push(b.text.trim());
      else if (b.type === "tool_use") body.push(toolCall(b, results.get(b.id)));
      // thinking and opaque vendor state are never exported
    }
    if (body.length) out.push(`### Reply${m.model ? ` (${m.model})` : ""}`, ...body);
  }
  return out.join("\n\n") + "\n";
}

export const exportCommand: Command = {
  ...COMMAND_META.export,
  async run(ctx) {
    const { agent, host } = ctx;
    const prompts = agent.prompts();
    // an empty session is a state, as "nothing to compact" is (`larik -p /export` exits 0), and
    // a file holding a header alone, named after a session nothing was written to, helps no one
    if (!prompts.length) {
      ctx.print("nothing to export: this session has no prompts yet");
      return;
    }
    // A quoted name may hold spaces: `/export "my notes.md"`.
    const name = ctx.args.trim().replace(/^(["'])(.*)\1$/, "$2") || `larik-${agent.session.id}.md`;
    const file = resolve(host.cwd, name);
    // titled as session lists title it: a command's prompt by the command line typed
    const first = prompts[0];
    const title = first ? oneLine(first.typed ?? promptText(agent.history()[first.index]!), 80) : undefined;
    const md = sessionMarkdown(agent.session.entries(), { id: agent.session.id, title });
    const shown = isAbsolute(name) ? file : relative(host.cwd, file) || name;
    try {
      await writeFile(file, md, { flag: "wx", mode: 0o600 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST") throw new Error(`${shown} already exists: /export never overwrites; give another file name (/export <file>)`);
      if (code === "ENOENT") throw new Error(`cannot write ${shown}: its folder does not exist`);
      throw new Error(`cannot write ${shown}: ${(err as Error).message}`);
    }
    ctx.print(`exported ${prompts.length} prompt${prompts.length === 1 ? "" : "s"} to ${shown}`);
  },
};
