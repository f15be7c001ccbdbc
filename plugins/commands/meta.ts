/**
 * What menus, `/help` and `--help` show of each built-in command: its name, description and
 * arguments, kept apart from the implementations so that listing the commands loads none of
 * them (`index.ts` imports a command's module when it first runs).
 */
import { EFFORTS, PERMISSION_MODES, type Command } from "../../kernel/index.js";

/** A command without its `run`. */
export type CommandMeta = Omit<Command, "run">;

export const COMMAND_META = {
  model: { name: "model", description: "Show the model, or switch to provider/model and save it as the default", args: "[provider/model]", idleOnly: true },
  mode: { name: "mode", description: "Show or set the permission mode (saved as the default)", args: `[${PERMISSION_MODES.join("|")}]` },
  effort: { name: "effort", description: "Show or set the reasoning effort (saved as the default)", args: `[${EFFORTS.join("|")}|default]`, idleOnly: true },
  clear: { name: "clear", description: "Start a fresh context in the same session", idleOnly: true },
  compact: { name: "compact", description: "Summarize the conversation now to free the context window", idleOnly: true },
  undo: { name: "undo", description: "Revert the file changes of the last turn that changed files", idleOnly: true },
  cost: { name: "cost", description: "Tokens and cost per model, context use and compaction savings" },
  sessions: { name: "sessions", description: "List this directory's sessions (⑂ branch, ✓ current)" },
  resume: { name: "resume", description: "Switch to another session of this directory by id or unique prefix", args: "[id]", idleOnly: true },
  new: { name: "new", description: "Start a new session", idleOnly: true },
  fork: { name: "fork", description: "Branch this session at its end and continue in the branch", idleOnly: true },
  rewind: { name: "rewind", description: "List prompts, or branch before prompt n and put it back in the composer", args: "[n] [files|keep]", idleOnly: true },
  prompt: { name: "prompt", description: "Show prompt n (default the last) with Copy / Fork / Rewind", args: "[n] [copy|fork]" },
  init: { name: "init", description: "Study the project and write or improve AGENTS.md (or its CLAUDE.md)", args: "[focus]" },
  export: { name: "export", description: "Write the session to a Markdown file (never overwrites)", args: "[file]" },
  copy: { name: "copy", description: "Copy the last reply to the clipboard" },
  help: { name: "help", description: "List the slash commands" },
  quit: { name: "quit", description: "Quit Larik" },
} as const satisfies Record<string, CommandMeta>;
