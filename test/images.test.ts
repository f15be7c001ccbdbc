/**
 * kernel/kit/images.ts: the structural check that keeps cut, corrupt or oversized images from being
 * sent to a model (Anthropic refuses them with HTTP 400 on every later request of the session).
 * Real images (CPython's test images) and PNGs built here with real chunk checksums.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { imageProblem, MAX_IMAGE_SIDE, sniffImageType } from "../kernel/index.js";

const dir = join(import.meta.dirname, "fixtures", "images");
const FILES = { "python.png": "image/png", "python.jpg": "image/jpeg", "python.gif": "image/gif", "python.webp": "image/webp" } as const;

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A grey PNG of `width`×`height` with valid chunks. */
function png(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth; colour type 0 (grey)
  const rows = Buffer.alloc((width + 1) * height, 0x80);
  return Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(rows)), chunk("IEND", Buffer.alloc(0))]);
}

describe("imageProblem", () => {
  it("passes whole PNG, JPEG, GIF and WebP files and names the type from the bytes", () => {
    for (const [name, type] of Object.entries(FILES)) {
      const data = readFileSync(join(dir, name));
      expect([name, sniffImageType(data), imageProblem(data, type)]).toEqual([name, type, undefined]);
    }
  });

  it("finds each format cut short, at any length", () => {
    for (const [name, type] of Object.entries(FILES)) {
      const data = readFileSync(join(dir, name));
      for (let len = 12; len < data.length; len += 7) {
        const problem = imageProblem(data.subarray(0, len), type);
        expect([name, len, problem]).toEqual([name, len, expect.stringMatching(/^truncated |^corrupt /)]);
      }
    }
  });

  it("finds a damaged PNG chunk by its checksum", () => {
    const data = Buffer.from(readFileSync(join(dir, "python.png")));
    data[700]! ^= 0x01; // inside IDAT
    expect(imageProblem(data, "image/png")).toBe("corrupt PNG (bad checksum in the IDAT chunk)");
  });

  it("names a type that is not the declared one, and data that is no image", () => {
    expect(imageProblem(readFileSync(join(dir, "python.jpg")), "image/png")).toBe("the file is a JPEG, not image/png");
    expect(imageProblem(Buffer.from("<html>not found</html>"), "image/png")).toBe("not a PNG, JPEG, GIF or WebP image (unknown first bytes)");
  });

  it("refuses empty images and sides over the limit the Messages API takes", () => {
    expect(imageProblem(png(3, 2), "image/png")).toBeUndefined();
    expect(imageProblem(png(MAX_IMAGE_SIDE, 1), "image/png")).toBeUndefined();
    expect(imageProblem(png(MAX_IMAGE_SIDE + 1, 1), "image/png")).toBe(`${MAX_IMAGE_SIDE + 1}×1 pixels is over the limit of ${MAX_IMAGE_SIDE} a side`);
    expect(imageProblem(png(0, 1), "image/png")).toBe("the image is 0×1 pixels (empty)");
    // either side: a tall screenshot is refused as a wide one is, and a 1×0 image is empty too
    expect(imageProblem(png(1, MAX_IMAGE_SIDE), "image/png")).toBeUndefined();
    expect(imageProblem(png(1, MAX_IMAGE_SIDE + 1), "image/png")).toBe(`1×${MAX_IMAGE_SIDE + 1} pixels is over the limit of ${MAX_IMAGE_SIDE} a side`);
    expect(imageProblem(png(1, 0), "image/png")).toBe("the image is 1×0 pixels (empty)");
  });
});
