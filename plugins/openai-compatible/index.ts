/**
 * The `openai-compatible` provider plugin: any OpenAI Chat Completions server, plus the presets
 * `openrouter`, `groq`, `deepseek`, `xai`, `mistral`, `together`, `lmstudio`, `nvidia-nim`
 * (LARIK-REFERENCE §10). Every factory has `type: "openai-compatible"`, and the generic one is
 * registered first, so a custom `providers.<name>` with that type resolves to it.
 */
import { definePlugin, type ProviderFactory } from "../../kernel/index.js";
import { CHAT_PRESETS, type ChatPreset } from "./presets.js";

/**
 * The factory of one preset; the adapter is imported on the first `create`. `lmstudio` gets the
 * model prober (loaded context window, tool support) of lmstudio.ts.
 */
export function chatFactory(preset: ChatPreset): ProviderFactory {
  return {
    name: preset.name,
    type: "openai-compatible",
    keyEnv: preset.keyEnv,
    baseUrlEnv: preset.baseUrlEnv,
    defaultBaseUrl: preset.baseUrl,
    stallTimeout: preset.stallTimeout,
    async create(config) {
      if (preset.name === "lmstudio") {
        // custom providers.<name> with type "lmstudio" resolve to this factory too
        const { LmStudioProvider } = await import("./lmstudio.js");
        return new LmStudioProvider(config, preset);
      }
      const { ChatCompletionsProvider } = await import("./provider.js");
      return new ChatCompletionsProvider(config, preset);
    },
  };
}

/** All factories this plugin registers, generic first. */
export const chatFactories: ProviderFactory[] = CHAT_PRESETS.map(chatFactory);

export default definePlugin({
  name: "openai-compatible",
  description: "OpenAI Chat Completions servers and presets (OpenRouter, Groq, DeepSeek, xAI, Mistral, Together, LM Studio, NVIDIA NIM)",
  setup(ctx) {
    for (const f of chatFactories) ctx.providers.register(f);
  },
});
