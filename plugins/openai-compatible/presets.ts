/**
 * The Chat Completions presets of LARIK-REFERENCE §10: one factory each, all sharing the
 * `openai-compatible` adapter. Only data here, so registering them costs nothing.
 */

/** How a preset differs from plain OpenAI Chat Completions. */
export interface ChatPreset {
  /** Provider name used in specs (`groq/llama-3.3-70b-versatile`). */
  name: string;
  description: string;
  /** Variables holding the key; empty for servers that need none. */
  keyEnv: string[];
  /** Variables that move the endpoint. */
  baseUrlEnv?: string[];
  /** Base URL ending before `/chat/completions`. */
  baseUrl: string;
  /** Default stall timeout in seconds. */
  stallTimeout: number;
  /**
   * How `--effort` is sent: `reasoning_effort` (OpenAI's field), `openrouter`
   * (`reasoning: {effort}`), or `none` (the server has no portable switch; effort is ignored).
   */
  effort: "reasoning_effort" | "openrouter" | "none";
  /** Send `stream_options.include_usage` (Mistral rejects it with a 422 and reports usage anyway). */
  streamOptions: boolean;
  /**
   * Field for the output cap. `auto`: `max_completion_tokens` on api.openai.com (reasoning
   * models reject `max_tokens`), `max_tokens` elsewhere (what most compatible servers know).
   */
  maxTokensField: "auto" | "max_tokens" | "max_completion_tokens";
  /**
   * Echo this model's own earlier reasoning as `reasoning_content` on assistant messages. Servers
   * differ, so it is opt-in per preset: DeepSeek's thinking mode requires it on every assistant
   * message that made tool calls (HTTP 400 "The `reasoning_content` in the thinking mode must be
   * passed back to the API" otherwise; api-docs.deepseek.com/guides/thinking_mode#tool-calls) and
   * ignores it elsewhere; the first deepseek-reasoner rejected it, which is why it is not on
   * everywhere.
   */
  replayReasoning: boolean;
  /**
   * Tool-call ids the server accepts in requests. `alnum9`: exactly 9 characters a-z, A-Z, 0-9
   * (Mistral answers any other id with HTTP 400 "Tool call id was … but must be a-z, A-Z, 0-9,
   * with a length of 9"), so ids from other providers or minted by Larik are mapped (see
   * request.ts). Default: ids are sent as they are.
   */
  toolCallIds?: "alnum9";
}

const base = { effort: "none", streamOptions: true, maxTokensField: "max_tokens", replayReasoning: false, stallTimeout: 300 } as const;

/** The generic entry first: custom `providers.<name>` with `type: "openai-compatible"` resolve to it. */
export const CHAT_PRESETS: ChatPreset[] = [
  {
    ...base,
    name: "openai-compatible",
    description: "Any OpenAI Chat Completions server (OPENAI_BASE_URL, or providers.<name>.base_url)",
    keyEnv: ["OPENAI_API_KEY"],
    baseUrlEnv: ["OPENAI_BASE_URL"],
    baseUrl: "https://api.openai.com/v1",
    stallTimeout: 900,
    effort: "reasoning_effort",
    maxTokensField: "auto",
  },
  { ...base, name: "openrouter", description: "OpenRouter", keyEnv: ["OPENROUTER_API_KEY"], baseUrl: "https://openrouter.ai/api/v1", effort: "openrouter" },
  { ...base, name: "groq", description: "Groq", keyEnv: ["GROQ_API_KEY"], baseUrl: "https://api.groq.com/openai/v1" },
  { ...base, name: "deepseek", description: "DeepSeek", keyEnv: ["DEEPSEEK_API_KEY"], baseUrl: "https://api.deepseek.com", replayReasoning: true },
  { ...base, name: "xai", description: "xAI (Grok)", keyEnv: ["XAI_API_KEY"], baseUrl: "https://api.x.ai/v1" },
  { ...base, name: "mistral", description: "Mistral", keyEnv: ["MISTRAL_API_KEY"], baseUrl: "https://api.mistral.ai/v1", streamOptions: false, toolCallIds: "alnum9" },
  { ...base, name: "together", description: "Together AI", keyEnv: ["TOGETHER_API_KEY"], baseUrl: "https://api.together.xyz/v1" },
  { ...base, name: "lmstudio", description: "LM Studio's local server", keyEnv: [], baseUrl: "http://localhost:1234/v1", stallTimeout: 900 },
  { ...base, name: "nvidia-nim", description: "NVIDIA NIM", keyEnv: ["NVIDIA_API_KEY"], baseUrl: "https://integrate.api.nvidia.com/v1" },
];

/** The generic preset, used for custom providers whose name is not a preset. */
export const GENERIC_PRESET: ChatPreset = CHAT_PRESETS[0]!;
