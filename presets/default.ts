/** The default preset: the plugins the `larik` CLI loads, in order. */
import sessionsJsonl from "../plugins/sessions-jsonl/index.js";
import anthropic from "../plugins/anthropic/index.js";
import openaiCompatible from "../plugins/openai-compatible/index.js";
import openai from "../plugins/openai/index.js";
import gemini from "../plugins/gemini/index.js";
import ollama from "../plugins/ollama/index.js";
import coreTools from "../plugins/core-tools/index.js";
import sandboxBubblewrap from "../plugins/sandbox-bubblewrap/index.js";
import sandboxSeatbelt from "../plugins/sandbox-seatbelt/index.js";
import hooks from "../plugins/hooks/index.js";
import skills from "../plugins/skills/index.js";
import mcp from "../plugins/mcp/index.js";
import commands from "../plugins/commands/index.js";
import headless from "../plugins/headless/index.js";
import tui from "../plugins/tui/index.js";
import server from "../plugins/server/index.js";

export default [sessionsJsonl, anthropic, openaiCompatible, openai, gemini, ollama, coreTools, sandboxBubblewrap, sandboxSeatbelt, hooks, skills, mcp, commands, headless, tui, server];
