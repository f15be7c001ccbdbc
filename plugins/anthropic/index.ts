/**
 * The `anthropic` provider plugin: Claude models over the Messages API. Registering is free;
 * the adapter is imported on the first `create`.
 */
import { definePlugin, type ProviderFactory } from "../../kernel/index.js";
import { ANTHROPIC_MODELS } from "./catalog.js";

/** Factory for `anthropic/<model>` and custom `providers.<name>` entries with `type: "anthropic"`. */
export const anthropicFactory: ProviderFactory = {
  name: "anthropic",
  type: "anthropic",
  keyEnv: ["ANTHROPIC_API_KEY"],
  baseUrlEnv: ["ANTHROPIC_BASE_URL"],
  defaultBaseUrl: "https://api.anthropic.com",
  stallTimeout: 300,
  models: ANTHROPIC_MODELS,
  async create(config) {
    const { AnthropicProvider } = await import("./provider.js");
    return new AnthropicProvider(config);
  },
};

export default definePlugin({
  name: "anthropic",
  description: "Claude models through the Anthropic Messages API",
  setup(ctx) {
    ctx.providers.register(anthropicFactory);
  },
});
