/**
 * The `openai` provider plugin: GPT models over the OpenAI Responses API, stateless. Registering
 * is free; the adapter is imported on the first `create`.
 */
import { definePlugin, type ProviderFactory } from "../../kernel/index.js";
import { OPENAI_MODELS } from "./catalog.js";

/** Factory for `openai/<model>` and custom `providers.<name>` entries with `type: "openai"`. */
export const openaiFactory: ProviderFactory = {
  name: "openai",
  type: "openai",
  keyEnv: ["OPENAI_API_KEY"],
  baseUrlEnv: ["OPENAI_BASE_URL"],
  defaultBaseUrl: "https://api.openai.com/v1",
  stallTimeout: 300,
  models: OPENAI_MODELS,
  async create(config) {
    const { ResponsesProvider } = await import("./provider.js");
    return new ResponsesProvider(config);
  },
};

export default definePlugin({
  name: "openai",
  description: "GPT models through the OpenAI Responses API",
  setup(ctx) {
    ctx.providers.register(openaiFactory);
  },
});
