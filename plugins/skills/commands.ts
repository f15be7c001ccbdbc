/**
 * Slash commands from skills and custom commands (`/name args`, LARIK-REFERENCE §13, §29) and
 * the `/skills` listing.
 */
import type { Command, Host } from "../../kernel/index.js";
import { clip, renderBody, renderSkill, type Catalog } from "./catalog.js";
import { readBody, type Entry } from "./discover.js";

/**
 * The `/name` command of a skill or custom command; it expands to a prompt. A built-in command
 * file (`/review`) gathers its data first and sends it as data (`mentions: false`, review.ts).
 */
export function entryCommand(e: Entry): Command {
  return {
    name: e.name,
    description: clip(e.description, 200),
    args: e.argumentHint,
    section: e.embedded !== undefined ? "review" : e.kind === "skill" ? "skills" : "custom commands",
    async run({ agent, args, stdin }) {
      if (e.embedded !== undefined) {
        // imported on first use: start-up lists the command, it gathers nothing
        const { gatherReview, reviewPrompt } = await import("./review.js");
        const { gathered, focus } = await gatherReview(args, agent.host.cwd, agent.host.env, e.name);
        // read once the gathering has succeeded (a failed one leaves stdin unread, with no wait);
        // fenced inside the data block, not appended after it where it would read as instructions
        const piped = await stdin?.();
        return { prompt: reviewPrompt(e.embedded, gathered, focus, piped), mentions: false };
      }
      const body = await readBody(e.file);
      const prompt = e.kind === "skill" ? await renderSkill(e, body, args, agent) : await renderBody(body, args, agent);
      return { prompt };
    },
  };
}

function flags(e: Entry, catalog: Catalog): string {
  const f: string[] = [];
  if (catalog.isHidden(e.name)) f.push("hidden from the model");
  else if (!e.modelInvocable) f.push(e.kind === "command" ? "not in the model index" : "user only");
  if (!e.userInvocable) f.push("model only");
  return f.length ? ` [${f.join(", ")}]` : "";
}

/** Lines of the `/skills` listing: what is in force, shadowed and left out. */
function describeCatalog(catalog: Catalog, host: Host, skipped: Map<string, string>): string[] {
  const lines: string[] = [];
  const section = (title: string, entries: Entry[], shadowed: { entry: Entry; by: Entry }[]) => {
    lines.push(`${title}:`);
    if (!entries.length) lines.push("  (none)");
    for (const e of entries) {
      const why = skipped.get(e.name);
      lines.push(`  /${e.name} — ${clip(e.description, 80)} (${e.origin})${flags(e, catalog)}${why ? ` [no /${e.name}: ${why}]` : ""}`);
    }
    for (const s of shadowed) lines.push(`  shadowed: ${s.entry.name} (${s.entry.origin}) by ${s.by.origin}`);
  };
  section("skills", catalog.skills.entries, catalog.skills.shadowed);
  const live = new Set(catalog.liveCommands(host));
  section(
    "custom commands",
    catalog.commands.entries.filter((c) => live.has(c)),
    catalog.commands.shadowed,
  );
  for (const c of catalog.commands.entries.filter((c) => !live.has(c))) lines.push(`  shadowed: ${c.name} (${c.origin}) by the skill of the same name`);
  const foreign = host.skills.list().filter((s) => !catalog.skills.entries.some((e) => e.name === s.name));
  if (foreign.length) {
    lines.push("skills from plugins:");
    for (const s of foreign) lines.push(`  ${s.name} — ${clip(s.description, 80)} (${host.skills.ownerOf(s.name)})`);
  }
  if (catalog.hide.length) lines.push(`hidden by skills.hide: ${catalog.hide.join(", ")}`);
  return lines;
}

/** `/skills`; `catalog` returns the catalog in force (it is rebuilt per fresh context). */
export function skillsCommand(catalog: () => Catalog, skipped: Map<string, string>): Command {
  return {
    name: "skills",
    description: "List skills and custom commands (shadowed and hidden ones too)",
    async run({ host, print }) {
      for (const l of describeCatalog(catalog(), host, skipped)) print(l);
    },
  };
}
