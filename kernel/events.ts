/**
 * The agent event contract (LARIK-REFERENCE §22). Every event the loop emits is one object
 * validated by {@link AgentEventSchema}; `-p --output json` writes one per line and the
 * server sends the same objects over SSE. A front end drains events until `done` and answers
 * every `permission_request` exactly once (DESIGN.md, "The event contract").
 */
import * as z from "zod/mini";
import { lazySchema } from "./kit/lazy-schema.js";

// Each schema is a lazySchema: built at its first use, not at import, which keeps zod and
// these ~100 zod objects off the start-up path (bench/startup.mjs).
import { MessageSchema, UsageSchema } from "./types.js";

/** The fields every event may carry; a function, so that zod is used only when a schema is built. */
const base = () => ({
  /** Label of a subagent whose events are forwarded; absent for the main agent. */
  agent: z.optional(z.string()),
  model: z.optional(z.string()),
});

/** Per-request and running totals, shaped as §22's `usage` object. Costs in USD. */
export const UsageInfoSchema = lazySchema(() =>
  z.object({
    model: z.string(),
    /** Tokens of this request. */
    turn: UsageSchema,
    /** Tokens of the whole session so far. */
    total: UsageSchema,
    /** Session cost so far in USD (null when the model is unpriced). */
    cost_usd: z.nullable(z.number()),
    /** Cost of this request in USD. */
    request_cost_usd: z.optional(z.nullable(z.number())),
    /** Prompt size of this request in tokens (input + cache read + cache write). */
    context_tokens: z.number(),
    /** The model's context window in tokens. */
    context_window: z.number(),
    /** ms from sending this request to the end of its answer. */
    request_ms: z.optional(z.number()),
    /** ms from sending the request to the first answer text or tool call (thinking counts as waiting). */
    ttft_ms: z.optional(z.number()),
    /** Per-model split for `/cost`: tokens and USD by `provider/model`. */
    by_model: z.optional(z.record(z.string(), z.object({ usage: UsageSchema, cost_usd: z.nullable(z.number()), requests: z.number() }))),
    /** Compactions of this session so far, and the tokens they freed (estimates). */
    compactions: z.optional(z.number()),
    compaction_saved_tokens: z.optional(z.number()),
  }),
);
/** See {@link UsageInfoSchema}. */
export type UsageInfo = z.infer<typeof UsageInfoSchema>;

/**
 * Why a turn ended: `done.stop_reason` (LARIK-REFERENCE §2). `blocked` and `hook_stopped` come
 * from hooks; `loop` is the subagent loop guard's, which nothing emits yet.
 */
export const StopReasonSchema = lazySchema(() =>
  z.enum([
    "end_turn",
    "max_tokens",
    "refusal",
    "max_turns",
    "interrupted",
    "error",
    "blocked",
    "hook_stopped",
    "loop",
  ]),
);
/** See {@link StopReasonSchema}. */
export type StopReason = z.infer<typeof StopReasonSchema>;

/** A tool call waiting for the user's answer (§4). */
export const PermissionRequestEventSchema = lazySchema(() =>
  z.object({
    type: z.literal("permission_request"),
    /** Answer with `agent.respond(request_id, answer)`, exactly once. */
    request_id: z.string(),
    tool_id: z.string(),
    tool_name: z.string(),
    input: z.unknown(),
    /** The narrowest rule that "always allow" would save, e.g. `bash(npm test*)`. */
    suggested_rule: z.optional(z.string()),
    cwd: z.string(),
    /** The checker's one line on why it asks (the rule, mode or step that decided). */
    reason: z.optional(z.string()),
    /** Why auto mode's judge did not approve the call (§4); reserved, nothing sets it yet. */
    auto_reason: z.optional(z.string()),
    ...base(),
  }),
);

/**
 * Every event a turn emits, discriminated by `type` (§22's names and fields; docs/architecture.md
 * "The event contract" lists them). The loop validates each event against it before emitting.
 * `init` is no turn's: `-p --output json` prints it first, once the session is open, as Claude
 * Code's stream-json starts with `system`/`init`, so that a script learns the session id before
 * the run can be killed.
 */
export const AgentEventSchema = lazySchema(() =>
  z.discriminatedUnion("type", [
    z.object({
      type: z.literal("init"),
      /**
       * The session the run writes to (for `larik --resume <id>`); absent when none is stored
       * (no model could be opened: `larik -p /cost` with none configured).
       */
      session_id: z.optional(z.string()),
      /** The working directory. */
      cwd: z.string(),
      /** The permission mode the run starts in (LARIK-REFERENCE §4). */
      mode: z.string(),
      /** Also here: the run's model as `provider/model`, absent when none could be opened. */
      ...base(),
    }),
    z.object({ type: z.literal("text_delta"), text: z.string(), ...base() }),
    z.object({ type: z.literal("thinking_delta"), text: z.string(), ...base() }),
    z.object({ type: z.literal("tool_call_streaming"), tool_id: z.string(), tool_name: z.string(), ...base() }),
    z.object({
      type: z.literal("assistant_message"),
      /** The reply as stored in the transcript. */
      message: MessageSchema,
      /**
       * True for a reply cut short (the turn cancelled: a signal, `--timeout`, Esc; or the stream
       * failed): `message` holds the text received, then the marker text block the transcript
       * keeps (`[interrupted by user]`, `[interrupted: --timeout 5m reached]`, `[response cut off
       * by an error]`). Sent only when some text had arrived; absent on a finished reply.
       */
      partial: z.optional(z.literal(true)),
      ...base(),
    }),
    z.object({
      type: z.literal("tool_start"),
      tool_id: z.string(),
      tool_name: z.string(),
      input: z.unknown(),
      /**
       * The call was refused before it ran (unknown tool, arguments that are not JSON or do not
       * fit the tool's schema, a hook or the permission checker said no): its `tool_end`, with
       * the reason, follows at once. Absent for a call that runs.
       */
      refused: z.optional(z.literal(true)),
      ...base(),
    }),
    z.object({
      type: z.literal("tool_end"),
      tool_id: z.string(),
      tool_name: z.string(),
      input: z.unknown(),
      output: z.string(),
      display: z.optional(z.unknown()),
      is_error: z.boolean(),
      ...base(),
    }),
    PermissionRequestEventSchema,
    z.object({ type: z.literal("usage"), usage: UsageInfoSchema, ...base() }),
    z.object({
      type: z.literal("compacted"),
      summary: z.string(),
      compaction: z.object({
        trigger: z.enum(["auto", "manual", "overflow"]),
        before_tokens: z.number(),
        after_tokens: z.number(),
        saved_tokens: z.number(),
        estimated: z.optional(z.boolean()),
      }),
      ...base(),
    }),
    z.object({ type: z.literal("notice"), text: z.string(), ...base() }),
    z.object({ type: z.literal("error"), text: z.string(), ...base() }),
    z.object({
      type: z.literal("done"),
      stop_reason: StopReasonSchema,
      /** The session the turn was written to (for `larik --resume <id>`). */
      session_id: z.optional(z.string()),
      ...base(),
    }),
    z.object({
      type: z.literal("task_done"),
      tool_id: z.string(),
      output: z.string(),
      stop_reason: z.string(),
      ...base(),
    }),
  ]),
);
/** See {@link AgentEventSchema}. */
export type AgentEvent = z.infer<typeof AgentEventSchema>;
/** The `type` names of {@link AgentEvent}. */
export type AgentEventType = AgentEvent["type"];
/** The event of a given `type`. */
export type EventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/** The answer a front end gives to a `permission_request`. */
export interface PermissionAnswer {
  allow: boolean;
  /** Save the suggested rule to the private project settings (allow only). */
  always?: boolean;
  /** Feedback returned to the model as the tool result when denying. */
  reason?: string;
  /**
   * True when no person answered (headless mode, a policy): the model is told the call was
   * denied, not that "the user" denied it.
   */
  automatic?: boolean;
}
