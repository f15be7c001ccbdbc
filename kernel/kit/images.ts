/**
 * A structural check of the images Larik sends to models (PNG, JPEG, GIF, WebP), before they go
 * out as image blocks. A truncated or corrupt file sent to Anthropic is refused with HTTP 400
 * `Could not process image`, and since the image stays in the history every later request of the
 * session fails the same way. So the check walks the file far enough to see it is whole: PNG
 * chunks with their CRCs up to `IEND` (PNG spec §5.3, §11.2.2), JPEG segments up to the first
 * start-of-scan and an end-of-image marker after it (ITU T.81 §B.1), the GIF header and trailer
 * (GIF89a §17, §27), the RIFF size and the VP8/VP8L/VP8X frame size of a WebP. Header-only
 * readers (the `image-size` package) report the size of a file cut after its header, which is
 * exactly the failure to catch, so the walk is ours; it decodes no pixels.
 */
import { crc32 } from "node:zlib";

/** Longest side, in pixels, an image may have: the Messages API refuses larger ones with HTTP 400. */
export const MAX_IMAGE_SIDE = 8000;

/**
 * Largest image Larik sends to a model, in bytes of image data (LARIK-REFERENCE: `@` mentions,
 * `read` and MCP results all take images up to 5 MB); what the Messages API takes.
 */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** What the file's first bytes say it is, whatever its name or declared type. */
export function sniffImageType(data: Uint8Array): string | undefined {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.subarray(0, 8).equals(PNG_SIGNATURE)) return "image/png";
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (/^GIF8[79]a$/.test(b.subarray(0, 6).toString("latin1"))) return "image/gif";
  if (b.subarray(0, 4).toString("latin1") === "RIFF" && b.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return undefined;
}

type Walk = { width: number; height: number } | string;

function png(b: Buffer): Walk {
  let pos = 8;
  let size: { width: number; height: number } | undefined;
  let idat = false;
  while (pos + 12 <= b.length) {
    const len = b.readUInt32BE(pos);
    const type = b.subarray(pos + 4, pos + 8).toString("latin1");
    if (pos + 12 + len > b.length) return `truncated PNG (the ${type} chunk runs past the end of the file)`;
    if (crc32(b.subarray(pos + 4, pos + 8 + len)) !== b.readUInt32BE(pos + 8 + len)) return `corrupt PNG (bad checksum in the ${type} chunk)`;
    if (!size) {
      if (type !== "IHDR" || len !== 13) return "corrupt PNG (no IHDR chunk first)";
      size = { width: b.readUInt32BE(pos + 8), height: b.readUInt32BE(pos + 12) };
    }
    if (type === "IDAT") idat = true;
    if (type === "IEND") return idat ? size : "corrupt PNG (no image data)";
    pos += 12 + len;
  }
  return "truncated PNG (no IEND chunk)";
}

function jpeg(b: Buffer): Walk {
  let pos = 2;
  let size: { width: number; height: number } | undefined;
  while (pos < b.length) {
    if (b[pos] !== 0xff) return "corrupt JPEG (a segment does not start with a marker)";
    while (b[pos] === 0xff) pos++; // fill bytes before a marker
    if (pos >= b.length) break;
    const marker = b[pos++]!;
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // no length
    if (marker === 0xd9) return "corrupt JPEG (the image ends before any scan)";
    if (pos + 2 > b.length) break;
    const len = b.readUInt16BE(pos);
    if (len < 2 || pos + len > b.length) break;
    // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC): the frame header has the size
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc && len >= 7) {
      size = { height: b.readUInt16BE(pos + 3), width: b.readUInt16BE(pos + 5) };
    }
    if (marker === 0xda) {
      if (!size) return "corrupt JPEG (a scan before the frame header)";
      // entropy-coded data escapes 0xFF as FF 00, so FF D9 after the first scan is the end marker
      return b.indexOf(Buffer.from([0xff, 0xd9]), pos + len) === -1 ? "truncated JPEG (no end-of-image marker)" : size;
    }
    pos += len;
  }
  return "truncated JPEG (it ends before the image data)";
}

function gif(b: Buffer): Walk {
  if (b.length < 14) return "truncated GIF";
  // a trailer byte (0x3B) ends every complete GIF; some writers pad after it with zeros
  let end = b.length - 1;
  while (end > 13 && b[end] === 0) end--;
  if (b[end] !== 0x3b) return "truncated GIF (no trailer)";
  return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

function webp(b: Buffer): Walk {
  if (b.length < 30) return "truncated WebP";
  if (b.readUInt32LE(4) + 8 > b.length) return "truncated WebP (shorter than its RIFF size)";
  const chunk = b.subarray(12, 16).toString("latin1");
  if (chunk === "VP8 ") return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === "VP8L") {
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X") return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  return `corrupt WebP (unknown ${JSON.stringify(chunk)} chunk)`;
}

/**
 * Why `data` cannot be sent to a model as an image of `mediaType`, in a few words (`truncated PNG
 * (no IEND chunk)`, `the file is a JPEG, not image/png`, `9000×600 pixels is over the limit of
 * 8000 a side`), or undefined when it is a whole PNG, JPEG, GIF or WebP of that type with both
 * sides between 1 and {@link MAX_IMAGE_SIDE} pixels. Reads the structure only (see the module
 * comment); never throws.
 */
export function imageProblem(data: Uint8Array, mediaType: string): string | undefined {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const actual = sniffImageType(b);
  if (!actual) return `not a PNG, JPEG, GIF or WebP image (unknown first bytes)`;
  if (actual !== mediaType) return `the file is a ${actual.slice(6).toUpperCase()}, not ${mediaType}`;
  let walk: Walk;
  try {
    walk = actual === "image/png" ? png(b) : actual === "image/jpeg" ? jpeg(b) : actual === "image/gif" ? gif(b) : webp(b);
  } catch {
    // a read past the end that a bounds check missed: the file is cut short all the same
    walk = `truncated ${actual.slice(6).toUpperCase()}`;
  }
  if (typeof walk === "string") return walk;
  const { width, height } = walk;
  if (!width || !height) return `the image is ${width}×${height} pixels (empty)`;
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) return `${width}×${height} pixels is over the limit of ${MAX_IMAGE_SIDE} a side`;
  return undefined;
}

/** Verdicts of {@link storedImageProblem} per image object (null: fine). */
const verdicts = new WeakMap<object, string | null>();

/**
 * {@link imageProblem} of an image block's base64 `data`, decoded and checked once per image
 * object: request builders ask it for every image of the conversation at every request, and a
 * session keeps its image objects, so each is read once per process (a session may hold images
 * from before `read` checked them, which servers answer with HTTP 400 on every request).
 */
export function storedImageProblem(img: { media_type: string; data: string }): string | undefined {
  let verdict = verdicts.get(img);
  if (verdict === undefined) {
    verdict = imageProblem(Buffer.from(img.data, "base64"), img.media_type) ?? null;
    verdicts.set(img, verdict);
  }
  return verdict ?? undefined;
}
