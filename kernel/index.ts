/**
 * The kernel's only public entry. Plugins import from here and nowhere else in `kernel/`.
 */
export * from "./types.js";
export * from "./events.js";
export * from "./tools.js";
export * from "./lazy-schema.js";
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
export * from "./output.js";
export * from "./paths.js";
export * from "./prompt.js";
export * from "./time.js";
export * from "./pid.js";
export * from "./stop-signals.js";
export * from "./pipe-writer.js";
export * from "./nearest-name.js";
export { Channel } from "./channel.js";
export { Agent, type AgentOptions, type CompactResult } from "./agent.js";
export { ConfigError, errorText } from "./one-line.js";
export { Host, type HostOptions } from "./host.js";
// provider-errors.ts and stream-read.ts also export helpers the other provider HTTP files share
export { classifyHttpError, type HttpErrorInfo, isContextOverflow, parseRetryAfter, streamError, truncatedError } from "./provider-errors.js";
export * from "./http-retry.js";
export { readChunks, readNdjson, readNdjsonBatches, readSse, readSseBatches, type SseEvent, type StreamReadOptions } from "./stream-read.js";
export * from "./stream-decoder.js";
export * from "./tool-call-salvage.js";
export * from "./cli-args.js";
export * from "./mentions.js";
export * from "./compaction.js";
export * from "./sandbox.js";
export * from "./sandbox-env.js";
