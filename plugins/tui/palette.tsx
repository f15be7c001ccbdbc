/**
 * The `/` palette (LARIK-REFERENCE §24 "Command palette"): typing `/` lists the commands of the
 * host's commands registry (built-ins, skills, custom commands, MCP prompts), filtered exact
 * match first, then prefix, then substring of the name; tab completes, enter runs (a command whose argument
 * hint has a `<required>` part completes instead). The TUI renders commands; plugins own them.
 */
import { Box, Text } from "ink";
import type { Command } from "../../kernel/index.js";

/** Section order in the palette (§24); unknown sections sort after these, by name. */
const SECTIONS = ["commands", "skills", "custom commands", "review", "MCP prompts"];

function sectionRank(c: Command): number {
  const i = SECTIONS.indexOf(c.section ?? "commands");
  return i === -1 ? SECTIONS.length : i;
}

/**
 * Names other agents give a command, run as ours: Claude Code quits with `/exit`, and a hand used
 * to it should not meet "unknown command" (or an empty palette) on its way out.
 */
export const PEER_COMMAND_NAMES: Readonly<Record<string, string>> = { exit: "quit" };

/**
 * Commands matching `query` (the text after `/`, case-insensitive): exact name, then prefix,
 * then substring of the name (§24); within a class by section, then name. A peer name
 * ({@link PEER_COMMAND_NAMES}) matches as its command's own name would. An empty query lists
 * every command.
 */
export function filterCommands(commands: readonly Command[], query: string): Command[] {
  const q = query.toLowerCase();
  const names = (c: Command): string[] => [c.name.toLowerCase(), ...Object.keys(PEER_COMMAND_NAMES).filter((p) => PEER_COMMAND_NAMES[p] === c.name)];
  const cls = (c: Command): number => {
    if (!q) return 1;
    const ns = names(c);
    if (ns.includes(q)) return 0;
    if (ns.some((n) => n.startsWith(q))) return 1;
    if (ns.some((n) => n.includes(q))) return 2;
    return -1;
  };
  return commands
    .map((c) => ({ c, k: cls(c) }))
    .filter((x) => x.k >= 0)
    .sort((a, b) => a.k - b.k || sectionRank(a.c) - sectionRank(b.c) || a.c.name.localeCompare(b.c.name))
    .map((x) => x.c);
}

/** True when a command's argument hint has a required `<arg>`: enter completes instead of running. */
export function needsArgs(c: Command): boolean {
  return /<[^>]+>/.test(c.args ?? "");
}

/** Props of {@link Palette}. */
export interface PaletteProps {
  entries: readonly Command[];
  selected: number;
  /** Rows available, including the hint row. */
  maxRows: number;
}

/** Rows {@link Palette} takes. */
export function paletteRows(count: number, maxRows: number): number {
  if (maxRows <= 0) return 0;
  if (count === 0) return 1;
  return Math.min(count, maxRows - 1) + 1;
}

/** The palette list: a window of rows around the selection, and a hint row. */
export function Palette({ entries, selected, maxRows }: PaletteProps) {
  if (maxRows <= 0) return null;
  if (!entries.length) return <Text dimColor>no matching command</Text>;
  const visible = Math.max(1, maxRows - 1);
  const start = Math.min(Math.max(0, selected - visible + 1), Math.max(0, entries.length - visible));
  const shown = entries.slice(start, start + visible);
  const width = Math.min(24, Math.max(...shown.map((c) => c.name.length + 1)));
  return (
    <Box flexDirection="column">
      {shown.map((c, i) => {
        const active = start + i === selected;
        const section = c.section && c.section !== "commands" ? `  (${c.section})` : "";
        return (
          <Text key={c.name} wrap="truncate-end" color={active ? "cyan" : undefined}>
            {`${active ? "❯" : " "} ${`/${c.name}`.padEnd(width + 1)} `}
            <Text dimColor={!active}>{`${c.args ? `${c.args}  ` : ""}${c.description}${section}`}</Text>
          </Text>
        );
      })}
      <Text dimColor wrap="truncate-end">{`  tab completes · enter runs · esc closes${entries.length > visible ? ` · ${entries.length} commands` : ""}`}</Text>
    </Box>
  );
}
