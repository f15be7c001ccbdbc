/**
 * Shared HTTP machinery for provider adapters (retries, SSE/NDJSON decoding, error
 * classification, stall guard). STUB: being written.
 */
export {};
