/**
 * The interactive app: the transcript (printed once through `<Static>`) above a live region
 * of the streaming reply, running tools, todos, status, the permission prompt or the composer
 * with its palette/picker, and the footer. The live region is budgeted to stay below the
 * terminal height (the streaming reply shows its tail), so Ink never falls back to clearing the
 * screen and reprinting everything (see frame.ts).
 */
import { Box, Text, useApp, useInput, useStdin, useStdout } from "ink";
import { useEffect, useState, useSyncExternalStore } from "react";
import type { TuiController, ViewState } from "./controller.js";
import { Composer, composerRows, MentionPicker, pickerRows } from "./composer.js";
import { Footer } from "./footer.js";
import { tailRows } from "./frame.js";
import { renderMarkdown, stripControl } from "./markdown.js";
import { Palette, paletteRows } from "./palette.js";
import { PermissionPrompt, permissionRows } from "./permission-prompt.js";
import { formatDuration } from "./summary.js";
import { TodoList, Transcript } from "./transcript.js";

const SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
const MAX_TOOL_ROWS = 4;
const MAX_TODO_ROWS = 6;
const MAX_QUEUED_ROWS = 3;
const PALETTE_ROWS = 9;

/** The terminal size, following resize events (no polling). */
function useTerminalSize(): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const on = () => setSize(read());
    stdout.on("resize", on);
    return () => {
      stdout.off("resize", on);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stdout]);
  return size;
}

/** Props of {@link App}; `columns`/`rows` override the terminal size (tests). */
export interface AppProps {
  controller: TuiController;
  columns?: number;
  rows?: number;
}

/** The live region's parts with their exact heights, for a given snapshot and terminal size. */
function layoutLive(s: ViewState, columns: number, rows: number) {
  const budget = Math.max(1, rows - 1);
  const footer = 1;
  let bottom = 0;
  let permissionMax = 0;
  let overlayRows = 0;
  if (s.permissions.length) {
    permissionMax = Math.max(7, Math.floor((budget - footer) * 0.7));
    bottom = permissionRows({ pending: s.permissions[0]!, count: s.permissions.length, step: s.permissionStep, maxRows: permissionMax });
  } else {
    const searching = s.overlay?.type === "search";
    bottom = composerRows(s.input, columns, searching);
    if (s.overlay?.type === "palette") overlayRows = paletteRows(s.overlay.entries.length, PALETTE_ROWS);
    if (s.overlay?.type === "picker") overlayRows = pickerRows(s.overlay.entries.length, s.overlay.loading);
    bottom += overlayRows;
  }
  const queued = Math.min(s.queued.length, MAX_QUEUED_ROWS) + (s.queued.length > MAX_QUEUED_ROWS ? 1 : 0);
  const status = s.running || s.busy || s.hint ? 1 : 0;
  const tools = Math.min(s.live.tools.length, MAX_TOOL_ROWS) + (s.live.tools.length > MAX_TOOL_ROWS ? 1 : 0);
  const todos = s.todos?.length ? Math.min(s.todos.length, MAX_TODO_ROWS) : 0;
  const preparing = s.live.preparing ? 1 : 0;
  let fixed = footer + bottom + queued + status + tools + todos + preparing;
  let thinkingRows = 0;
  if (s.live.thinking.trim()) {
    thinkingRows = s.showThinking ? Math.max(1, Math.min(6, budget - fixed - 1)) : 1;
    fixed += thinkingRows;
  }
  const streamRows = Math.max(0, budget - fixed);
  return { budget, streamRows, thinkingRows, permissionMax, overlayRows, queued, status, tools, todos, fixed };
}

function StatusRow({ s }: { s: ViewState }) {
  if (s.hint && !s.running && !s.busy) return <Text color="yellow">{s.hint}</Text>;
  const spin = SPINNER[s.tick % SPINNER.length];
  const what = s.busy ?? (s.permissions.length ? "Waiting for your answer" : "Working");
  const secs = s.turnStarted !== undefined ? ` · ${formatDuration(s.now - s.turnStarted)}` : "";
  return (
    <Text wrap="truncate-end">
      <Text color="cyan">{`${spin} ${what}`}</Text>
      <Text dimColor>{`${secs} · esc to interrupt`}</Text>
      {s.hint ? <Text color="yellow">{` · ${s.hint}`}</Text> : null}
    </Text>
  );
}

/** The whole interactive screen. */
export function App({ controller, columns: cols, rows: height }: AppProps) {
  const s = useSyncExternalStore(controller.subscribe, controller.snapshot);
  const { isRawModeSupported } = useStdin();
  // STACK.md gotcha 10: only `false` turns input off, and Ink reports `undefined` off a TTY
  useInput(controller.handleKey, { isActive: isRawModeSupported === true });
  const { exit } = useApp();
  useEffect(() => controller.onQuit(() => exit()), [controller, exit]);
  const size = useTerminalSize();
  const columns = cols ?? size.columns;
  const rows = height ?? size.rows;
  const L = layoutLive(s, columns, rows);

  const stream = s.live.text ? tailRows(renderMarkdown(s.live.text), columns, L.streamRows) : { rows: [], hidden: 0 };
  const thinking = s.live.thinking.trim()
    ? s.showThinking
      ? tailRows(stripControl(s.live.thinking), columns, L.thinkingRows).rows
      : [`∴ Thinking… ${s.live.thinkingStarted !== undefined ? formatDuration(s.now - s.live.thinkingStarted) : ""} (ctrl+o to show)`]
    : [];
  const tools = s.live.tools.slice(0, MAX_TOOL_ROWS);
  const queued = s.queued.slice(0, MAX_QUEUED_ROWS);
  const ov = s.overlay;

  return (
    <>
      <Transcript items={s.items} />
      <Box flexDirection="column">
        {thinking.map((r, i) => (
          <Text key={`t${i}`} dimColor italic wrap="truncate-end">
            {r || " "}
          </Text>
        ))}
        {/* one Text per row: Ink caches measurements by whole text, so rows that did not change
            between frames are reused instead of caching every growing version of the reply */}
        {stream.rows.map((r, i) => (
          <Text key={i} wrap="truncate-end">
            {r || " "}
          </Text>
        ))}
        {s.live.preparing ? <Text dimColor wrap="truncate-end">{`… writing a ${s.live.preparing} call`}</Text> : null}
        {tools.map((t) => (
          <Text key={t.id} wrap="truncate-end">
            {t.agent ? <Text color="yellow">{`↳ [${t.agent}] `}</Text> : null}
            <Text color="cyan">{`${SPINNER[s.tick % SPINNER.length]} `}</Text>
            <Text bold>{t.name}</Text>
            <Text dimColor>{` ${t.summary}`}</Text>
          </Text>
        ))}
        {s.live.tools.length > MAX_TOOL_ROWS ? <Text dimColor>{`  … ${s.live.tools.length - MAX_TOOL_ROWS} more running`}</Text> : null}
        {s.todos?.length ? <TodoList todos={s.todos} max={MAX_TODO_ROWS} /> : null}
        {L.status ? <StatusRow s={s} /> : null}
        {queued.map((q, i) => (
          <Text key={i} dimColor wrap="truncate-end">{`queued: ${stripControl(q.replace(/\n/g, " ⏎ "))}`}</Text>
        ))}
        {s.queued.length > MAX_QUEUED_ROWS ? <Text dimColor>{`  … ${s.queued.length - MAX_QUEUED_ROWS} more queued`}</Text> : null}
        {s.permissions.length ? (
          <PermissionPrompt
            pending={s.permissions[0]!}
            count={s.permissions.length}
            step={s.permissionStep}
            selected={s.permissionSelected}
            reason={s.reason}
            maxRows={L.permissionMax}
          />
        ) : (
          <>
            {ov?.type === "palette" ? <Palette entries={ov.entries} selected={ov.selected} maxRows={PALETTE_ROWS} /> : null}
            {ov?.type === "picker" ? <MentionPicker entries={ov.entries} selected={ov.selected} loading={ov.loading} /> : null}
            <Composer input={s.input} columns={columns} running={s.running} search={ov?.type === "search" ? ov : undefined} />
          </>
        )}
        <Footer info={s.footer} />
      </Box>
    </>
  );
}
