/**
 * The Host-header check against DNS rebinding (LARIK-REFERENCE §21): a web page on an
 * attacker's domain that resolves to 127.0.0.1 still sends its own name in `Host`, so only
 * `localhost` and loopback IPs are served unless `--allow-remote` lifts the check.
 */
import { isIP } from "node:net";
import { ApiError } from "./errors.js";

/** True for `localhost`, `127.0.0.0/8`, `::1` and IPv4-mapped loopback (`::ffff:127.x.y.z`). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost") return true;
  const v = isIP(h);
  if (v === 4) return h.startsWith("127.");
  if (v === 6) {
    if (h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
    return mapped !== null && mapped[1]!.startsWith("127.");
  }
  return false;
}

/** The host name of a `Host` header value (`name`, `name:port`, `[v6]:port`), without port. */
function hostName(header: string): string {
  const h = header.trim();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end > 0 ? h.slice(0, end + 1) : h;
  }
  const colon = h.indexOf(":");
  // more than one colon without brackets is a bare IPv6 address (not valid in Host, but harmless)
  return colon >= 0 && h.indexOf(":", colon + 1) < 0 ? h.slice(0, colon) : h;
}

/**
 * Refuses requests whose `Host` is not loopback.
 * @throws ApiError 403 `forbidden_host` naming the host and the `--allow-remote` fix.
 */
export function checkHost(req: Request, allowRemote: boolean): void {
  if (allowRemote) return;
  const header = req.headers.get("host");
  if (!header) throw new ApiError(403, "forbidden_host", "missing Host header: send Host: localhost or a loopback address");
  const name = hostName(header);
  if (!isLoopbackHost(name)) {
    throw new ApiError(
      403,
      "forbidden_host",
      `Host "${name}" is not localhost or a loopback address (DNS-rebinding guard): connect through 127.0.0.1 or start larik serve with --allow-remote`,
    );
  }
}
