/**
 * `/init [focus]` (LARIK-REFERENCE §13, §29): a prompt that has the model study the project and
 * write or improve its instruction file. The text is init-prompt.ts; this fills in which file.
 * Works wherever prompts do (the TUI, `larik -p`); the file is read from the next fresh context
 * on, as every instruction file is (kernel/prompt.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "../../kernel/index.js";
import text from "./init-prompt.js";
import { COMMAND_META } from "./meta.js";

function nonEmpty(file: string): boolean {
  try {
    return readFileSync(file, "utf8").trim() !== "";
  } catch {
    return false;
  }
}

/**
 * The instruction file of `cwd` that Larik loads: `AGENTS.md`, else a `CLAUDE.md` when
 * `AGENTS.md` is missing or empty (the load rule of kernel/prompt.ts), else a new `AGENTS.md`.
 */
function initTarget(cwd: string): { name: string; exists: boolean } {
  if (nonEmpty(join(cwd, "AGENTS.md"))) return { name: "AGENTS.md", exists: true };
  if (nonEmpty(join(cwd, "CLAUDE.md"))) return { name: "CLAUDE.md", exists: true };
  return { name: "AGENTS.md", exists: existsSync(join(cwd, "AGENTS.md")) };
}

/** The `/init` prompt for `cwd`, with the user's `focus` (may be empty). */
function initPrompt(cwd: string, focus: string): string {
  const body = text.replace(/^---\n[\s\S]*?\n---\n+/, "");
  const t = initTarget(cwd);
  const state = t.exists
    ? `${t.name} exists: read it first and improve it. Keep what is still right and the rules its authors wrote on purpose, fix what is stale or wrong, add what is missing, and remove repetition.`
    : `There is no ${t.name} yet: create it.`;
  const prompt = body.replaceAll("{{file}}", `\`${t.name}\` (in ${cwd})`).replace("{{state}}", state).replace(/\s+$/, "");
  return focus.trim() ? `${prompt}\n\nThe user asks you to pay particular attention to: ${focus.trim()}` : prompt;
}

/** `/init`: returns the prompt; the model does the work in the turn that follows. */
export const initCommand: Command = {
  ...COMMAND_META.init,
  async run({ host, args }) {
    return { prompt: initPrompt(host.cwd, args) };
  },
};
