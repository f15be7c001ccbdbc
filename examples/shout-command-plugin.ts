// A third-party slash command: `/shout some words` sends "SOME WORDS!" as the prompt.
import { definePlugin } from "larik";

export default definePlugin({
  name: "shout-command",
  setup(ctx) {
    ctx.commands.register({
      name: "shout",
      description: "send the arguments as an upper-case prompt",
      args: "<words>",
      async run({ args, print }) {
        if (!args.trim()) {
          print("usage: /shout <words>");
          return;
        }
        return { prompt: `${args.trim().toUpperCase()}!` };
      },
    });
  },
});
