/**
 * The CLI options `larik serve` contributes (LARIK-REFERENCE §21). `--model`, `--effort` and
 * `--mode` are the shared options every front end gets (kernel `COMMON_OPTIONS`); for serve they
 * are the defaults of new sessions. Kept free of imports so registering loads nothing else.
 */
import type { CliOption } from "../../kernel/index.js";

export const DEFAULT_ADDR = "127.0.0.1:4096";

export const SERVE_OPTIONS: Record<string, CliOption> = {
  addr: { type: "string", description: `serve: listen address host:port (default ${DEFAULT_ADDR}; port 0 picks one)`, value: "<host:port>" },
  token: { type: "string", description: "serve: bearer token (else LARIK_SERVER_TOKEN, else random)", value: "<token>" },
  "allow-remote": { type: "boolean", description: "serve: allow a non-loopback --addr and any Host header" },
};
