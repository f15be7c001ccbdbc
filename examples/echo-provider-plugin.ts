// A third-party provider plugin: a model that answers with the user's last words, reversed.
// Shows the provider contract: display deltas, then exactly one `done` with the whole message.
import { definePlugin, type ModelRequest, type StreamEvent } from "larik";

export default definePlugin({
  name: "echo-provider",
  setup(ctx) {
    ctx.providers.register({
      name: "echo",
      keyEnv: [], // no key needed
      models: [{ provider: "echo", id: "parrot", context_window: 8192, max_output: 1024, input_price: 0, output_price: 0 }],
      // adapters are created lazily, when a model of this provider is first used
      create: () => ({
        name: "echo",
        async *stream(req: ModelRequest): AsyncIterable<StreamEvent> {
          const last = req.messages.at(-1)?.blocks.find((b) => b.type === "text");
          const reply = last && last.type === "text" ? [...last.text].reverse().join("") : "";
          yield { type: "text_delta", text: reply };
          yield {
            type: "done",
            message: { role: "assistant", blocks: [{ type: "text", text: reply }], model: req.model },
            usage: { input: reply.length, output: reply.length, cache_read: 0, cache_write: 0 },
            stop_reason: "end_turn",
          };
        },
      }),
    });
  },
});
