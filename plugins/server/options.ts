/**
 * `larik serve` options (LARIK-REFERENCE §21): `--addr` (default `127.0.0.1:4096`, port 0 picks
 * one), `--token` (else `LARIK_SERVER_TOKEN`, else random), `--model`, `--effort`, `--mode`
 * (defaults for new sessions, validated at start) and `--allow-remote` (needed to listen on a
 * non-loopback address; also lifts the Host check).
 */
import { ConfigError, type CliArgs, type Host } from "../../kernel/index.js";
import { DEFAULT_ADDR } from "./cli-options.js";
import { resolveToken } from "./auth.js";
import { isLoopbackHost } from "./host-check.js";
import { checkDefaults, type SessionDefaults } from "./sessions.js";

export interface ServeConfig {
  hostname: string;
  port: number;
  token: string;
  allowRemote: boolean;
  defaults: SessionDefaults;
}

/**
 * Splits `host:port`, `[v6]:port` or `:port` (loopback).
 * @throws ConfigError naming the expected form.
 */
export function parseAddr(addr: string): { hostname: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(addr.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new ConfigError(`invalid --addr "${addr}": use host:port, e.g. 127.0.0.1:4096 ([::1]:4096 for IPv6, port 0 picks a free one)`);
  }
  return { hostname: m[1] ?? (m[2] || "127.0.0.1"), port };
}

/**
 * Validates the command line of `larik serve`.
 * @throws ConfigError for a bad address, a non-loopback address without --allow-remote, a bad
 *   token, mode, effort or model.
 */
export function serveConfig(host: Host, args: CliArgs): ServeConfig {
  const v = args.values;
  const str = (k: string) => (typeof v[k] === "string" ? (v[k] as string) : undefined);
  if (args.positionals.length) throw new ConfigError(`larik serve takes no arguments (got "${args.positionals.join(" ")}")`);
  const { hostname, port } = parseAddr(str("addr") ?? DEFAULT_ADDR);
  const allowRemote = v["allow-remote"] === true;
  if (!allowRemote && !isLoopbackHost(hostname)) {
    throw new ConfigError(`--addr ${hostname} is not a loopback address: add --allow-remote to listen there (anyone who can reach it and has the token controls this machine)`);
  }
  let token: string;
  try {
    token = resolveToken(str("token"), host.env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const defaults = checkDefaults({ model: str("model"), effort: str("effort"), mode: str("mode") }, host);
  return { hostname, port, token, allowRemote, defaults };
}
