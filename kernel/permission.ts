/**
 * The permission checker (LARIK-REFERENCE §4): one deterministic rule engine.
 * STUB: the interface is fixed; the implementation is being written.
 */
import type { ToolKind } from "./tools.js";

/** Permission modes; `auto` may come later. */
export type PermissionMode = "default" | "accept-edits" | "plan" | "auto" | "yolo";
export const PERMISSION_MODES: readonly PermissionMode[] = ["default", "accept-edits", "plan", "auto", "yolo"];

/** One call as the checker sees it. */
export interface PermissionCall {
  tool: string;
  kind: ToolKind;
  input: unknown;
  /** What rules match: a command for bash, a path for file tools, `domain:host` for web. */
  subject?: string;
  /** Paths a write-kind call would write (absolute or relative to the checker's cwd). */
  writePaths?: string[];
  /** Bash only: the call asked to run outside the sandbox (`sandbox: false`). */
  unsandboxed?: boolean;
  /** A decision from a `preToolUse` hook, if any. */
  hook?: { decision: "allow" | "deny" | "ask"; reason?: string };
}

export interface PermissionDecision {
  decision: "allow" | "deny" | "ask";
  /** One line: why (names the rule, mode or boundary). */
  reason: string;
  /** The rule that decided, when one did. */
  rule?: string;
  /** The narrowest rule "always allow" would save (asks only). */
  suggested_rule?: string;
}

export interface CheckerOptions {
  mode: PermissionMode;
  allow?: string[];
  deny?: string[];
  /** The agent's working directory (absolute). */
  cwd: string;
  /** The file-tool boundary (git root, else cwd). */
  projectRoot: string;
  /** True when bash runs inside an OS sandbox. */
  sandboxed?: boolean;
}

export class PermissionChecker {
  mode: PermissionMode;
  readonly cwd: string;
  readonly projectRoot: string;
  sandboxed: boolean;
  allow: string[];
  deny: string[];
  constructor(opts: CheckerOptions) {
    this.mode = opts.mode;
    this.cwd = opts.cwd;
    this.projectRoot = opts.projectRoot;
    this.sandboxed = opts.sandboxed ?? false;
    this.allow = [...(opts.allow ?? [])];
    this.deny = [...(opts.deny ?? [])];
  }
  decide(call: PermissionCall): PermissionDecision {
    if (call.hook?.decision === "deny") return { decision: "deny", reason: call.hook.reason ?? "denied by a hook" };
    if (this.mode === "yolo" || call.kind === "read") return { decision: "allow", reason: this.mode };
    return { decision: "ask", reason: "needs approval" };
  }
  addAllowRule(rule: string): void {
    this.allow.push(rule);
  }
}
