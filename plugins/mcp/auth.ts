/**
 * The OAuth seam for http/sse servers (LARIK-REFERENCE §15 "OAuth"). Sign-in is not built yet;
 * this file is where it plugs in, so the rest of the plugin does not change when it is:
 *
 * - {@link authProviderFor} returns the SDK `OAuthClientProvider` handed to the transport
 *   (`StreamableHTTPClientTransport` / `SSEClientTransport` option `authProvider`). With one, the
 *   SDK attaches stored tokens, refreshes them, and throws `UnauthorizedError` when the user
 *   must sign in. Today it returns undefined, so a server answering 401 is reported as
 *   "needs sign-in" without any browser opening (no surprise browser, as §15 asks).
 * - {@link isAuthError} recognizes that state, whatever raised it.
 * - `/mcp login <name>` and `/mcp logout <name>` call {@link login} / {@link logout}.
 *
 * Tokens will live in `<configDir>/mcp-auth/<server>-<urlhash>.json` (mode 0600).
 */
import type { RemoteServerConfig } from "./config.js";

/** What the transport needs; `unknown` so this file stays free of a static SDK import. */
export type AuthProvider = unknown;

/** The OAuth client provider for a remote server, or undefined while sign-in is not built. */
export function authProviderFor(_server: string, _config: RemoteServerConfig, _env: NodeJS.ProcessEnv): AuthProvider | undefined {
  return undefined;
}

/**
 * True when `err` means the server wants credentials: the SDK's `UnauthorizedError`, or an HTTP
 * 401/403 surfaced by a transport (`StreamableHTTPError`/`SseError` carry `code`).
 */
export function isAuthError(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const e = err as { name?: string; code?: unknown; message?: string };
  if (e.name === "UnauthorizedError") return true;
  if (e.code === 401 || e.code === 403) return true;
  return /\b(401|403)\b|unauthorized|invalid_token/i.test(e.message ?? "");
}

/**
 * Starts the browser sign-in for a server.
 * @throws Error always, for now: sign-in is not available yet.
 */
export async function login(server: string): Promise<never> {
  throw new Error(`signing in to MCP server "${server}" is not available yet: pass a token in "headers" (e.g. "Authorization": "Bearer \${TOKEN}")`);
}

/**
 * Forgets stored tokens for a server.
 * @throws Error always, for now: there are no stored tokens yet.
 */
export async function logout(server: string): Promise<never> {
  throw new Error(`no stored sign-in for MCP server "${server}": OAuth tokens are not supported yet`);
}
