/**
 * Bearer-token authentication (LARIK-REFERENCE §21): every route but `GET /v1/health` needs
 * `Authorization: Bearer <token>`; the events route also takes `?token=` because browsers'
 * `EventSource` cannot set headers. Tokens are compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { ApiError } from "./errors.js";

/** A fresh random token: 24 random bytes as 48 lowercase hex characters. */
function randomToken(): string {
  return randomBytes(24).toString("hex");
}

/**
 * The token in force: `--token`, else `LARIK_SERVER_TOKEN`, else a random one.
 * @throws Error when a given token is shorter than 16 characters or contains whitespace.
 */
export function resolveToken(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const given = flag ?? env.LARIK_SERVER_TOKEN;
  if (given === undefined || given === "") return randomToken();
  if (given.length < 16 || /\s/.test(given)) {
    throw new Error("the server token must be at least 16 characters with no spaces: pass a longer --token or LARIK_SERVER_TOKEN");
  }
  return given;
}

/**
 * Compares two secrets in constant time. Both sides are hashed first so inputs of different
 * lengths take the same time too (`timingSafeEqual` throws on a length mismatch).
 */
function safeEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a, "utf8").digest();
  const hb = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(ha, hb);
}

/** Routes that need no token: `GET /v1/health` only. */
function isPublic(method: string, path: string): boolean {
  return method === "GET" && path === "/v1/health";
}

/** The SSE route, the only one where `?token=` is accepted. */
const EVENTS_PATH = /^\/v1\/sessions\/[^/]+\/events$/;

/**
 * Checks the request's token.
 * @throws ApiError 401 `unauthorized` with `WWW-Authenticate: Bearer` when missing or wrong.
 */
export function checkAuth(req: Request, url: URL, token: string): void {
  if (isPublic(req.method, url.pathname)) return;
  const header = req.headers.get("authorization");
  let given: string | undefined;
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw unauthorized("the Authorization header must be \"Bearer <token>\"");
    given = m[1];
  } else if (req.method === "GET" && EVENTS_PATH.test(url.pathname)) {
    given = url.searchParams.get("token") ?? undefined;
  }
  if (given === undefined) {
    throw unauthorized("missing token: send \"Authorization: Bearer <token>\" (the token larik serve printed)");
  }
  if (!safeEqual(given, token)) throw unauthorized("wrong token: use the token larik serve printed");
}

function unauthorized(message: string): ApiError {
  return new ApiError(401, "unauthorized", message, { "www-authenticate": 'Bearer realm="larik"' });
}
