/**
 * Request bodies (LARIK-REFERENCE §21): exactly one JSON value, empty rejected, at most
 * {@link MAX_BODY_BYTES}, then validated by the route's zod schema.
 */
import type { z } from "zod";
import { ApiError } from "./errors.js";

/** Request body limit in bytes (1 MiB); larger bodies get 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Reads and validates a JSON body.
 * @throws ApiError 413 `payload_too_large`, 400 `empty_body`, 400 `invalid_json` (not exactly
 *   one JSON value), or 400 `bad_request` naming the first invalid field.
 */
export async function readJson<S extends z.ZodType>(req: Request, schema: S, limit = MAX_BODY_BYTES): Promise<z.infer<S>> {
  const text = await readText(req, limit);
  if (text.trim() === "") throw new ApiError(400, "empty_body", "empty body: send one JSON object (e.g. {})");
  let value: unknown;
  try {
    // JSON.parse accepts exactly one value surrounded by whitespace; `{}{}` or `{} x` fail here.
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, "invalid_json", `the body is not exactly one JSON value: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join(".") : "body";
    throw new ApiError(400, "bad_request", `invalid ${where}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * Reads a body that routes without parameters allow to be absent; when present it must still
 * be exactly one JSON value.
 * @throws ApiError as {@link readJson}.
 */
export async function readOptionalJson(req: Request, limit = MAX_BODY_BYTES): Promise<unknown> {
  const text = await readText(req, limit);
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, "invalid_json", `the body is not exactly one JSON value: ${(err as Error).message}`);
  }
}

async function readText(req: Request, limit: number): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let r: Awaited<ReturnType<typeof reader.read>>;
    try {
      r = await reader.read();
    } catch (err) {
      // srvx's own maxRequestBodySize guard surfaces as a read error with status 413
      if ((err as { status?: number }).status === 413) throw tooLarge(limit);
      throw new ApiError(400, "bad_request", `could not read the body: ${(err as Error).message}`);
    }
    if (r.done) break;
    size += r.value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(r.value);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ApiError(400, "invalid_json", "the body is not valid UTF-8: send UTF-8 encoded JSON");
  }
}

function tooLarge(limit: number): ApiError {
  return new ApiError(413, "payload_too_large", `the body is larger than ${limit} bytes: send a smaller request`);
}
