/**
 * MCP content → a tool result for the model (LARIK-REFERENCE §15 "Results"): text passed on;
 * PNG/JPEG/GIF/WebP images of at most 5 MB, at most 4 per call, sent as images (the formats and
 * size every provider with vision accepts); audio, other images and binary blobs summarized in
 * one line; the text capped with the kernel's `capOutput`.
 *
 * Content shapes follow the MCP 2025-06-18 schema: `text`, `image`, `audio`, `resource`
 * (embedded text or blob), `resource_link`, plus `structuredContent` on the result.
 */
import { capOutput, MAX_IMAGE_BYTES, type Image, type ToolResult } from "../../kernel/index.js";

/** MIME types passed to the model as images. */
const IMAGE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** Most images passed on from one call. */
const MAX_IMAGES = 4;

type Content = Record<string, unknown> & { type?: string };

/** Decoded size in bytes of base64 text. */
export function base64Bytes(b64: string): number {
  const clean = b64.replace(/\s/g, "");
  const pad = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - pad);
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} bytes`;
}

/** Collects parts of one result: text lines and images with their budget. */
export class ContentCollector {
  readonly parts: string[] = [];
  readonly images: Image[] = [];

  /** Adds an image if it qualifies, else a one-line description. */
  image(mime: string, data: string, label = "image"): void {
    const bytes = base64Bytes(data);
    const type = mime.toLowerCase();
    if (!IMAGE_TYPES.has(type)) this.parts.push(`[${label} ${mime}, ${sizeText(bytes)}: not shown (only PNG, JPEG, GIF and WebP are passed on)]`);
    else if (bytes > MAX_IMAGE_BYTES) this.parts.push(`[${label} ${mime}, ${sizeText(bytes)}: not shown (over the 5 MB limit)]`);
    else if (this.images.length >= MAX_IMAGES) this.parts.push(`[${label} ${mime}, ${sizeText(bytes)}: not shown (at most ${MAX_IMAGES} images per call)]`);
    else {
      this.images.push({ media_type: type, data });
      this.parts.push(`[${label} ${mime}, ${sizeText(bytes)}: attached]`);
    }
  }

  /**
   * Adds one embedded resource (`{uri, mimeType?, text}` or `{uri, mimeType?, blob}`); text is
   * framed as `<mcp-resource uri>` unless `frame` is false (the caller frames it).
   */
  resource(r: Record<string, unknown>, frame = true): void {
    const uri = String(r.uri ?? "");
    const mime = typeof r.mimeType === "string" ? r.mimeType : undefined;
    if (typeof r.text === "string" && !frame) this.parts.push(r.text);
    else if (typeof r.text === "string") this.parts.push(`<mcp-resource uri="${uri}"${mime ? ` mimeType="${mime}"` : ""}>\n${r.text}\n</mcp-resource>`);
    else if (typeof r.blob === "string") {
      if (mime?.startsWith("image/")) this.image(mime, r.blob, `resource ${uri}`);
      else this.parts.push(`[resource ${uri}${mime ? ` (${mime})` : ""}: binary, ${sizeText(base64Bytes(r.blob))}, not shown]`);
    } else this.parts.push(`[resource ${uri}: no content]`);
  }

  /** Adds one MCP content item of any type. */
  add(c: Content): void {
    switch (c.type) {
      case "text":
        this.parts.push(String(c.text ?? ""));
        break;
      case "image":
        this.image(String(c.mimeType ?? "application/octet-stream"), String(c.data ?? ""));
        break;
      case "audio":
        this.parts.push(`[audio ${String(c.mimeType ?? "")}, ${sizeText(base64Bytes(String(c.data ?? "")))}: not shown]`);
        break;
      case "resource":
        this.resource((c.resource ?? {}) as Record<string, unknown>);
        break;
      case "resource_link":
        this.parts.push(
          `[resource link: ${String(c.name ?? "")} ${String(c.uri ?? "")}${c.mimeType ? ` (${String(c.mimeType)})` : ""}${c.description ? ` — ${String(c.description)}` : ""}]`,
        );
        break;
      default:
        this.parts.push(`[${String(c.type ?? "unknown")} content not shown]`);
    }
  }
}

/**
 * Converts a `tools/call` result. `structuredContent` is used (as JSON) only when the content
 * has no text, since servers are told to mirror structured output in a text block.
 */
export function convertToolResult(result: { content?: unknown; structuredContent?: unknown; isError?: boolean; toolResult?: unknown }): ToolResult {
  const col = new ContentCollector();
  const content = Array.isArray(result.content) ? (result.content as Content[]) : [];
  for (const c of content) col.add(c);
  if (!content.some((c) => c.type === "text") && result.structuredContent !== undefined) {
    col.parts.push(JSON.stringify(result.structuredContent, null, 2));
  }
  // Protocol 2024-10-07 servers answer with `toolResult` instead of `content`.
  if (!content.length && result.toolResult !== undefined) col.parts.push(typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult));
  let text = col.parts.join("\n");
  if (!text.trim()) text = result.isError ? "the tool failed without a message" : "(no output)";
  const out: ToolResult = { content: capOutput(text).text };
  if (result.isError) out.is_error = true;
  if (col.images.length) out.images = col.images;
  return out;
}
