/**
 * Session ids: `YYYYMMDD-HHMMSS-<6 hex>` (LARIK-REFERENCE §7). The timestamp is UTC so that ids
 * sort the same on every machine and across daylight-saving changes; the 6 hex digits are random.
 * They only need to be unique (creation is exclusive and retries on a clash), not secret, so they
 * come from Math.random: node:crypto would cost every run 5-8 ms before its first request.
 */

/** A full session id: 8 digits, dash, 6 digits, dash, 6 lowercase hex digits. */
export const SESSION_ID_RE = /^\d{8}-\d{6}-[0-9a-f]{6}$/;

/** What a user may type as an id or prefix: digits, lowercase hex and dashes only. */
export const ID_PREFIX_RE = /^[0-9a-f-]+$/;

/** A new random session id for `now` (UTC). */
export function newSessionId(now: Date = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  const date = `${p(now.getUTCFullYear(), 4)}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}`;
  const time = `${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  const rand = Math.floor(Math.random() * 0x1000000).toString(16).padStart(6, "0");
  return `${date}-${time}-${rand}`;
}

/** The sequence number of an entry id `<session>-<seq>`, or -1 when it has none. */
export function entrySeq(entryId: string): number {
  const m = /-(\d+)$/.exec(entryId);
  return m ? Number(m[1]) : -1;
}
