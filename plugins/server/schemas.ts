/**
 * The zod schemas of the server API: request bodies (validated on every request) and response
 * shapes (used for the OpenAPI document). Field names follow LARIK-REFERENCE §21 and §22.
 */
import { z } from "zod";
import { AgentEventSchema, EFFORTS, PermissionRequestEventSchema, MessageSchema, PERMISSION_MODES, UsageSchema } from "../../kernel/index.js";

const Mode = z.enum(PERMISSION_MODES as unknown as [string, ...string[]]).describe("permission mode (§4)");
const Effort = z.enum(EFFORTS as unknown as [string, ...string[]]).describe("reasoning effort");

// ---- request bodies -------------------------------------------------------------------------

/** `POST /v1/sessions`: a new session, or `{resume}` / `{continue: true}` (optionally `fork`). */
export const CreateSessionBody = z.strictObject({
  model: z.string().min(1).optional().describe("provider/model, bare id or role; default: the server's --model"),
  effort: Effort.optional(),
  mode: Mode.optional(),
  resume: z.string().min(1).optional().describe("session id or unique prefix to resume"),
  continue: z.boolean().optional().describe("resume the newest session of the server's directory"),
  fork: z.boolean().optional().describe("with resume/continue: branch into a new session"),
});

/** `PATCH /v1/sessions/{id}`: `model`/`effort` need an idle session; `mode` applies mid-run. */
export const PatchSessionBody = z.strictObject({
  model: z.string().min(1).optional(),
  effort: Effort.optional(),
  mode: Mode.optional(),
});

/** `POST …/prompt`. */
export const PromptBody = z.strictObject({
  text: z.string().min(1).describe("the prompt"),
  wait: z.boolean().optional().describe("answer with the final result instead of 202"),
});

/** `POST …/fork`: `at` must be a prompt index of `GET …/messages`; absent = everything. */
export const ForkBody = z.strictObject({
  at: z.number().int().min(0).optional(),
});

/** `POST …/permissions/{request_id}`. */
export const PermissionAnswerBody = z.strictObject({
  allow: z.boolean(),
  always: z.boolean().optional().describe("save the suggested rule privately (allow only)"),
  reason: z.string().optional().describe("feedback returned to the model when denying"),
});

// ---- responses ------------------------------------------------------------------------------

export const ErrorResponse = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});

export const HealthResponse = z.object({ ok: z.literal(true) });

export const InfoResponse = z.object({
  version: z.string(),
  cwd: z.string(),
  project_root: z.string(),
  providers: z.array(z.string()),
  plugins: z.array(z.string()),
  session_store: z.string().nullable(),
  sandbox: z.object({ backends: z.array(z.string()) }),
  defaults: z.object({ model: z.string().optional(), effort: z.string().optional(), mode: z.string().optional() }),
});

export const SessionSummaryResponse = z.object({
  id: z.string(),
  title: z.string(),
  updated: z.number().optional().describe("ms since epoch of the last write"),
  location: z.string(),
  fork_of: z.string().optional(),
  loaded: z.boolean(),
  busy: z.boolean(),
});

export const SessionListResponse = z.object({ sessions: z.array(SessionSummaryResponse) });

const PermissionRequestEvent = PermissionRequestEventSchema;

const PendingPermission = z.object({
  request_id: z.string(),
  seq: z.number().describe("seq of the permission_request event"),
  event: PermissionRequestEvent,
});

export const SessionInfoResponse = z.object({
  id: z.string(),
  title: z.string(),
  location: z.string(),
  loaded: z.boolean(),
  busy: z.boolean(),
  busy_with: z.enum(["prompt", "compact", "undo", "clear"]).optional(),
  model: z.string().optional(),
  mode: z.string().optional(),
  effort: z.string().optional(),
  fork_of: z.string().optional(),
  last_seq: z.number().optional().describe("seq of the newest event"),
  usage: z
    .object({
      total: UsageSchema,
      cost_usd: z.number().nullable(),
      by_model: z.record(z.string(), z.object({ usage: UsageSchema, requests: z.number(), cost_usd: z.number().nullable() })),
    })
    .optional(),
  permissions: z.array(PendingPermission).optional(),
  tasks: z.array(z.unknown()).optional(),
});

export const ForkResponse = SessionInfoResponse.extend({
  prompt: z.string().optional().describe("the text of prompt `at`, to put back in the composer"),
  typed: z.string().optional().describe("when a slash command made prompt `at`: the command line typed (`/review main..HEAD`)"),
});

export const MessagesResponse = z.object({
  id: z.string(),
  messages: z.array(MessageSchema),
  prompts: z.array(
    z.object({
      index: z.number(),
      text: z.string().describe("the prompt as the model got it"),
      typed: z.string().optional().describe("when a slash command made the prompt: the command line typed (`/review main..HEAD`), what a list shows"),
    }),
  ),
});

export const PromptAccepted = z.object({
  after_seq: z.number().describe("subscribe with ?after=<after_seq> to receive this prompt's events"),
});

export const PromptResult = z.object({
  after_seq: z.number(),
  stop_reason: z.string(),
  text: z.string().describe("text of the last finished assistant message (not one marked partial)"),
  error: z.string().optional().describe("the last error event's text, if any"),
});

export const PermissionList = z.object({ permissions: z.array(PendingPermission) });

export const PermissionAlwaysResult = z.object({
  allowed: z.boolean(),
  persisted: z.boolean(),
  error: z.string().optional(),
});

export const TaskList = z.object({ tasks: z.array(z.unknown()) });

export const UndoResult = z.object({ restored: z.array(z.string()) });

export const CompactResult = z.object({
  summary: z.string(),
  trigger: z.enum(["auto", "manual", "overflow"]),
  before_tokens: z.number().describe("context size before, in tokens"),
  after_tokens: z.number().describe("estimated context size after, in tokens"),
  saved_tokens: z.number(),
});

// ---- SSE events -----------------------------------------------------------------------------

/** Events the server adds to the agent's own (§21). */
const StatusEvent = z.object({ type: z.literal("status"), busy: z.boolean(), busy_with: z.string().optional() });
const UserMessageEvent = z.object({ type: z.literal("user_message"), text: z.string() });
const PermissionResolvedEvent = z.object({
  type: z.literal("permission_resolved"),
  request_id: z.string(),
  outcome: z.enum(["allowed", "denied", "expired"]),
});
const SessionClosedEvent = z.object({ type: z.literal("session_closed"), reason: z.string() });

/**
 * The agent events a session's stream relays: every one of §22 but `init`, which no turn emits
 * (`-p --output json` prints it itself, before its turn). A client has what it carries without it:
 * `POST /v1/sessions` answers the session's id, model and mode, `GET /v1/info` the cwd.
 */
const RelayedAgentEvent = z.discriminatedUnion(
  "type",
  // propValues: the literal values of each option's discriminator, as zod reads them itself
  AgentEventSchema._zod.def.options.filter((o) => !o._zod.propValues?.type?.has("init")) as unknown as [typeof AgentEventSchema],
);

/** The `data:` of one SSE message: an agent event of a turn (§22) or a server event, plus seq and session. */
export const ServerEvent = z
  .union([RelayedAgentEvent, StatusEvent, UserMessageEvent, PermissionResolvedEvent, SessionClosedEvent])
  .and(z.object({ seq: z.number(), session: z.string() }));
