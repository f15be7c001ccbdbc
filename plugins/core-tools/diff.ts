/**
 * The mini unified diff shown by front ends after a write or edit (LARIK-REFERENCE §3: "UI gets a
 * mini diff"). Built with jsdiff's `structuredPatch`; display only, never sent to the model.
 */

/** Diff lines kept in a display; the rest is summarized in one line. */
const MAX_DIFF_LINES = 200;

/** A display diff: unified text (`---`/`+++` headers and `@@` hunks) and line counts. */
export interface MiniDiff {
  diff: string;
  added: number;
  removed: number;
}

/**
 * Unified diff of `before` → `after` labelled with `path`, 3 lines of context, cut at
 * {@link MAX_DIFF_LINES} lines. Line endings are normalized so a CRLF file diffs cleanly.
 */
export async function miniDiff(path: string, before: string, after: string): Promise<MiniDiff> {
  const { structuredPatch } = await import("diff");
  const norm = (s: string) => s.replace(/\r\n/g, "\n");
  const patch = structuredPatch(path, path, norm(before), norm(after), undefined, undefined, { context: 3 });
  const out: string[] = [`--- ${path}`, `+++ ${path}`];
  let added = 0;
  let removed = 0;
  for (const h of patch.hunks) {
    out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const line of h.lines) {
      if (line.startsWith("+")) added++;
      else if (line.startsWith("-")) removed++;
      out.push(line);
    }
  }
  if (out.length > MAX_DIFF_LINES) {
    const dropped = out.length - MAX_DIFF_LINES;
    out.length = MAX_DIFF_LINES;
    out.push(`… ${dropped} more diff lines`);
  }
  return { diff: out.join("\n"), added, removed };
}
