/**
 * The kernel's only public entry. Plugins import from here and nowhere else in `kernel/`.
 */
export * from "./types.js";
export * from "./events.js";
export * from "./tools.js";
export * from "./kit/lazy-schema.js";
export * from "./registry.js";
export * from "./registries.js";
export * from "./hooks.js";
export * from "./plugin.js";
export * from "./session.js";
export * from "./permission.js";
export * from "./config.js";
// internal modules' part of the public API (docs/config.md, "API for front ends")
export { findPersonalConfig, findProjectConfig, hashConfigContent } from "./config-files.js";
export type { ConfigApproval } from "./config-approval.js";
export * from "./models.js";
export * from "./fallback.js";
export * from "./checkpoint.js";
export * from "./kit/output.js";
export * from "./paths.js";
export * from "./prompt.js";
export * from "./kit/time.js";
export * from "./kit/pid.js";
export * from "./kit/stop-signals.js";
export * from "./kit/pipe-writer.js";
export * from "./kit/startup-probe.js";
export * from "./kit/nearest-name.js";
export { Channel } from "./kit/channel.js";
export { Agent, type AgentOptions } from "./agent.js";
export { ConfigError, errorText } from "./kit/one-line.js";
export { Host, type HostOptions } from "./host.js";
// provider-errors.ts and stream-read.ts also export helpers the other provider HTTP files share
export { classifyHttpError, type HttpErrorInfo, isContextOverflow, parseRetryAfter, streamError, truncatedError } from "./kit/provider-errors.js";
export * from "./kit/http-retry.js";
export { readChunks, readNdjson, readNdjsonBatches, readSse, readSseBatches, type SseEvent, type StreamReadOptions } from "./kit/stream-read.js";
export * from "./kit/stream-decoder.js";
export * from "./kit/tool-call-salvage.js";
export * from "./kit/cli-args.js";
export * from "./kit/mentions.js";
export * from "./kit/images.js";
// the pure helpers and the result type; the compaction steps themselves are the loop's
export { changedFiles, type CompactResult, estimateTokens, extractSummary } from "./compaction.js";
export * from "./sandbox.js";
export * from "./kit/sandbox-backend.js";
export * from "./kit/sandbox-env.js";
