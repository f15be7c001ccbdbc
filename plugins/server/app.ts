/**
 * The h3 application: Host check, then bearer auth, then the route table; every error (ours,
 * h3's own 404/400/413, unexpected exceptions) leaves as `{"error": {"code", "message"}}`.
 */
import { H3, getRouterParams, type H3Event } from "h3";
import { ApiError, codeForStatus, errorResponse } from "./errors.js";
import { checkAuth } from "./auth.js";
import { checkHost } from "./host-check.js";
import { ROUTES, matchPath, routerPath, type RouteDef, type ServerState } from "./routes.js";

export interface AppOptions {
  token: string;
  /** Serve any Host header (the DNS-rebinding guard is off). */
  allowRemote: boolean;
}

/** Builds the app for `state`. */
export function buildApp(state: ServerState, opts: AppOptions): H3 {
  const app = new H3({
    silent: true,
    onError: (error, event) => toErrorResponse(error, event, state),
  });
  app.use((event, next) => {
    checkHost(event.req, opts.allowRemote);
    checkAuth(event.req, event.url, opts.token);
    return next();
  });
  for (const route of ROUTES) {
    app.on(route.method, routerPath(route.path), (event) => run(route, event, state));
  }
  return app;
}

function run(route: RouteDef, event: H3Event, state: ServerState): Promise<Response> {
  const params = getRouterParams(event, { decode: true }) as Record<string, string>;
  return route.handler({ state, req: event.req, url: event.url, params });
}

function toErrorResponse(error: Error & { status?: number }, event: H3Event, state: ServerState): Response {
  const cause = (error as { cause?: unknown }).cause;
  const api = error instanceof ApiError ? error : cause instanceof ApiError ? cause : undefined;
  if (api) return errorResponse(api);
  const status = error.status ?? 500;
  if (status === 404) {
    const allowed = ROUTES.filter((r) => matchPath(r.path, event.url.pathname)).map((r) => r.method);
    if (allowed.length) {
      return errorResponse(
        new ApiError(405, "method_not_allowed", `${event.req.method} is not allowed on ${event.url.pathname}: use ${allowed.join(", ")}`, {
          allow: allowed.join(", "),
        }),
      );
    }
    return errorResponse(new ApiError(404, "not_found", `no route ${event.req.method} ${event.url.pathname}: GET /v1/openapi.json lists the routes`));
  }
  if (status === 413) return errorResponse(new ApiError(413, "payload_too_large", "the body is too large: send a smaller request"));
  if (status >= 500) {
    const err = cause instanceof Error ? cause : error;
    state.log(`internal error on ${event.req.method} ${event.url.pathname}: ${err.stack ?? err.message}`);
    return errorResponse(new ApiError(500, "internal", `internal error: ${err.message}`));
  }
  return errorResponse(new ApiError(status, codeForStatus(status), error.message));
}
