/**
 * The routes of the server API (LARIK-REFERENCE §21), as one table: the app registers each
 * handler and the OpenAPI document is generated from the same entries and zod schemas.
 */
import type { z } from "zod";
import { errorText, type Host } from "../../kernel/index.js";
import { ApiError, json } from "./errors.js";
import { readJson, readOptionalJson } from "./body.js";
import { replayPoint, sseResponse } from "./sse.js";
import type { SessionManager } from "./sessions.js";
import * as S from "./schemas.js";

/** Everything a handler can reach. */
export interface ServerState {
  host: Host;
  sessions: SessionManager;
  version: string;
  /** Keepalive interval of SSE streams in ms. */
  keepaliveMs: number;
  log(line: string): void;
}

export interface RouteContext {
  state: ServerState;
  req: Request;
  url: URL;
  /** Path parameters (`{id}`, `{request_id}`, `{task_id}`), URL-decoded. */
  params: Record<string, string>;
}

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** One response of a route, for the OpenAPI document. */
export interface RouteResponse {
  description: string;
  schema?: z.ZodType;
  /** `text/event-stream` instead of JSON. */
  sse?: boolean;
}

export interface RouteDef {
  method: Method;
  /** OpenAPI-style path, e.g. `/v1/sessions/{id}`. */
  path: string;
  summary: string;
  /** False for `GET /v1/health`, the one route without a token. */
  auth?: boolean;
  /** The JSON body schema; the body is then required (exactly one JSON value). */
  body?: z.ZodType;
  query?: { name: string; description: string }[];
  responses: Record<number, RouteResponse>;
  handler(ctx: RouteContext): Promise<Response>;
}

const NO_CONTENT = () => new Response(null, { status: 204 });
const ok = (schema: z.ZodType, description = "OK"): RouteResponse => ({ description, schema });

/** Routes that take no parameters still refuse a body that is not one JSON value. */
async function noBody(ctx: RouteContext): Promise<void> {
  await readOptionalJson(ctx.req);
}

export const ROUTES: RouteDef[] = [
  {
    method: "GET",
    path: "/v1/health",
    summary: "Liveness check (no token needed)",
    auth: false,
    responses: { 200: ok(S.HealthResponse) },
    handler: async () => json(200, { ok: true }),
  },
  {
    method: "GET",
    path: "/v1/info",
    summary: "Version, directory, providers, plugins, sandbox backends and session defaults",
    responses: { 200: ok(S.InfoResponse) },
    handler: async ({ state }) => {
      const { host, sessions } = state;
      return json(200, {
        version: state.version,
        cwd: host.cwd,
        project_root: host.projectRoot,
        providers: host.providers.list().map((p) => p.name),
        plugins: host.plugins,
        session_store: host.sessionStore?.name ?? null,
        sandbox: { backends: host.sandboxes.list().map((s) => s.name) },
        defaults: sessions.defaults,
      } satisfies z.infer<typeof S.InfoResponse>);
    },
  },
  {
    method: "GET",
    path: "/v1/openapi.json",
    summary: "This API as an OpenAPI 3.0 document (generated from the zod schemas)",
    responses: { 200: { description: "OpenAPI 3.0 document" } },
    handler: async ({ state }) => json(200, (await import("./openapi.js")).buildOpenApi(state.version)),
  },
  {
    method: "GET",
    path: "/v1/sessions",
    summary: "Sessions of the server's directory, with loaded/busy flags",
    responses: { 200: ok(S.SessionListResponse) },
    handler: async ({ state }) => json(200, { sessions: await state.sessions.list() }),
  },
  {
    method: "POST",
    path: "/v1/sessions",
    summary: "Create a session ({model, effort, mode}), or load one ({resume: id} / {continue: true}, optionally fork)",
    body: S.CreateSessionBody,
    responses: { 201: ok(S.SessionInfoResponse, "Created (or resumed)"), 200: ok(S.SessionInfoResponse, "Already loaded") },
    handler: async ({ state, req }) => {
      const body = await readJson(req, S.CreateSessionBody);
      const { session, created } = await state.sessions.open(body);
      return json(created ? 201 : 200, session.info());
    },
  },
  {
    method: "GET",
    path: "/v1/sessions/{id}",
    summary: "Model, mode, busy state, usage, pending permissions and running tasks of a session",
    responses: { 200: ok(S.SessionInfoResponse) },
    handler: async ({ state, params }) => {
      const loaded = state.sessions.find(params.id!);
      if (loaded) return json(200, loaded.info());
      const stored = (await state.sessions.list()).filter((s) => s.id === params.id || s.id.startsWith(params.id!));
      if (stored.length > 1) throw new ApiError(400, "bad_request", `session prefix "${params.id}" is ambiguous: type more of the id`);
      if (stored.length === 0) throw new ApiError(404, "not_found", `no session ${params.id}: GET /v1/sessions lists them`);
      const s = stored[0]!;
      return json(200, { id: s.id, title: s.title, location: s.location, loaded: false, busy: false, ...(s.fork_of ? { fork_of: s.fork_of } : {}) });
    },
  },
  {
    method: "PATCH",
    path: "/v1/sessions/{id}",
    summary: "Change model or effort (409 while running) or mode (allowed mid-run)",
    body: S.PatchSessionBody,
    responses: { 200: ok(S.SessionInfoResponse) },
    handler: async ({ state, req, params }) => {
      const s = state.sessions.get(params.id!);
      const body = await readJson(req, S.PatchSessionBody);
      await s.patch(body);
      return json(200, s.info());
    },
  },
  {
    method: "DELETE",
    path: "/v1/sessions/{id}",
    summary: "Stop and unload a session (its file is kept)",
    responses: { 204: { description: "Unloaded" } },
    handler: async ({ state, params }) => {
      const s = state.sessions.get(params.id!);
      await state.sessions.close(s, "deleted");
      return NO_CONTENT();
    },
  },
  {
    method: "GET",
    path: "/v1/sessions/{id}/messages",
    summary: "The full transcript and its prompt indexes (works for unloaded sessions)",
    responses: { 200: ok(S.MessagesResponse) },
    handler: async ({ state, params }) => json(200, await state.sessions.messages(params.id!)),
  },
  {
    method: "POST",
    path: "/v1/sessions/{id}/fork",
    summary: "Branch into a new loaded session: {at: i} keeps the messages before prompt i and returns its text; {} keeps everything",
    body: S.ForkBody,
    responses: { 201: ok(S.ForkResponse, "Created") },
    handler: async ({ state, req, params }) => {
      const body = await readJson(req, S.ForkBody);
      const { session, prompt, typed } = await state.sessions.fork(params.id!, body.at);
      return json(201, { ...session.info(), ...(prompt !== undefined ? { prompt } : {}), ...(typed !== undefined ? { typed } : {}) });
    },
  },
  {
    method: "GET",
    path: "/v1/sessions/{id}/events",
    summary: "Server-sent events: Last-Event-ID or ?after=<seq> replays from the ring, none = live only",
    query: [
      { name: "after", description: "replay events with a larger seq (Last-Event-ID wins)" },
      { name: "token", description: "the bearer token, for clients that cannot set headers" },
    ],
    responses: {
      200: {
        description: "`id: <seq>`, `event: <type>`, `data: <event JSON with seq and session>`; `: gap` when replay lost events",
        schema: S.ServerEvent,
        sse: true,
      },
    },
    handler: async ({ state, req, url, params }) => {
      const s = state.sessions.get(params.id!);
      const point = replayPoint(req, url);
      if (point.error) throw new ApiError(400, "bad_request", point.error);
      return sseResponse(s.bus, point.after, {
        keepaliveMs: state.keepaliveMs,
        onDrop: () => state.log(`session ${s.id}: dropped a slow event subscriber`),
      });
    },
  },
  {
    method: "POST",
    path: "/v1/sessions/{id}/prompt",
    summary: "Start a turn: 202 {after_seq}, or with wait: true the final answer (409 if busy)",
    body: S.PromptBody,
    responses: { 202: ok(S.PromptAccepted, "Accepted"), 200: ok(S.PromptResult, "Final answer (wait: true)") },
    handler: async ({ state, req, params }) => {
      const s = state.sessions.get(params.id!);
      const body = await readJson(req, S.PromptBody);
      const run = await s.startPrompt(body.text);
      if (!body.wait) {
        run.done.catch(() => {});
        return json(202, { after_seq: run.after_seq });
      }
      return json(200, await run.done);
    },
  },
  {
    method: "POST",
    path: "/v1/sessions/{id}/cancel",
    summary: "Interrupt the running turn (no-op when idle)",
    responses: { 204: { description: "Cancelled (or nothing was running)" } },
    handler: async (ctx) => {
      const s = ctx.state.sessions.get(ctx.params.id!);
      await noBody(ctx);
      s.cancel();
      return NO_CONTENT();
    },
  },
  {
    method: "GET",
    path: "/v1/sessions/{id}/permissions",
    summary: "Pending permission requests",
    responses: { 200: ok(S.PermissionList) },
    handler: async ({ state, params }) => json(200, { permissions: state.sessions.get(params.id!).permissions.list() }),
  },
  {
    method: "POST",
    path: "/v1/sessions/{id}/permissions/{request_id}",
    summary: "Answer a permission request: 204, or with always: true {allowed, persisted, error?}",
    body: S.PermissionAnswerBody,
    responses: { 204: { description: "Answered" }, 200: ok(S.PermissionAlwaysResult, "Answered with always") },
    handler: async ({ state, req, params }) => {
      const s = state.sessions.get(params.id!);
      const body = await readJson(req, S.PermissionAnswerBody);
      const result = await s.permissions.answer(s.agent, params.request_id!, body);
      return result ? json(200, result) : NO_CONTENT();
    },
  },
  {
    method: "POST",
    path: "/v1/sessions/{id}/compact",
    summary: "Compact the context now: the summary and before/after/saved token metrics (events go to the stream)",
    responses: { 200: ok(S.CompactResult) },
    handler: async (ctx) => {
      const s = ctx.state.sessions.get(ctx.params.id!);
      await noBody(ctx);
      const result = await s.exclusive("compact", async () => {
        try {
          return await s.agent.compact("manual", (e) => s.bus.publish(e));
        } catch (err) {
          if (s.agent.messages.length === 0) throw new ApiError(409, "conflict", "nothing to compact yet: send a prompt first");
          throw new ApiError(502, "model_error", `compaction failed: ${errorText(err)}`);
        }
      });
      return json(200, result);
    },
  },
  {
    method: "POST",
    path: "/v1/sessions/{id}/undo",
    summary: "Restore the files of the newest turn that changed any",
    responses: { 200: ok(S.UndoResult) },
    handler: async (ctx) => {
      const s = ctx.state.sessions.get(ctx.params.id!);
      await noBody(ctx);
      const restored = await s.exclusive("undo", async () => {
        const paths = await s.agent.checkpoints.undo();
        // §8: tell the model which files changed under it so it reads them again
        if (paths.length) s.agent.addNote(`/undo restored these files to their state before the last turn that changed them: ${paths.join(", ")}`);
        return paths;
      });
      return json(200, { restored });
    },
  },
  {
    method: "POST",
    path: "/v1/sessions/{id}/clear",
    summary: "Start a fresh context in the same session",
    responses: { 204: { description: "Cleared" } },
    handler: async (ctx) => {
      const s = ctx.state.sessions.get(ctx.params.id!);
      await noBody(ctx);
      await s.exclusive("clear", async () => s.agent.clear());
      return NO_CONTENT();
    },
  },
  {
    method: "GET",
    path: "/v1/sessions/{id}/tasks",
    summary: "Background tasks of the session",
    responses: { 200: ok(S.TaskList) },
    handler: async ({ state, params }) => {
      state.sessions.get(params.id!);
      return json(200, { tasks: [] });
    },
  },
  {
    method: "DELETE",
    path: "/v1/sessions/{id}/tasks/{task_id}",
    summary: "Stop a background task",
    responses: { 204: { description: "Stopped" } },
    handler: async ({ state, params }) => {
      state.sessions.get(params.id!);
      throw new ApiError(404, "not_found", `no background task ${params.task_id} in session ${params.id}: GET …/tasks lists them`);
    },
  },
];

/** `/v1/sessions/{id}` → `/v1/sessions/:id` (the router's syntax). */
export function routerPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1");
}

/** A matcher for an OpenAPI-style path; returns the decoded parameters or undefined. */
export function matchPath(path: string, pathname: string): Record<string, string> | undefined {
  const names: string[] = [];
  const re = new RegExp(`^${path.replace(/\{(\w+)\}/g, (_, n: string) => (names.push(n), "([^/]+)"))}$`);
  const m = re.exec(pathname);
  if (!m) return undefined;
  const out: Record<string, string> = {};
  names.forEach((n, i) => {
    try {
      out[n] = decodeURIComponent(m[i + 1]!);
    } catch {
      out[n] = m[i + 1]!;
    }
  });
  return out;
}
