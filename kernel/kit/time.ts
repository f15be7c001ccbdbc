/**
 * Timestamps for session entries and the `<env>` block.
 *
 * {@link isoTime} gives what `Date#toISOString` gives (ISO 8601, UTC, milliseconds, `Z`) without
 * calling it: on Node 20 the first `toISOString` of a process loads the local time zone
 * (/etc/localtime and its realpath, ~0.7 ms). The UTC getters do not. The `<env>` block's
 * {@link localDay} does load it, once: the model is told the user's day.
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
  return `${localDay(d)} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * `YYYY-MM-DD` of `date` in local time: the day the user lives in, which the model is told.
 * Reading the local time zone costs ~0.7 ms once per process; a UTC day is a day off every
 * evening west of Greenwich and every morning east of it.
 */
export function localDay(date: Date = new Date()): string {
  return `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}
