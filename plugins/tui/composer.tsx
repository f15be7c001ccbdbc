/**
 * The composer (LARIK-REFERENCE §24 "Composer"): a full-width framed input that grows to 10
 * rows (then scrolls with the cursor), a yellow frame for `!cmd`, the `@` file picker above it
 * and the ctrl+r history search inside it. Keys are handled by the controller (keys.ts maps
 * them); this file only draws. Text is hard-wrapped here so its height is exact.
 */
import { Box, Text } from "ink";
import type { Buffer } from "./editor.js";
import { hardWrap } from "./frame.js";
import { stripControl } from "./markdown.js";
import type { PickerEntry } from "./mentions.js";

/** Rows of text the composer shows at most before scrolling. */
const COMPOSER_MAX_ROWS = 10;
const INVERSE = "\x1b[7m";
const INVERSE_OFF = "\x1b[27m";
const segmenter = new Intl.Segmenter();

/** Text columns inside the frame (border, padding and the `› ` prefix take 6). */
function composerTextWidth(columns: number): number {
  return Math.max(8, columns - 6);
}

/** The buffer as display rows with the cursor drawn inverse, and the cursor's row. */
function composerLines(b: Buffer, width: number): { rows: string[]; cursorRow: number } {
  const text = stripControl(b.text.replace(/\t/g, "    "));
  const cursor = Math.min(b.cursor, text.length);
  const first = segmenter.segment(text.slice(cursor))[Symbol.iterator]().next();
  const at = first.done ? "" : first.value.segment;
  const shown = at && at !== "\n" ? at : " ";
  const rest = text.slice(cursor + at.length);
  const marked = `${text.slice(0, cursor)}${INVERSE}${shown}${INVERSE_OFF}${at === "\n" ? "\n" : ""}${rest}`;
  const rows = hardWrap(marked, width);
  const cursorRow = Math.max(0, rows.findIndex((r) => r.includes(INVERSE)));
  return { rows, cursorRow };
}

/** Rows the composer takes (frame included). */
export function composerRows(b: Buffer, columns: number, searching = false): number {
  if (searching) return 3;
  return Math.min(COMPOSER_MAX_ROWS, composerLines(b, composerTextWidth(columns)).rows.length) + 2;
}

/** Props of {@link Composer}. */
export interface ComposerProps {
  input: Buffer;
  columns: number;
  running: boolean;
  /** ctrl+r search state, when open. */
  search?: { query: string; match?: { text: string } };
}

/** The framed input. */
export function Composer({ input, columns, running, search }: ComposerProps) {
  const shell = input.text.startsWith("!");
  const color = shell ? "yellow" : "cyan";
  if (search) {
    const match = search.match ? stripControl(search.match.text.replace(/\n/g, " ⏎ ")) : "no match";
    return (
      <Box borderStyle="round" borderColor="magenta" paddingX={1}>
        <Text wrap="truncate-end">
          <Text color="magenta">{`history search: ${search.query}`}</Text>
          <Text inverse> </Text>
          <Text dimColor>{`  ${match}`}</Text>
        </Text>
      </Box>
    );
  }
  const width = composerTextWidth(columns);
  let rows: string[];
  let cursorRow = 0;
  if (!input.text) {
    const hint = running ? "type to queue a prompt · esc interrupts" : "ask anything · / commands · @ files · ! shell · ctrl+g editor";
    rows = [`${INVERSE} ${INVERSE_OFF}\x1b[2m${hint.slice(0, Math.max(0, width - 1))}\x1b[22m`];
  } else {
    ({ rows, cursorRow } = composerLines(input, width));
  }
  const start = Math.min(Math.max(0, cursorRow - COMPOSER_MAX_ROWS + 1), Math.max(0, rows.length - COMPOSER_MAX_ROWS));
  const shown = rows.slice(start, start + COMPOSER_MAX_ROWS);
  return (
    <Box borderStyle="round" borderColor={color} paddingX={1} flexDirection="column">
      {shown.map((r, i) => (
        <Text key={i} wrap="truncate-end">
          <Text color={color}>{start + i === 0 ? (shell ? "! " : "› ") : "  "}</Text>
          {r}
        </Text>
      ))}
    </Box>
  );
}

/** Rows {@link MentionPicker} takes. */
export function pickerRows(count: number, loading: boolean): number {
  return loading || count === 0 ? 1 : count + 1;
}

/** The `@` file picker shown above the composer. */
export function MentionPicker({ entries, selected, loading }: { entries: readonly PickerEntry[]; selected: number; loading: boolean }) {
  if (loading) return <Text dimColor>listing files…</Text>;
  if (!entries.length) return <Text dimColor>no matching file</Text>;
  return (
    <Box flexDirection="column">
      {entries.map((e, i) => (
        <Text key={e.path} wrap="truncate-end" color={i === selected ? "cyan" : undefined}>
          {`${i === selected ? "❯" : " "} @${e.path}`}
        </Text>
      ))}
      <Text dimColor wrap="truncate-end">
        {"  tab/enter completes (folders open) · esc closes"}
      </Text>
    </Box>
  );
}
