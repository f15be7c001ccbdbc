/**
 * The `skills` plugin (LARIK-REFERENCE §13): discovers `SKILL.md` skills and `commands/*.md`
 * custom commands, registers the skills in the host's `skills` registry, adds a `/name` command
 * for each user-invocable one, an index of names and descriptions to the system prompt, and the
 * `skill` tool that loads a body on demand, and the built-in `/review` and `/security-review`
 * command files (embedded.ts, review.ts). See docs/skills.md and docs/commands.md.
 */
import { definePlugin, type Disposer, type PluginContext } from "../../kernel/index.js";
import { Catalog, indexSection } from "./catalog.js";
import { entryCommand, skillsCommand } from "./commands.js";
import { discoverCommands, discoverSkills, type Entry } from "./discover.js";
import { embeddedCommands } from "./embedded.js";
import { skillTool } from "./tool.js";

export { discoverSkills, discoverCommands, type Entry, type Discovered, type DiscoveryEnv } from "./discover.js";
export { parseFrontmatter } from "./frontmatter.js";

/** `skills.hide`: a list of globs; anything else is reported and ignored. */
function hideSetting(ctx: PluginContext): string[] {
  const s = ctx.settings.skills;
  if (s === undefined) return [];
  const hide = (s as { hide?: unknown } | null)?.hide;
  if (hide === undefined) return [];
  if (Array.isArray(hide) && hide.every((h) => typeof h === "string")) return hide;
  ctx.notice('skills.hide must be a list of name globs such as ["cmux-*"]; it was ignored');
  return [];
}

export default definePlugin({
  name: "skills",
  description: "Skills (SKILL.md) and custom commands (commands/*.md)",
  async setup(ctx) {
    const where = { cwd: ctx.cwd, env: ctx.host.env };
    const hide = hideSetting(ctx);
    const skipped = new Map<string, string>();
    let catalog: Catalog;
    let disposers: Disposer[] = [];
    let reported = false;

    /**
     * Discovers and (re)registers everything. Runs at setup and again for every later fresh
     * context, so skills added on disk show up after `/clear` or in a new session (§13: "index
     * rebuilt per fresh context") while the context in use stays byte-stable.
     */
    const sync = async () => {
      const [skills, commands] = await Promise.all([discoverSkills(where), discoverCommands(where, embeddedCommands())]);
      for (const d of disposers.splice(0).reverse()) d();
      skipped.clear();
      if (!reported) for (const p of [...skills.problems, ...commands.problems]) ctx.notice(p);
      reported = true;
      catalog = new Catalog(skills, commands, hide);
      for (const e of skills.entries) disposers.push(ctx.skills.register(catalog.skillValue(e)));
      // Commands registered before us (built-ins) keep their names; §13 says they always win.
      const claim = (e: Entry) => {
        const owner = ctx.host.commands.ownerOf(e.name);
        if (owner) skipped.set(e.name, `/${e.name} is taken by ${owner === ctx.name ? "this plugin" : owner}`);
        else disposers.push(ctx.commands.register(entryCommand(e)));
      };
      for (const e of skills.entries) if (e.userInvocable) claim(e);
      for (const e of catalog.liveCommands(ctx.host)) claim(e);
    };

    ctx.commands.register(skillsCommand(() => catalog, skipped));
    await sync();
    let fresh = true;

    ctx.hooks.loadTools.tap(async (tools, { agent }) => {
      if (!fresh) await sync();
      fresh = false;
      const items = catalog.index(ctx.host);
      return items.length ? [...tools, skillTool(items, agent)] : tools;
    });
    ctx.hooks.systemPrompt.tap((sections) => {
      const items = catalog.index(ctx.host);
      return items.length ? [...sections, indexSection(items)] : sections;
    });
  },
});
