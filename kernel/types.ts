/**
 * The neutral model types every provider adapter maps to and from.
 *
 * Two roles only: tool results are blocks inside user messages (adapters whose API has a
 * `tool` role split them). `Message.model` and `Block.provider` record which model and
 * provider produced a block, so vendor state (thinking signatures, opaque reasoning) is
 * replayed only to the producer (LARIK-REFERENCE §10, invariant 11).
 *
 * Field names follow the session file format of LARIK-REFERENCE §7, so a message is
 * stored exactly as it is held in memory.
 */
import * as z from "zod/mini";
import { lazySchema } from "./kit/lazy-schema.js";

// Each schema is a lazySchema: built at its first use, not at import, which keeps zod and
// these ~100 zod objects off the start-up path (bench/startup.mjs).

/** An image carried in a message or a tool result: base64 `data` with its MIME type. */
export const ImageSchema = lazySchema(() =>
  z.object({
    media_type: z.string(),
    data: z.string(),
  }),
);
/** See {@link ImageSchema}. */
export type Image = z.infer<typeof ImageSchema>;

/** Plain text. `attachment` names where attached text came from (a path, `!cmd`); display only. */
export const TextBlockSchema = lazySchema(() =>
  z.object({
    type: z.literal("text"),
    text: z.string(),
    attachment: z.optional(z.string()),
    /** Vendor signature on a text part (Gemini `thoughtSignature`); replayed to the producer only. */
    signature: z.optional(z.string()),
    provider: z.optional(z.string()),
  }),
);
/** Model reasoning. `redacted` blocks carry their opaque payload in `signature`. */
export const ThinkingBlockSchema = lazySchema(() =>
  z.object({
    type: z.literal("thinking"),
    text: z.string(),
    signature: z.optional(z.string()),
    redacted: z.optional(z.boolean()),
    /** Time from request sent to first answer text or tool call, in ms. */
    duration_ms: z.optional(z.number()),
    provider: z.optional(z.string()),
    /** True for display-only summaries that must never be sent back (Gemini thought summaries). */
    display_only: z.optional(z.boolean()),
  }),
);
/** A call the model asks the agent to run. `input` is the parsed JSON object. */
export const ToolUseBlockSchema = lazySchema(() =>
  z.object({
    type: z.literal("tool_use"),
    id: z.string(),
    name: z.string(),
    input: z.unknown(),
    signature: z.optional(z.string()),
    provider: z.optional(z.string()),
    /** Set when the provider delivered arguments that were not valid JSON (kept verbatim). */
    raw_input: z.optional(z.string()),
  }),
);
/** The answer to one tool_use, matched by `id` (the tool_use id). */
export const ToolResultBlockSchema = lazySchema(() =>
  z.object({
    type: z.literal("tool_result"),
    id: z.string(),
    content: z.string(),
    is_error: z.optional(z.boolean()),
    images: z.optional(z.array(ImageSchema)),
  }),
);
/**
 * An image the user attached to a prompt (`@shot.png`): base64 `data` with its MIME type;
 * `attachment` names the file (display only).
 */
export const ImageBlockSchema = lazySchema(() =>
  z.object({
    type: z.literal("image"),
    media_type: z.string(),
    data: z.string(),
    attachment: z.optional(z.string()),
  }),
);
/** Vendor state with no neutral meaning (encrypted reasoning); replayed verbatim to the producer. */
export const OpaqueBlockSchema = lazySchema(() =>
  z.object({
    type: z.literal("opaque"),
    provider: z.string(),
    raw: z.unknown(),
  }),
);

/**
 * One content block of a message, discriminated by `type`; stored as is in the session file
 * (LARIK-REFERENCE §7).
 */
export const BlockSchema = lazySchema(() =>
  z.discriminatedUnion("type", [
    TextBlockSchema,
    ThinkingBlockSchema,
    ToolUseBlockSchema,
    ToolResultBlockSchema,
    ImageBlockSchema,
    OpaqueBlockSchema,
  ]),
);
/** See {@link BlockSchema}. */
export type Block = z.infer<typeof BlockSchema>;
/** See {@link TextBlockSchema}. */
export type TextBlock = z.infer<typeof TextBlockSchema>;
/** See {@link ThinkingBlockSchema}. */
export type ThinkingBlock = z.infer<typeof ThinkingBlockSchema>;
/** See {@link ToolUseBlockSchema}. */
export type ToolUseBlock = z.infer<typeof ToolUseBlockSchema>;
/** See {@link ToolResultBlockSchema}. */
export type ToolResultBlock = z.infer<typeof ToolResultBlockSchema>;
/** See {@link OpaqueBlockSchema}. */
export type OpaqueBlock = z.infer<typeof OpaqueBlockSchema>;

/**
 * One message of the transcript: `user` (prompts, tool results) or `assistant` (the assembled
 * reply), as held in memory and stored in the session file (LARIK-REFERENCE §7).
 */
export const MessageSchema = lazySchema(() =>
  z.object({
    role: z.enum(["user", "assistant"]),
    blocks: z.array(BlockSchema),
    /** The model that produced an assistant message (after fallback: the one that answered). */
    model: z.optional(z.string()),
  }),
);
/** See {@link MessageSchema}. */
export type Message = z.infer<typeof MessageSchema>;

/**
 * Token counts of one request. `input` excludes cached tokens: the whole prompt is
 * `input + cache_read + cache_write` tokens.
 */
export const UsageSchema = lazySchema(() =>
  z.object({
    input: z.number(),
    output: z.number(),
    cache_read: z.number(),
    cache_write: z.number(),
  }),
);
/** See {@link UsageSchema}; every field counts tokens. */
export type Usage = z.infer<typeof UsageSchema>;

/** A {@link Usage} of zero tokens, a new object each call. */
export const emptyUsage = (): Usage => ({ input: 0, output: 0, cache_read: 0, cache_write: 0 });

/** The field-wise sum of two {@link Usage} counts (tokens), as a new object; neither is changed. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cache_read: a.cache_read + b.cache_read,
    cache_write: a.cache_write + b.cache_write,
  };
}

/** A tool as advertised to a model: JSON Schema of its input (draft 2020-12 subset). */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** Reasoning effort requested with `--effort` (LARIK-REFERENCE §1). */
export type Effort = "low" | "medium" | "high" | "xhigh" | "max";
/** The accepted `--effort` values, lowest first; what the flag and `/effort` check against. */
export const EFFORTS: readonly Effort[] = ["low", "medium", "high", "xhigh", "max"];

/** One model request, provider neutral. */
export interface ModelRequest {
  /** Model id as the provider knows it (the part after `provider/`). */
  model: string;
  system: string;
  tools: ToolSpec[];
  messages: Message[];
  /** Output cap in tokens; the adapter picks a default when absent. */
  max_tokens?: number;
  effort?: Effort;
  /** Stable per conversation; used for prompt-cache keys where an API takes one. */
  session_id?: string;
  signal?: AbortSignal;
}

/** Why a model stopped producing output (provider-normalized). */
export type ModelStopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal" | "pause_turn" | "error";

/**
 * Events of one streamed response. Deltas are display only; exactly one `done` event carries
 * the assembled message, which is the source of truth stored in the transcript (invariant 10).
 */
export type StreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; text: string }
  | { type: "tool_use_start"; id: string; name: string }
  | { type: "notice"; text: string }
  | { type: "done"; message: Message; usage: Usage; stop_reason: ModelStopReason };

/**
 * A model API adapter. `stream` yields display deltas then exactly one `done`; failures are
 * thrown as {@link ProviderError}. Cancellation is through `request.signal`.
 */
export interface Provider {
  /** Provider name as used in specs (`anthropic`, `openrouter`, a custom `providers.<name>`). */
  readonly name: string;
  stream(request: ModelRequest): AsyncIterable<StreamEvent>;
  /** Optional model prober for local servers: the loaded context window in tokens. */
  contextWindow?(model: string): Promise<number | undefined>;
  /** Optional: whether the model can call tools (false → a clear error before sending). */
  supportsTools?(model: string): Promise<boolean | undefined>;
}

/** Classes of provider failure, used for retry, fallback and compaction decisions. */
export type ProviderErrorKind =
  | "context_overflow"
  | "auth"
  | "rate_limit"
  | "quota"
  | "too_large"
  | "overloaded"
  | "server"
  | "bad_request"
  | "not_found"
  | "capability"
  | "network"
  | "stall"
  | "truncated";

/**
 * A normalized provider error. `retryable` says whether repeating the same request may succeed;
 * `retry_after_ms` comes from `retry-after-ms`, `Retry-After` or a body hint.
 */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly status?: number;
  readonly retryable: boolean;
  readonly retry_after_ms?: number;
  readonly provider: string;
  readonly request_id?: string;
  constructor(opts: {
    provider: string;
    kind: ProviderErrorKind;
    message: string;
    status?: number;
    retryable?: boolean;
    retry_after_ms?: number;
    request_id?: string;
  }) {
    super(opts.message);
    this.name = "ProviderError";
    this.provider = opts.provider;
    this.kind = opts.kind;
    this.status = opts.status;
    this.retryable = opts.retryable ?? false;
    this.retry_after_ms = opts.retry_after_ms;
    this.request_id = opts.request_id;
  }
}
