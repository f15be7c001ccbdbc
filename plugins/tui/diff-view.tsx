/**
 * The coloured diff view: write/edit results (their `display.diff`, built by core-tools) and
 * permission previews of edits not yet made (built here with jsdiff from the tool input and the
 * file on disk). Added lines green, removed red, hunk headers cyan (LARIK-REFERENCE §24
 * "edit/write previews highlighted with diff tint").
 */
import { readFile } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { Box, Text } from "ink";
import { stripControl } from "./markdown.js";

/** Props of {@link DiffView}. */
export interface DiffViewProps {
  /** Unified diff text (`---`/`+++` headers optional, `@@` hunks). */
  diff: string;
  /** Rows shown at most; the rest is summarized in one line. */
  maxLines?: number;
}

/** Colour of one diff line. */
function diffLineColor(line: string): "green" | "red" | "cyan" | "gray" | undefined {
  if (line.startsWith("+++") || line.startsWith("---")) return "gray";
  if (line.startsWith("+")) return "green";
  if (line.startsWith("-")) return "red";
  if (line.startsWith("@@")) return "cyan";
  return undefined;
}

/** Renders a diff, one terminal row per line (long lines are cut, never wrapped). */
export function DiffView({ diff, maxLines = 40 }: DiffViewProps) {
  const lines = stripControl(diff).split("\n").filter((l, i, all) => !(i === all.length - 1 && l === ""));
  // the file headers repeat the path the row already names
  const body = lines.filter((l) => !l.startsWith("--- ") && !l.startsWith("+++ "));
  const shown = body.length > maxLines ? body.slice(0, Math.max(0, maxLines - 1)) : body;
  const more = body.length - shown.length;
  return (
    <Box flexDirection="column">
      {shown.map((l, i) => (
        <Text key={i} color={diffLineColor(l)} wrap="truncate-end">
          {l || " "}
        </Text>
      ))}
      {more > 0 ? <Text dimColor>{`… ${more} more diff lines`}</Text> : null}
    </Box>
  );
}

/** Rows {@link DiffView} takes for `diff` at `maxLines`. */
export function diffViewRows(diff: string, maxLines: number): number {
  const n = stripControl(diff)
    .split("\n")
    .filter((l, i, all) => !(i === all.length - 1 && l === ""))
    .filter((l) => !l.startsWith("--- ") && !l.startsWith("+++ ")).length;
  return Math.min(n, maxLines);
}

interface EditInput {
  path?: unknown;
  old_string?: unknown;
  new_string?: unknown;
  replace_all?: unknown;
  content?: unknown;
  edits?: unknown;
  files?: unknown;
}

async function unified(path: string, before: string, after: string): Promise<string> {
  const { structuredPatch } = await import("diff");
  const patch = structuredPatch(path, path, before.replace(/\r\n/g, "\n"), after.replace(/\r\n/g, "\n"), undefined, undefined, { context: 3 });
  const out: string[] = [];
  for (const h of patch.hunks) {
    out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    out.push(...h.lines);
  }
  return out.join("\n");
}

function applyEdits(text: string, edits: { old_string: string; new_string: string; replace_all?: boolean }[]): string {
  let cur = text;
  for (const e of edits) {
    if (!e.old_string) continue;
    cur = e.replace_all ? cur.split(e.old_string).join(e.new_string) : cur.replace(e.old_string, () => e.new_string);
  }
  return cur;
}

/**
 * A preview diff for a permission prompt: what `write`, `edit`, `multi_edit` or `write_files`
 * would change, from the call's input and the file as it is now. Returns undefined for other
 * tools or unusable input. A file that cannot be read diffs against empty (a new file); an edit
 * whose file cannot be read diffs `old_string` against `new_string`.
 */
export async function previewDiff(tool: string, input: unknown, cwd: string): Promise<string | undefined> {
  const i = (input ?? {}) as EditInput;
  const abs = (p: string) => (isAbsolute(p) ? p : join(cwd, p));
  const rel = (p: string) => (isAbsolute(p) ? relative(cwd, p) || p : p);
  const read = async (p: string) => readFile(abs(p), "utf8").catch(() => undefined);
  try {
    if ((tool === "write" || tool === "edit" || tool === "multi_edit") && typeof i.path !== "string") return undefined;
    if (tool === "write" && typeof i.content === "string") {
      const path = i.path as string;
      return unified(rel(path), (await read(path)) ?? "", i.content);
    }
    if (tool === "edit" && typeof i.old_string === "string" && typeof i.new_string === "string") {
      const path = i.path as string;
      const edits = [{ old_string: i.old_string, new_string: i.new_string, replace_all: i.replace_all === true }];
      const before = await read(path);
      if (before === undefined || !before.includes(i.old_string)) return unified(rel(path), i.old_string, i.new_string);
      return unified(rel(path), before, applyEdits(before, edits));
    }
    if (tool === "multi_edit" && Array.isArray(i.edits)) {
      const path = i.path as string;
      const edits = (i.edits as EditInput[]).filter((e) => typeof e.old_string === "string" && typeof e.new_string === "string") as {
        old_string: string;
        new_string: string;
        replace_all?: boolean;
      }[];
      const before = (await read(path)) ?? "";
      return unified(rel(path), before, applyEdits(before, edits));
    }
    if (tool === "write_files" && Array.isArray(i.files)) {
      const parts: string[] = [];
      for (const f of i.files as EditInput[]) {
        if (typeof f.path !== "string" || typeof f.content !== "string") continue;
        parts.push(`── ${rel(f.path)}`, await unified(rel(f.path), (await read(f.path)) ?? "", f.content));
      }
      return parts.join("\n");
    }
  } catch {
    return undefined;
  }
  return undefined;
}
