// A third-party front end: `larik answer "question"` prints only the final answer, nothing else.
// A front end drains the events of a turn and answers every permission request exactly once.
import { agentOptionsFromArgs, definePlugin } from "larik";

export default definePlugin({
  name: "answer-frontend",
  setup(ctx) {
    ctx.frontends.register({
      name: "answer",
      description: "print only the final answer of one prompt",
      subcommand: "answer",
      options: { model: { type: "string", description: "model spec", value: "<spec>" } },
      async run(host, args) {
        const agent = await host.openAgent(agentOptionsFromArgs(args));
        let answer = "";
        let failed = false;
        for await (const ev of agent.run(args.positionals.join(" "))) {
          if (ev.type === "permission_request") agent.respond(ev.request_id, { allow: false, reason: "answer mode never asks" });
          // a reply cut short (`partial`) is not the answer
          if (ev.type === "assistant_message" && !ev.partial) {
            answer = ev.message.blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
          }
          if (ev.type === "error") failed = true;
        }
        await agent.close();
        process.stdout.write(`${answer}\n`);
        return failed ? 1 : 0;
      },
    });
  },
});
