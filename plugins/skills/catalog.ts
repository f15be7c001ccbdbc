/**
 * What the model and the user can invoke: skills from the host's `skills` registry (ours and any
 * other plugin's) and custom commands, with `skills.hide` applied (LARIK-REFERENCE §13).
 */
import picomatch from "picomatch";
import type { Agent, Host, Skill } from "../../kernel/index.js";
import { readBody, type Discovered, type Entry } from "./discover.js";

/** Longest description in the system prompt index (characters, §13 since v0.14). */
const INDEX_DESCRIPTION_CHARS = 160;

/** One line of the model's index and how to load it. */
export interface IndexItem {
  name: string;
  description: string;
  kind: "skill" | "command";
  /** The expanded body for `args`, inline commands judged by `agent`'s checker. */
  load(args: string, agent: Agent): Promise<string>;
}

/** Collapses whitespace and clips to `max` characters with an ellipsis. */
export function clip(text: string, max = INDEX_DESCRIPTION_CHARS): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1).trimEnd()}…` : t;
}

/**
 * Expands a skill or command body for `args`, inline commands judged by `agent`'s checker. The
 * renderer is imported on first use: start-up lists skills, it renders none.
 */
export async function renderBody(body: string, args: string, agent: Agent): Promise<string> {
  const { inlineRunner, renderTemplate } = await import("./render.js");
  return renderTemplate(body, args, inlineRunner(agent));
}

/** Renders a skill body the way both the tool and `/name` deliver it. */
export async function renderSkill(entry: Pick<Entry, "dir">, body: string, args: string, agent: Agent): Promise<string> {
  const text = await renderBody(body, args, agent);
  return `Base directory for this skill: ${entry.dir}\n\n${text}`;
}

export class Catalog {
  readonly skills: Discovered;
  readonly commands: Discovered;
  readonly hide: string[];
  readonly #hidden: (name: string) => boolean;
  /** Our own skills by name (the registry's Skill value has no folder). */
  readonly #ours = new Map<Skill, Entry>();

  constructor(skills: Discovered, commands: Discovered, hide: string[]) {
    this.skills = skills;
    this.commands = commands;
    this.hide = hide;
    this.#hidden = hide.length ? picomatch(hide) : () => false;
  }

  /** True when `skills.hide` removes `name` from the index and the tool. */
  isHidden(name: string): boolean {
    return this.#hidden(name);
  }

  /** The registry value for a discovered skill; remembered so its folder is known later. */
  skillValue(e: Entry): Skill {
    const value: Skill = {
      name: e.name,
      description: e.description,
      source: e.file,
      userInvocable: e.userInvocable,
      modelInvocable: e.modelInvocable,
      body: () => readBody(e.file),
    };
    this.#ours.set(value, e);
    return value;
  }

  /** Custom commands not beaten by a skill of the same name. */
  liveCommands(host: Host): Entry[] {
    return this.commands.entries.filter((c) => !host.skills.get(c.name));
  }

  /**
   * The model's index, built per fresh context: model-invocable, unhidden skills in the
   * registry, then custom commands with a frontmatter description.
   */
  index(host: Host): IndexItem[] {
    const out: IndexItem[] = [];
    for (const s of host.skills.list()) {
      if (s.modelInvocable === false || this.isHidden(s.name)) continue;
      const mine = this.#ours.get(s);
      out.push({
        name: s.name,
        description: s.description,
        kind: "skill",
        load: async (args, agent) => {
          const body = await s.body();
          return mine ? renderSkill(mine, body, args, agent) : renderBody(body, args, agent);
        },
      });
    }
    for (const c of this.liveCommands(host)) {
      if (!c.modelInvocable || this.isHidden(c.name)) continue;
      out.push({
        name: c.name,
        description: c.description,
        kind: "command",
        load: async (args, agent) => renderBody(await readBody(c.file), args, agent),
      });
    }
    return out;
  }
}

/** The system prompt section listing `items` (one `name: description` line each). */
export function indexSection(items: IndexItem[]): string {
  const lines = items.map((i) => `${i.name}: ${clip(i.description)}`);
  return [
    "<skills>",
    "Skills and commands you can load with the skill tool. When a task matches one, call the skill tool with its name first and follow what it returns.",
    ...lines,
    "</skills>",
  ].join("\n");
}
