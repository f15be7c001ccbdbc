/**
 * ctrl+g: edit the prompt in `$VISUAL`, else `$EDITOR`, else `vi` (LARIK-REFERENCE §24). The
 * draft goes to a private temp file, the editor runs in the foreground on the real terminal
 * (raw mode off meanwhile), and the file's content comes back as the new draft.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** What the editor step needs from the terminal. */
export interface EditorTerminal {
  env: NodeJS.ProcessEnv;
  /** Turns raw mode off before the editor starts and back on after. */
  setRawMode?(on: boolean): void;
}

/** The editor command line: `$VISUAL`, `$EDITOR` or `vi`. */
function editorCommand(env: NodeJS.ProcessEnv): string {
  return (env.VISUAL?.trim() || env.EDITOR?.trim() || "vi");
}

/**
 * Opens `text` in the external editor and returns the edited text (one trailing newline
 * removed), or an error line when the editor could not run or exited non-zero (the draft is
 * then kept as it was).
 */
export function editExternally(text: string, term: EditorTerminal): { text: string } | { error: string } {
  const dir = mkdtempSync(join(tmpdir(), "larik-prompt-"));
  const file = join(dir, "PROMPT.md");
  writeFileSync(file, text, { mode: 0o600 });
  const editor = editorCommand(term.env);
  term.setRawMode?.(false);
  try {
    // the variable may carry arguments (`code --wait`), so it runs through the shell with the
    // file as a positional parameter rather than spliced into the command text
    const r = spawnSync("sh", ["-c", `${editor} "$1"`, "larik-editor", file], { stdio: "inherit", env: term.env });
    if (r.error) return { error: `cannot start the editor "${editor}": ${r.error.message}; set $VISUAL or $EDITOR` };
    if (r.status !== 0) return { error: `the editor "${editor}" exited with status ${r.status ?? r.signal}; the draft is unchanged` };
    return { text: readFileSync(file, "utf8").replace(/\r?\n$/, "") };
  } finally {
    term.setRawMode?.(true);
    rmSync(dir, { recursive: true, force: true });
  }
}
