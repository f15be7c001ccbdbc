/**
 * The tool contract. A tool is a value: a name, a zod input schema, safety flags and `run`.
 * The kernel alone dispatches tools (validation → preToolUse → permission → run → postToolUse),
 * so no tool runs by a path that skips the hook points (DESIGN.md, "Lessons from the field").
 */
import * as z from "zod/mini";
import { useEnglishErrors, valueAt } from "./kit/zod-english.js";
import { isLazySchema } from "./kit/lazy-schema.js";
import type { Image, ToolSpec } from "./types.js";
import type { Sandbox } from "./registries.js";
import type { PermissionCall } from "./permission.js";

/** What the permission checker needs to know about a tool (LARIK-REFERENCE §4). */
export type ToolKind =
  /** Never changes anything: skips prompts, runs in plan mode, may run in parallel. */
  | "read"
  /** Writes files: project boundary, symlink and protected-path rules apply in every mode. */
  | "write"
  /** Runs a shell command: chaining, substitution and safe-list rules apply. */
  | "bash"
  /**
   * Reaches the network: asks (denied in plan mode); runs in parallel only when
   * `concurrencySafe`; rules `tool(domain:host)` match when `subject` returns `domain:<host>`.
   */
  | "network"
  | "other";

/** Read-before-write bookkeeping shared by the file tools of one agent. */
export interface FileTracker {
  /** Records that `absPath` was read when its mtime was `mtimeMs`. */
  recordRead(absPath: string, mtimeMs: number): void;
  /** The mtime recorded at the last read, or undefined if never read. */
  lastRead(absPath: string): number | undefined;
}

/** Everything a running tool may use. Created by the kernel per call. */
export interface ToolContext {
  /** The agent's working directory (absolute). */
  cwd: string;
  /** The project boundary for file tools: the git root, else cwd (absolute). */
  projectRoot: string;
  signal: AbortSignal;
  sessionId: string;
  toolUseId: string;
  files: FileTracker;
  /**
   * Captures a file before its first write in this turn (for `/undo`). Throws if the capture
   * fails; the write must then not happen (invariant 15).
   */
  checkpoint(absPath: string): Promise<void>;
  /** The active sandbox backend for bash, or undefined when commands run unconfined. */
  sandbox?: Sandbox;
  /** Shows a one-line notice to the user. */
  notice(text: string): void;
  /** Private per-session folder for sidecars (raw output); created on first use. */
  sidecarDir(): Promise<string>;
  /** Settings in force (merged, validated). */
  settings: Record<string, unknown>;
}

/** What a tool returns. `content` goes to the model; `display` is for front ends only. */
export interface ToolResult {
  content: string;
  is_error?: boolean;
  display?: unknown;
  images?: Image[];
}

/**
 * A tool definition. `input` validates arguments before anything else runs; a failure
 * returns `INVALID_ARGUMENTS: …` to the model and the turn goes on.
 */
export interface ToolDefinition<S extends ToolInputSchema = ToolInputSchema> {
  name: string;
  /** Part of the cached prompt prefix: keep it stable. */
  description: string;
  input: S;
  /**
   * The JSON Schema of `input` (input side, no `$schema`), precomputed. Optional: when absent,
   * {@link toolSpec} derives it with `z.toJSONSchema`, which costs about 1 ms per tool at start-up;
   * the built-in tools ship theirs in a generated file that a test keeps equal to the derived one.
   */
  inputJsonSchema?: Record<string, unknown>;
  kind: ToolKind;
  /** Network tools that may run in parallel while still asking. Read tools are always parallel. */
  concurrencySafe?: boolean;
  /** The string permission rules match: a command, a project-relative path, `domain:host`. */
  subject?(input: z.output<S>): string | undefined;
  /** Absolute or cwd-relative paths the call writes, for boundary checks (write tools). */
  writePaths?(input: z.output<S>): string[];
  /**
   * The call's most telling arguments as one short line, for a front end's tool line
   * (`→ grep TODO in src`, LARIK-REFERENCE §22 "compact input"): see {@link toolInputSummary},
   * which collapses whitespace and cuts it to length. `input` is the call's input as the model
   * sent it, not validated (a malformed call is shown too): return undefined when it does not
   * fit, and the generic summary is used.
   */
  summary?(input: unknown): string | undefined;
  /**
   * Checks that read but change nothing, run just before the user would be asked to approve the
   * call: a call that would fail anyway (an edit of a file not read yet, an `old_string` that is
   * not in the file) is answered with the returned text as an error result, and nobody is asked
   * a question whose "yes" leads only to that error (Claude Code's `validateInput`). Returns
   * undefined when the call may go on; a throw or any other non-string answer is taken the same
   * way (the question is asked). Not called for calls allowed or denied without asking;
   * `run` checks again, since the file may change meanwhile.
   */
  precheck?(input: z.output<S>, ctx: ToolCheckContext): Promise<string | undefined>;
  run(input: z.output<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** What a {@link ToolDefinition.precheck} may use: nothing that writes or runs. */
export type ToolCheckContext = Pick<ToolContext, "cwd" | "projectRoot" | "files" | "settings">;

/** The tool kinds the permission checker knows ({@link ToolKind}). */
const TOOL_KINDS: ReadonlySet<string> = new Set<ToolKind>(["read", "write", "bash", "network", "other"]);

/**
 * What is wrong with a value registered as a tool, as one line that names the tool, or undefined
 * for a well-formed one. A plain-JavaScript plugin (or a JSON Schema where the zod schema goes,
 * as MCP and other agents' tools are written) would otherwise be taken in and fail at every
 * turn's first request, naming nothing; a misspelt `kind` would be asked about as `other`.
 * Names are what every model API accepts: 1 to 64 letters, digits, `_` and `-`. A lazy schema is
 * recognized without being built.
 */
export function toolDefinitionProblem(tool: unknown): string | undefined {
  if (typeof tool !== "object" || tool === null) return `a tool is defineTool({ name, description, input, kind, run }), got ${tool === null ? "null" : typeof tool}`;
  const t = tool as Record<string, unknown>;
  if (typeof t.name !== "string") return `a tool needs a string name, got ${typeof t.name}`;
  const who = `tool "${t.name}"`;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(t.name)) return `${who}: a name is 1 to 64 letters, digits, _ or - (what model APIs accept)`;
  if (typeof t.description !== "string") return `${who}: description must be a string, got ${typeof t.description}`;
  const input = t.input;
  if (!isLazySchema(input) && !(typeof input === "object" && input !== null && "_zod" in input)) {
    const jsonSchema = typeof input === "object" && input !== null && ("type" in input || "properties" in input);
    return `${who}: input must be a zod 4 schema such as z.object({ … }), got ${input === undefined ? "undefined" : jsonSchema ? "a JSON Schema (it may go in inputJsonSchema, beside a zod schema)" : typeof input}`;
  }
  if (typeof t.kind !== "string" || !TOOL_KINDS.has(t.kind)) return `${who}: kind must be one of ${[...TOOL_KINDS].join(", ")}, got ${JSON.stringify(t.kind) ?? "undefined"}`;
  if (typeof t.run !== "function") return `${who}: run must be a function`;
  for (const f of ["subject", "writePaths", "summary", "precheck"]) {
    if (t[f] !== undefined && typeof t[f] !== "function") return `${who}: ${f} must be a function when given`;
  }
  return undefined;
}

/** A tool with its input type erased, as held by the registry. */
export type AnyTool = ToolDefinition<ToolInputSchema>;

/** Identity helper that keeps the input type of `run` tied to the schema. */
export function defineTool<S extends ToolInputSchema>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}

/**
 * A tool's input schema: any zod 4 schema, built with `zod` (classic) or `zod/mini`. The
 * built-in tools use `zod/mini`, which loads in a few milliseconds where classic zod takes
 * about 70 ms (bench/startup.mjs); a plugin may use either.
 */
export type ToolInputSchema = z.core.$ZodType;

/**
 * Checks `input` against a tool's schema (zod 4 `safeParse`, which works on classic and mini
 * schemas alike). Error messages are English (zod's `en` locale, installed on first use).
 */
export function validateToolInput<S extends ToolInputSchema>(schema: S, input: unknown): z.core.util.SafeParseResult<z.output<S>> {
  useEnglishErrors();
  return z.safeParse(schema, input);
}

const specCache = new WeakMap<AnyTool, ToolSpec>();

/**
 * The advertised form of a tool: its precomputed `inputJsonSchema`, else the JSON Schema zod
 * derives from `input` (see {@link inputJsonSchema}), cached per definition so the prompt prefix
 * stays byte-stable.
 */
export function toolSpec(tool: AnyTool): ToolSpec {
  let spec = specCache.get(tool);
  if (!spec) {
    spec = { name: tool.name, description: tool.description, input_schema: tool.inputJsonSchema ?? inputJsonSchema(tool.input) };
    specCache.set(tool, spec);
  }
  return spec;
}

/**
 * What the permission checker is asked about a call of `tool` with its validated `input`: the
 * tool's kind, its `subject` and `writePaths`, and for bash whether the call asked to run
 * outside the sandbox (`sandbox: false`). The agent loop decides with it; a front end that
 * explains a decision (which `--mode` would allow the call) asks a checker the same question.
 */
export function permissionCall(tool: AnyTool, input: unknown, hook?: PermissionCall["hook"]): PermissionCall {
  return {
    tool: tool.name,
    kind: tool.kind,
    input,
    subject: tool.subject?.(input),
    writePaths: tool.writePaths?.(input),
    unsandboxed: (input as { sandbox?: boolean } | undefined)?.sandbox === false,
    hook,
  };
}

/**
 * zod 4 `toJSONSchema` of the input side (a key with a default is optional), unrepresentable
 * parts as `{}`, without `$schema` (draft 2020-12, which every provider API here accepts).
 * Costs about 1 ms per tool, which is why the built-in tools ship theirs precomputed.
 */
export function inputJsonSchema(schema: ToolInputSchema): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

/**
 * What is wrong with a call's arguments, one line naming each field
 * (`path: Invalid input: expected string, received number; limit: …`): the reason in
 * {@link invalidArguments}, which {@link toolErrorLine} shows the user (`✗ read: invalid arguments: …`).
 */
function argumentProblems(error: z.core.$ZodError, input: unknown): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(input)"}: ${issueText(i, input)}`).join("; ");
}

/**
 * zod's message for one issue, but for a required argument left out or sent as `null`: zod says
 * "received undefined" for both (the nulls are dropped before it looks, {@link parseToolArguments}),
 * which names neither what the model sent nor what to do.
 */
function issueText(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.code !== "invalid_type" || !issue.message.endsWith("received undefined")) return issue.message;
  const sent = valueAt(input, issue.path);
  if (sent === null) return issue.message.replace(/received undefined$/, "received null");
  if (sent === undefined) return `required: expected ${issue.expected}`;
  return issue.message;
}

/**
 * Formats a zod error as one line for the model: `INVALID_ARGUMENTS: read: path: expected string.
 * Fix the arguments …`.
 * @param input the arguments as the model sent them, so that a required one it left out reads
 *   `path: required: expected string`, and one it sent as `null` says so
 */
export function invalidArguments(tool: string, error: z.core.$ZodError, input: unknown): string {
  return `INVALID_ARGUMENTS: ${tool}: ${argumentProblems(error, input)}. ${FIX_ARGUMENTS}`;
}

/** What {@link invalidArguments} tells the model to do; {@link toolErrorLine} leaves it out for the user. */
const FIX_ARGUMENTS = "Fix the arguments to match the tool's schema and call it again.";
/** How {@link invalidJson}'s instruction to the model starts; {@link toolErrorLine} leaves it out for the user. */
const RESEND_CALL = "Resend the call with";
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** {@link invalidArguments}'s text, read back: the problems. */
const INVALID_ARGUMENTS_TEXT = new RegExp(`^INVALID_ARGUMENTS: [^:\\n]+: ([\\s\\S]*)\\. ${escaped(FIX_ARGUMENTS)}$`);
/** {@link invalidJson}'s text, read back: what the arguments were instead of an object, if JSON, and the arguments. */
const INVALID_JSON_TEXT = new RegExp(`^INVALID_JSON: the arguments of \\S+ (?:were not complete JSON|must be one JSON object, got (.+?)) \\(([\\s\\S]*)\\)\\. ${escaped(RESEND_CALL)} `);

/**
 * The result for a call whose arguments are not a JSON object: complete JSON of another kind
 * (`[1]`, `"a.ts"`) is named as such, since "not complete JSON" would send the model looking for
 * a cut it never made. {@link toolErrorLine} reads it back for the user.
 */
export function invalidJson(tool: string, raw: string): string {
  let kind: string | undefined;
  try {
    const v: unknown = JSON.parse(raw);
    kind = Array.isArray(v) ? "an array" : v === null ? "null" : `a ${typeof v}`;
  } catch {
    // not JSON at all: cut short (max_tokens) or malformed
  }
  if (kind) return `INVALID_JSON: the arguments of ${tool} must be one JSON object, got ${kind} (${truncate(raw, 200)}). ${RESEND_CALL} the arguments as a JSON object.`;
  return `INVALID_JSON: the arguments of ${tool} were not complete JSON (${truncate(raw, 200)}). ${RESEND_CALL} the complete JSON arguments.`;
}

/** `s` cut to `n` characters, with `…` when cut. */
function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/**
 * Drops `null` values of optional top-level arguments: many models send `null` for an unused
 * argument, which LARIK-REFERENCE §3 says is tolerated.
 */
function dropNulls(input: unknown): unknown {
  if (!input || typeof input !== "object" || Array.isArray(input)) return input;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (v !== null) out[k] = v;
  return out;
}

/** `input` without the object keys at `paths` whose value is `null` (array elements are never removed). */
function withoutNulls(input: unknown, paths: PropertyKey[][]): unknown {
  const copy: unknown = structuredClone(input);
  for (const path of paths) {
    let parent: unknown = copy;
    for (const key of path.slice(0, -1)) parent = (parent as Record<PropertyKey, unknown> | undefined)?.[key];
    const last = path.at(-1)!;
    if (parent && typeof parent === "object" && !Array.isArray(parent) && (parent as Record<PropertyKey, unknown>)[last] === null) {
      delete (parent as Record<PropertyKey, unknown>)[last];
    }
  }
  return copy;
}

/**
 * Validates a model's tool arguments (LARIK-REFERENCE §3): a `null` for an unused argument is
 * tolerated, at the top level (`{"offset": null}`) and inside nested objects (`multi_edit`'s
 * `{"edits": [{…, "replace_all": null}]}`). Top-level nulls are dropped first; a nested `null`
 * is dropped only where the schema rejects it, so a field that accepts `null` still receives it.
 * @returns zod's result; on failure, the error of the arguments as first checked.
 */
export function parseToolArguments<S extends ToolInputSchema>(schema: S, input: unknown): z.core.util.SafeParseResult<z.output<S>> {
  let current = dropNulls(input);
  const first = validateToolInput(schema, current);
  let result = first;
  // Each round drops the nulls zod named; a few rounds cover nulls hidden behind an earlier error.
  for (let round = 0; round < 3 && !result.success; round++) {
    const paths = result.error.issues.map((i) => i.path).filter((p) => p.length > 0 && valueAt(current, p) === null);
    if (paths.length === 0) break;
    current = withoutNulls(current, paths);
    result = validateToolInput(schema, current);
  }
  return result.success ? result : first;
}

/**
 * The one-line summary of a call's input that every front end's tool line shows (headless
 * `→ grep TODO in src`, the TUI's `● grep TODO in src` and its permission prompt;
 * LARIK-REFERENCE §22: "compact input ≤120 chars"): the tool's own {@link ToolDefinition.summary}
 * when it gives one, else a generic one: the first string of `command`, `path`, `file_path`,
 * `pattern`, `url`, `query`, `description`, `prompt` (`pattern in path` when both are strings),
 * else the `path`s of a `files` array (`a.ts, b.ts`), else `N items` for a `todos` array, else
 * the input as JSON, or nothing for an empty input (`{}`, a call cut short, says nothing).
 * Whitespace runs become one space and control characters (ESC, BEL, C1) are dropped: the input
 * is the model's, and no escape sequence of its own may reach a terminal.
 * Longer than `max` characters, it is cut with `…`.
 * @param tool the called tool, undefined when the model named none that is registered
 * @param max the longest result, in UTF-16 code units (default 120)
 */
export function toolInputSummary(tool: AnyTool | undefined, input: unknown, max = 120): string {
  let s: string | undefined;
  try {
    s = tool?.summary?.(input);
  } catch {
    // a plugin's summary that trips on odd input must not break the tool line
    s = undefined;
  }
  if (typeof s !== "string") s = genericSummary(input);
  s = s.replace(CONTROL_CHARS, "").replace(/\s+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** C0 but tab and newline (whitespace, folded into spaces after), DEL and C1. */
const CONTROL_CHARS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

/** {@link toolInputSummary} for a tool without a summary of its own (MCP tools, malformed calls). */
function genericSummary(input: unknown): string {
  if (!input || typeof input !== "object") return String(input ?? "");
  const o = input as Record<string, unknown>;
  const main = [o.command, o.path, o.file_path, o.pattern, o.url, o.query, o.description, o.prompt].find((v) => typeof v === "string");
  if (typeof main === "string") return typeof o.path === "string" && typeof o.pattern === "string" ? `${o.pattern} in ${o.path}` : main;
  if (Array.isArray(o.files)) return o.files.map((f) => (f && typeof (f as { path?: unknown }).path === "string" ? (f as { path: string }).path : "?")).join(", ");
  if (Array.isArray(o.todos)) return `${o.todos.length} items`;
  if (!Object.keys(o).length) return "";
  return JSON.stringify(input) ?? "";
}

/**
 * The line of a failed call's result that says what went wrong, for a front end's one-line error
 * (`larik -p`'s `✗ bash npm test: [timed out after 120 s; …]`, the TUI's `⎿` row): the last line
 * when it is the marker of what stopped the call (`[interrupted …]`, `[timed out …]`, which
 * `bash` puts after the command's output) or when the first is `bash`'s `(no output)`; else the
 * first line. The kernel's refusals of malformed calls, which end in what the model should
 * resend, read for the user: `invalid arguments: path: …`, `arguments not complete JSON: {"pa`.
 * Not cut to length and not stripped of control characters: the caller does that.
 */
export function toolErrorLine(output: string): string {
  const invalid = INVALID_ARGUMENTS_TEXT.exec(output);
  if (invalid) return `invalid arguments: ${invalid[1]}`.split("\n")[0]!;
  const json = INVALID_JSON_TEXT.exec(output);
  if (json) return (json[1] ? `arguments not a JSON object (${json[1]}): ${json[2]}` : `arguments not complete JSON: ${json[2]}`).split("\n")[0]!;
  const lines = output.split("\n");
  const last = lines.at(-1)!;
  return /^\[(interrupted|timed out)\b/.test(last) || (lines[0] === "(no output)" && lines.length > 1) ? last : lines[0]!;
}
