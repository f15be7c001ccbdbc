// A third-party hook plugin: refuses `rm -rf` in bash and keeps a log of every tool call.
// preToolUse is a bail hook: the first tap that returns a decision ends the call.
import { definePlugin } from "larik";

export const toolLog: string[] = [];

export default definePlugin({
  name: "guard-hook",
  setup(ctx) {
    ctx.hooks.preToolUse.tap(({ tool, input }) => {
      const command = (input as { command?: string }).command ?? "";
      if (tool.name === "bash" && /\brm\s+-\w*r\w*f/.test(command)) {
        return { decision: "deny", reason: "guard-hook: rm -rf is not allowed here" };
      }
      return undefined; // no opinion: the permission rules decide
    });
    ctx.hooks.event.tap((event) => {
      if (event.type === "tool_end") toolLog.push(`${event.tool_name}${event.is_error ? " (error)" : ""}`);
    });
  },
});
