/**
 * The default preset's plugins, name and description, kept beside it so `larik --version` can
 * list them without loading any plugin. A test checks it matches `default.ts`.
 */
export const DEFAULT_PLUGINS: readonly (readonly [name: string, description: string])[] = [
  ["sessions-jsonl", "Stores sessions as append-only JSONL files under the data directory"],
  ["anthropic", "Claude models through the Anthropic Messages API"],
  ["openai-compatible", "OpenAI Chat Completions servers and presets (OpenRouter, Groq, DeepSeek, xAI, Mistral, Together, LM Studio, NVIDIA NIM)"],
  ["openai", "GPT models through the OpenAI Responses API"],
  ["gemini", "Gemini models through the Gemini API"],
  ["ollama", "Local models through Ollama's native API"],
  ["core-tools", "Built-in tools: read, write, edit, multi_edit, write_files, glob, grep, bash, bash_output, kill_bash, todo_write, raw_output"],
  ["sandbox-bubblewrap", "Runs bash in a bubblewrap sandbox on Linux: read-only /, writable project, private $TMPDIR, no network, protected paths"],
  ["sandbox-seatbelt", "Runs bash in a Seatbelt sandbox on macOS: writable project, private $TMPDIR, loopback network only, protected paths"],
  ["hooks", "Claude Code compatible shell hooks (settings `hooks`)"],
  ["skills", "Skills (SKILL.md) and custom commands (commands/*.md)"],
  ["mcp", "MCP servers: tools, resources and prompts (stdio, streamable HTTP, SSE)"],
  ["commands", "Built-in slash commands: /model, /mode, /undo, /cost, /fork, /rewind, /export, …"],
  ["headless", "Headless print mode: larik -p"],
  ["tui", "Interactive terminal UI: larik in a terminal"],
  ["server", "HTTP + SSE API over many sessions: larik serve"],
];
