/**
 * The `gemini` provider plugin: Gemini models over the Gemini API (`streamGenerateContent` as
 * SSE). Registering is free; the adapter is imported on the first `create`.
 */
import { definePlugin, type ProviderFactory } from "../../kernel/index.js";
import { GEMINI_MODELS } from "./catalog.js";

/** Factory for `gemini/<model>` and custom `providers.<name>` entries with `type: "gemini"`. */
export const geminiFactory: ProviderFactory = {
  name: "gemini",
  type: "gemini",
  keyEnv: ["GEMINI_API_KEY"],
  baseUrlEnv: ["GOOGLE_GEMINI_BASE_URL"],
  defaultBaseUrl: "https://generativelanguage.googleapis.com",
  stallTimeout: 300,
  models: GEMINI_MODELS,
  async create(config) {
    const { GeminiProvider } = await import("./provider.js");
    return new GeminiProvider(config);
  },
};

export default definePlugin({
  name: "gemini",
  description: "Gemini models through the Gemini API",
  setup(ctx) {
    ctx.providers.register(geminiFactory);
  },
});
