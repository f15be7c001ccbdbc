/**
 * `raw_output` (LARIK-REFERENCE §3): the exact captured output of an earlier bash call, read from
 * its private sidecar by byte range. Never reruns anything. Binary ranges come back as base64.
 */
import { open } from "node:fs/promises";
import * as z from "zod/mini";
import { defineTool, type ToolContext, type ToolResult, lazySchema } from "../../kernel/index.js";
import { INPUT_SCHEMAS } from "./input-schemas.js";
import { sidecarFile } from "./sidecar.js";

/** Bytes returned at most per call (§3). */
const MAX_RAW_BYTES = 20_000;

const input = lazySchema(() =>
  z.object({
    tool_call_id: z.string().check(z.describe("The id of the earlier bash tool call")),
    offset: z.optional(z.int().check(z.gte(0)).check(z.lte(Number.MAX_SAFE_INTEGER))).check(z.describe("Byte offset to start at (default 0)")),
    limit: z.optional(z.int().check(z.gte(1)).check(z.lte(MAX_RAW_BYTES))).check(z.describe(`Bytes to return (default and max ${MAX_RAW_BYTES})`)),
  }),
);

/** Moves `end` back so `buf[start, end)` does not stop inside a UTF-8 sequence (at most 3 bytes). */
function utf8End(buf: Buffer, end: number): number {
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const b = buf[end - back]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? end - back : end;
  }
  return end;
}

async function run(args: z.output<typeof input>, ctx: ToolContext): Promise<ToolResult> {
  const dir = await ctx.sidecarDir();
  const offset = args.offset ?? 0;
  const limit = args.limit ?? MAX_RAW_BYTES;
  let fh;
  try {
    fh = await open(sidecarFile(dir, args.tool_call_id), "r");
  } catch {
    return {
      content: `no captured output for tool call ${args.tool_call_id}: only bash calls of this session that printed something are kept`,
      is_error: true,
    };
  }
  try {
    const total = (await fh.stat()).size;
    if (offset > total) return { content: `offset ${offset} is past the end of the output (${total} bytes)`, is_error: true };
    const buf = Buffer.alloc(Math.min(limit, total - offset));
    const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
    let chunk = buf.subarray(0, bytesRead);
    let text: string | undefined;
    if (!chunk.includes(0)) {
      // A range that ends inside a character gives the partial bytes to the next call instead.
      const end = offset + chunk.length < total ? utf8End(chunk, chunk.length) : chunk.length;
      const cut = end > 0 ? chunk.subarray(0, end) : chunk;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(cut);
        chunk = cut;
      } catch {
        text = undefined;
      }
    }
    const next = offset + chunk.length;
    const range = `bytes ${offset}-${next} of ${total}`;
    const tail = next < total ? `[next offset: ${next}]` : "[end of output]";
    if (text === undefined) return { content: `${range}, binary, base64:\n${chunk.toString("base64")}\n${tail}` };
    return { content: `${range}:\n${text}\n${tail}` };
  } finally {
    await fh.close();
  }
}

/** The `raw_output` tool. */
export const rawOutputTool = defineTool({
  name: "raw_output",
  description: "Read the exact, uncapped output of an earlier bash call by byte range. Does not rerun the command.",
  input,
  inputJsonSchema: INPUT_SCHEMAS.raw_output,
  kind: "read",
  run,
});
