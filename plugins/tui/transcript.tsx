/**
 * The conversation (LARIK-REFERENCE §24 "Rendering"): finished items printed once through Ink's
 * `<Static>` — Ink writes each item a single time above the live region and never redraws it,
 * so a long transcript costs nothing per frame. User prompts in a teal-barred frame, replies as
 * Markdown with highlighted code, tool rows with a compact input summary and the result (a
 * coloured diff for write/edit), thinking collapsed to "Thought for Ns", notices and errors
 * styled, subagent rows labelled, the final todo list.
 */
import { Box, Static, Text } from "ink";
import { memo } from "react";
import { toolErrorLine } from "../../kernel/index.js";
import type { Item } from "./controller.js";
import { DiffView } from "./diff-view.js";
import { renderMarkdown, stripControl } from "./markdown.js";
import { diffDisplay, firstLine, formatDuration, type Todo } from "./summary.js";

/** Diff lines shown in a finished tool row. */
const DIFF_ROWS = 30;
/** Output lines shown for a `!cmd`. */
const SHELL_ROWS = 20;

function Label({ agent }: { agent?: string }) {
  return agent ? <Text color="yellow">{`↳ [${agent}] `}</Text> : null;
}

/** A todo checklist (live during a turn, printed when it ends). */
export function TodoList({ todos, max }: { todos: readonly Todo[]; max?: number }) {
  const shown = max !== undefined && todos.length > max ? todos.slice(0, Math.max(0, max - 1)) : todos;
  const more = todos.length - shown.length;
  return (
    <Box flexDirection="column">
      {shown.map((t, i) => (
        <Text key={i} wrap="truncate-end" color={t.status === "in_progress" ? "cyan" : undefined} dimColor={t.status === "completed"} strikethrough={t.status === "completed"}>
          {`${t.status === "completed" ? "☑" : t.status === "in_progress" ? "◐" : "☐"} ${stripControl(t.status === "in_progress" && t.active_form ? t.active_form : t.content)}`}
        </Text>
      ))}
      {more > 0 ? <Text dimColor>{`  … ${more} more`}</Text> : null}
    </Box>
  );
}

/** One tool row: status mark, name, compact input, then the result or its diff. */
function ToolRow({ item }: { item: Extract<Item, { kind: "tool" }> }) {
  const diff = diffDisplay(item.display);
  const denied = item.isError && /^(the user denied|permission denied)/.test(item.output);
  const mark = item.isError ? (denied ? "⊘" : "✗") : "●";
  const color = item.isError ? (denied ? "yellow" : "red") : "green";
  let result: string;
  if (diff) result = `${diff.created ? "created" : "updated"} ${diff.path} (+${diff.added} −${diff.removed})`;
  else if (item.name === "todo_write" && !item.isError) result = firstLine(item.output);
  else {
    const lines = item.output.split("\n").filter((l) => l.trim()).length;
    // a failed call shows the line that says why (bash's `[timed out …]` after its output), the
    // same line as larik -p's `✗` line
    result = firstLine((item.isError && toolErrorLine(item.output)) || item.output) + (lines > 1 ? `  (+${lines - 1} line${lines === 2 ? "" : "s"})` : "");
  }
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Label agent={item.agent} />
        <Text color={color}>{`${mark} `}</Text>
        <Text bold>{item.name}</Text>
        <Text dimColor>{item.summary ? ` ${item.summary}` : ""}</Text>
      </Text>
      {result ? (
        <Text wrap="truncate-end" color={item.isError && !denied ? "red" : undefined} dimColor={!item.isError}>
          {`  ⎿ ${result}`}
        </Text>
      ) : null}
      {diff && !item.isError ? (
        <Box paddingLeft={4}>
          <DiffView diff={diff.diff} maxLines={DIFF_ROWS} />
        </Box>
      ) : null}
    </Box>
  );
}

/** One finished item. Memoized: Static renders each once anyway, this keeps re-mounts cheap. */
const ItemView = memo(function ItemView({ item }: { item: Item }) {
  switch (item.kind) {
    case "user":
      return (
        <Box borderStyle="bold" borderColor="cyan" borderTop={false} borderRight={false} borderBottom={false} paddingLeft={1} marginTop={1} marginBottom={1}>
          <Text>{stripControl(item.text)}</Text>
        </Box>
      );
    case "command":
      return (
        <Box marginTop={1}>
          <Text color="cyan">{`› ${stripControl(item.text)}`}</Text>
        </Box>
      );
    case "assistant":
      return (
        <Box marginBottom={1}>
          <Text>{renderMarkdown(item.text)}</Text>
        </Box>
      );
    case "thinking":
      return item.expanded ? (
        <Box flexDirection="column" marginBottom={1}>
          <Text dimColor italic>{`∴ Thought for ${formatDuration(item.ms)}`}</Text>
          <Text dimColor italic>
            {stripControl(item.text.trim())}
          </Text>
        </Box>
      ) : (
        <Text dimColor italic>{`∴ Thought for ${formatDuration(item.ms)} (ctrl+o to show)`}</Text>
      );
    case "tool":
      return <ToolRow item={item} />;
    case "notice":
      return (
        <Text color="yellow">
          <Label agent={item.agent} />
          {`! ${stripControl(item.text)}`}
        </Text>
      );
    case "info":
      return <Text>{stripControl(item.text)}</Text>;
    case "error":
      return (
        <Text color="red">
          <Label agent={item.agent} />
          {`error: ${stripControl(item.text)}`}
        </Text>
      );
    case "todos":
      return (
        <Box flexDirection="column" marginTop={1} marginBottom={1}>
          <Text bold>Todos</Text>
          <TodoList todos={item.todos} />
        </Box>
      );
    case "shell": {
      const lines = stripControl(item.output).split("\n");
      const shown = lines.length > SHELL_ROWS ? lines.slice(-SHELL_ROWS) : lines;
      return (
        <Box flexDirection="column" marginTop={1} marginBottom={1}>
          <Text color="yellow">{`! ${stripControl(item.command)}`}</Text>
          {lines.length > SHELL_ROWS ? <Text dimColor>{`  … ${lines.length - SHELL_ROWS} earlier lines`}</Text> : null}
          {item.output ? <Text dimColor>{shown.map((l) => `  ${l}`).join("\n")}</Text> : null}
          <Text dimColor>{`  ${item.code === null ? "stopped" : `exit ${item.code}`} · output goes with your next prompt`}</Text>
        </Box>
      );
    }
    case "banner":
      return <Text dimColor>{`── ${item.text} ──`}</Text>;
    default:
      return null;
  }
});

/** The transcript: every item printed once, in order, above the live region. */
export function Transcript({ items }: { items: readonly Item[] }) {
  return <Static items={items as Item[]}>{(item) => <ItemView key={item.id} item={item} />}</Static>;
}
