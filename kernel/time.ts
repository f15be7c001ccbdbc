/**
 * Timestamps for session entries and the `<env>` block.
 *
 * {@link isoTime} gives what `Date#toISOString` gives (ISO 8601, UTC, milliseconds, `Z`) without
 * calling it: on Node 20 the first `toISOString` of a process loads the local time zone
 * (/etc/localtime and its realpath, ~0.7 ms), which nothing before a `-p` run's first model
 * request needs. The UTC getters do not.
 */

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * `date` as `YYYY-MM-DDTHH:mm:ss.sssZ`, identical to `date.toISOString()`.
 * @throws RangeError for an invalid date, as `toISOString` does.
 */
export function isoTime(date: Date = new Date()): string {
  const year = date.getUTCFullYear();
  // years outside 0-9999 (and invalid dates) take toISOString's own ±YYYYYY form or RangeError
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  return `${pad(year, 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)}Z`;
}

/** `YYYY-MM-DD HH:MM` in local time, as `larik --sessions` prints it (§1). `ms` since epoch. */
export function localMinute(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
