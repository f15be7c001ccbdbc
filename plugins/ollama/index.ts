/**
 * The `ollama` provider plugin: local (or ollama.com) models over Ollama's native `/api/chat`.
 * Registering is free; the adapter is imported on the first `create`.
 */
import { definePlugin, type ProviderFactory } from "../../kernel/index.js";

/** Factory for `ollama/<model>` and custom `providers.<name>` entries with `type: "ollama"`. */
export const ollamaFactory: ProviderFactory = {
  name: "ollama",
  type: "ollama",
  keyEnv: [],
  baseUrlEnv: ["OLLAMA_HOST"],
  defaultBaseUrl: "http://localhost:11434",
  schemelessBaseUrl: true,
  stallTimeout: 900,
  async create(config) {
    const { OllamaProvider } = await import("./provider.js");
    return new OllamaProvider(config);
  },
};

export default definePlugin({
  name: "ollama",
  description: "Local models through Ollama's native API",
  setup(ctx) {
    ctx.providers.register(ollamaFactory);
  },
});
