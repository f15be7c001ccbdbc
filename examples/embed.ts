// Embedding Larik in a script: a host from the default preset with no front end, one session,
// one prompt, its events printed as they come. From a checkout:
//   LARIK_MODEL=anthropic/claude-sonnet-4-5 npx jiti examples/embed.ts "list the TypeScript files"
// (in your own project the import is `from "larik"`).
import { createHost } from "../index.js";

const host = await createHost({ cwd: process.cwd() });
const agent = await host.openAgent({ model: process.env.LARIK_MODEL, mode: "plan" });
console.error(`session ${agent.session.id} (${agent.spec}) at ${agent.session.location}`);
const prompt = process.argv.slice(2).join(" ") || "Summarize this project in three lines.";
for await (const ev of agent.run(prompt)) {
  if (ev.type === "text_delta") process.stdout.write(ev.text);
  // every permission request must be answered exactly once; this script never allows writes
  else if (ev.type === "permission_request") agent.respond(ev.request_id, { allow: false, reason: "read-only embedding" });
  else if (ev.type === "tool_start") console.error(`→ ${ev.tool_name} ${JSON.stringify(ev.input).slice(0, 100)}`);
  else if (ev.type === "error") console.error(`error: ${ev.text}`);
  else if (ev.type === "done") console.error(`\n[${ev.stop_reason}]`);
}
await host.dispose();
