/**
 * The names of the default preset's plugins, kept beside it so `larik --version` can list them
 * without loading any plugin. A test checks it matches `default.ts`.
 */
export const DEFAULT_PLUGIN_NAMES: readonly string[] = [
  "sessions-jsonl",
  "anthropic",
  "openai-compatible",
  "openai",
  "gemini",
  "ollama",
  "core-tools",
  "sandbox-bubblewrap",
  "sandbox-seatbelt",
  "hooks",
  "skills",
  "mcp",
  "commands",
  "headless",
  "tui",
  "server",
];
