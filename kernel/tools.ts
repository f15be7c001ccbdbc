/**
 * The tool contract. A tool is a value: a name, a zod input schema, safety flags and `run`.
 * The kernel alone dispatches tools (validation → preToolUse → permission → run → postToolUse),
 * so no tool runs by a path that skips the hook points (DESIGN.md, "Lessons from the field").
 */
import { z } from "zod";
import type { Image, ToolSpec } from "./types.js";
import type { Sandbox } from "./registries.js";

/** What the permission checker needs to know about a tool (LARIK-REFERENCE §4). */
export type ToolKind =
  /** Never changes anything: skips prompts, runs in plan mode, may run in parallel. */
  | "read"
  /** Writes files: project boundary, symlink and protected-path rules apply in every mode. */
  | "write"
  /** Runs a shell command: chaining, substitution and safe-list rules apply. */
  | "bash"
  /** Reaches the network: asks, may run in parallel, rules match `domain:host`. */
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
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  /** Part of the cached prompt prefix: keep it stable. */
  description: string;
  input: S;
  kind: ToolKind;
  /** Network tools that may run in parallel while still asking. Read tools are always parallel. */
  concurrencySafe?: boolean;
  /** The string permission rules match: a command, a project-relative path, `domain:host`. */
  subject?(input: z.infer<S>): string | undefined;
  /** Absolute or cwd-relative paths the call writes, for boundary checks (write tools). */
  writePaths?(input: z.infer<S>): string[];
  run(input: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** A tool with its input type erased, as held by the registry. */
export type AnyTool = ToolDefinition<z.ZodType>;

/** Identity helper that keeps the input type of `run` tied to the schema. */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}

const specCache = new WeakMap<AnyTool, ToolSpec>();

/**
 * The advertised form of a tool: JSON Schema of the *input* side (defaults are optional),
 * without `$schema`, cached per definition so the prompt prefix stays byte-stable.
 */
export function toolSpec(tool: AnyTool): ToolSpec {
  let spec = specCache.get(tool);
  if (!spec) {
    const schema = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    delete schema.$schema;
    spec = { name: tool.name, description: tool.description, input_schema: schema };
    specCache.set(tool, spec);
  }
  return spec;
}

/**
 * Formats a zod error as one line for the model: `INVALID_ARGUMENTS: path: expected string`.
 */
export function invalidArguments(tool: string, error: z.ZodError): string {
  const parts = error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(input)"}: ${i.message}`);
  return `INVALID_ARGUMENTS: ${tool}: ${parts.join("; ")}. Fix the arguments to match the tool's schema and call it again.`;
}

/**
 * Drops `null` values of optional top-level arguments: many models send `null` for an unused
 * argument, which LARIK-REFERENCE §3 says is tolerated.
 */
export function dropNulls(input: unknown): unknown {
  if (!input || typeof input !== "object" || Array.isArray(input)) return input;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (v !== null) out[k] = v;
  return out;
}
