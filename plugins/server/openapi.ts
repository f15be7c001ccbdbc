/**
 * The OpenAPI 3.0 document of the server API, generated from the route table and its zod
 * schemas with `z.toJSONSchema(schema, { target: "openapi-3.0" })` (STACK.md gotcha 8).
 * Served at `GET /v1/openapi.json`; `docs/openapi.json` is a copy kept current by a test.
 */
import { z } from "zod";
import { ROUTES, type RouteResponse } from "./routes.js";
import * as S from "./schemas.js";

/** Schemas published under `components.schemas`, by name. */
const COMPONENTS: Record<string, z.ZodType> = {
  Error: S.ErrorResponse,
  Health: S.HealthResponse,
  Info: S.InfoResponse,
  SessionSummary: S.SessionSummaryResponse,
  SessionList: S.SessionListResponse,
  SessionInfo: S.SessionInfoResponse,
  Fork: S.ForkResponse,
  Messages: S.MessagesResponse,
  PromptAccepted: S.PromptAccepted,
  PromptResult: S.PromptResult,
  PermissionList: S.PermissionList,
  PermissionAlwaysResult: S.PermissionAlwaysResult,
  TaskList: S.TaskList,
  UndoResult: S.UndoResult,
  CompactResult: S.CompactResult,
  CreateSessionRequest: S.CreateSessionBody,
  PatchSessionRequest: S.PatchSessionBody,
  PromptRequest: S.PromptBody,
  ForkRequest: S.ForkBody,
  PermissionAnswerRequest: S.PermissionAnswerBody,
  ServerEvent: S.ServerEvent,
};

const ERRORS: Record<number, string> = {
  400: "Bad request: empty body, not one JSON value, or an invalid field",
  401: "Missing or wrong bearer token",
  403: "Host header is not localhost or a loopback address",
  404: "Unknown session, request or route",
  409: "The session is busy, or the request was already answered",
  413: "Body larger than 1 MiB",
};

function toSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { target: "openapi-3.0", io, unrepresentable: "any" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/** The `$ref` of a registered component, else the inline schema. */
function ref(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  for (const [name, s] of Object.entries(COMPONENTS)) if (s === schema) return { $ref: `#/components/schemas/${name}` };
  return toSchema(schema, io);
}

function response(r: RouteResponse): Record<string, unknown> {
  if (!r.schema) return { description: r.description };
  const media = r.sse ? "text/event-stream" : "application/json";
  return { description: r.description, content: { [media]: { schema: ref(r.schema, "output") } } };
}

/** Builds the document. Deterministic: the same build always gives the same JSON. */
export function buildOpenApi(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const query = (route.query ?? []).map((q) => ({ name: q.name, in: "query", required: false, description: q.description, schema: { type: "string" } }));
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(route.responses)) responses[status] = response(r);
    for (const [status, description] of Object.entries(ERRORS)) {
      if (route.auth === false && status === "401") continue;
      if (!route.body && (status === "413" || status === "400") && !route.query) continue;
      responses[status] ??= { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
    }
    const op: Record<string, unknown> = {
      operationId: operationId(route.method, route.path),
      summary: route.summary,
      ...(params.length || query.length ? { parameters: [...params, ...query] } : {}),
      ...(route.body ? { requestBody: { required: true, content: { "application/json": { schema: ref(route.body, "input") } } } } : {}),
      responses,
      ...(route.auth === false ? { security: [] } : route.query?.some((q) => q.name === "token") ? { security: [{ bearer: [] }, { queryToken: [] }] } : {}),
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = op;
  }
  const schemas: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(COMPONENTS)) schemas[name] = toSchema(s, name.endsWith("Request") ? "input" : "output");
  return {
    openapi: "3.0.3",
    info: {
      title: "Larik server API",
      version,
      description: "HTTP + SSE API of `larik serve` (LARIK-REFERENCE §21). Every error is {\"error\": {\"code\", \"message\"}}.",
    },
    servers: [{ url: "http://127.0.0.1:4096" }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "the token larik serve printed" },
        queryToken: { type: "apiKey", in: "query", name: "token", description: "events route only" },
      },
      schemas,
    },
  };
}

function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/v1\//, "")
    .replace(/\.json$/, "")
    .split("/")
    .map((p) => (p.startsWith("{") ? "" : p))
    .filter(Boolean);
  const name = words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join("");
  return `${method.toLowerCase()}${name[0]!.toUpperCase()}${name.slice(1)}${path.endsWith("}") && method !== "POST" ? "ById" : ""}`;
}
