/**
 * The permission checker (LARIK-REFERENCE §4, §19 "Permission effect", invariants 14 and 21):
 * one deterministic rule engine. `decide` is synchronous and pure apart from `lstat`/`realpath`
 * on the paths a write would touch. Hooks are automation on top: their decision arrives in
 * `call.hook` and slots into §4 "Authorization precedence".
 *
 * Decision order (first match wins):
 *  1. write-kind call outside the project, through a symlink, with `..` leaving the project, or
 *     to a protected path → deny (every mode, over every hook);
 *  2. hook deny → deny;  3. deny rule → deny;  4. hook allow → allow, hook ask → ask;
 *  5. yolo, or the `memory` tool → allow;  6. read-only kind → allow;
 *  7. plan mode → deny, except `web_fetch`/`web_search`/`browser_navigate` (continue) and
 *     `exit_plan_mode` (asks in plan mode, allowed elsewhere);
 *  8. allow rule → allow;  9. bash in the sandbox (not `sandbox:false`) → allow;
 * 10. bash on the safe list → allow;  11. write-kind in accept-edits/auto inside cwd → allow;
 * 12. ask, with the narrowest "always allow" rule.
 */
import { lstatSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import picomatch from "picomatch";
import { cdTarget, collapseBlanks, denyCandidates, isSafeListed, leadsAnotherCommand, splitBashCommand, stripBenignRedirections } from "./bash-split.js";
import { expandHome, isInside, toPosix } from "./paths.js";
import type { ToolKind } from "./tools.js";

/** Permission modes (§4); `auto` asks a model before prompting, which the agent does. */
export type PermissionMode = "default" | "accept-edits" | "plan" | "auto" | "yolo";
/** The accepted modes, in the order `--mode`, `/mode` and errors list them. */
export const PERMISSION_MODES: readonly PermissionMode[] = ["default", "accept-edits", "plan", "auto", "yolo"];

/** One call as the checker sees it. */
export interface PermissionCall {
  tool: string;
  kind: ToolKind;
  input: unknown;
  /**
   * What rules match: a command for bash, a path for file tools, `domain:host` for web. When
   * absent, bash falls back to `input.command` and web tools to the host of `input.url`.
   */
  subject?: string;
  /** Paths a write-kind call would write (absolute or relative to the checker's cwd). */
  writePaths?: string[];
  /** Bash only: the call asked to run outside the sandbox (`sandbox: false`). */
  unsandboxed?: boolean;
  /** A decision from a `preToolUse` hook, if any. */
  hook?: { decision: "allow" | "deny" | "ask"; reason?: string };
}

/** The checker's answer for one call (§4 decision order). */
export interface PermissionDecision {
  decision: "allow" | "deny" | "ask";
  /** One line: why (names the rule, mode or boundary). */
  reason: string;
  /** The rule that decided, when one did. */
  rule?: string;
  /** The narrowest rule "always allow" would save (asks only); absent when none would help. */
  suggested_rule?: string;
  /**
   * Which step decided. Auto mode skips its model check when `by` is `"hook"` (a hook asked)
   * or `"plan"` (exit_plan_mode), §4 "Auto mode".
   */
  by?: DecidedBy;
}

/** The step of the decision order that decided a call. */
export type DecidedBy = "boundary" | "hook" | "rule" | "mode" | "plan" | "sandbox" | "safe-list" | "default";

/** What a {@link PermissionChecker} is built from: the mode, the rules (§4 grammar) and the boundary. */
export interface CheckerOptions {
  mode: PermissionMode;
  /** Allow rules; only from trusted files (personal config, private project settings). */
  allow?: string[];
  /** Deny rules, from any settings file. */
  deny?: string[];
  /** The agent's working directory (absolute). */
  cwd: string;
  /** The file-tool boundary (git root, else cwd). */
  projectRoot: string;
  /** True when bash runs inside an OS sandbox. */
  sandboxed?: boolean;
  /**
   * The environment commands run with (default `process.env`). Only `CDPATH` is read: when it
   * is set, `cd web` may leave the project, so the `cd` exception of bash chaining asks.
   */
  env?: NodeJS.ProcessEnv;
}

/** A parsed `tool` or `tool(pattern)` rule. */
export interface ParsedRule {
  /** The rule as written (trimmed). */
  text: string;
  /** The tool name part, `[\w-]+`. */
  tool: string;
  /** The pattern; undefined for a bare rule, an empty pattern or `*` (the whole tool). */
  pattern?: string;
}

const RULE_SYNTAX = /^([\w-]+)(?:\(([^]*)\))?$/;

/**
 * Parses a permission rule (§4 grammar: `tool` or `tool(pattern)`, name `[\w-]+`).
 * @throws Error with a one-line message naming the rule when it does not fit the grammar.
 */
export function parseRule(rule: string): ParsedRule {
  const text = rule.trim();
  const m = RULE_SYNTAX.exec(text);
  if (!m) throw new Error(`permission rule "${rule}" is not \`tool\` or \`tool(pattern)\` (tool names are letters, digits, _ and -)`);
  const raw = m[2]?.trim();
  return { text, tool: m[1]!, pattern: raw === undefined || raw === "" || raw === "*" ? undefined : raw };
}

function tryParse(rule: string): ParsedRule | undefined {
  try {
    return parseRule(rule);
  } catch {
    return undefined;
  }
}

/** Tools that rules and modes treat as another tool (§3: multi_edit as edit; write_files per file as write). */
const RULE_ALIASES: Record<string, string> = { multi_edit: "edit", apply_code_action: "edit", write_files: "write" };
/** Web tools whose rules match `domain:host`. */
const DOMAIN_TOOLS = new Set(["web_fetch", "browser_navigate"]);
/** Tools that keep going in plan mode instead of being denied (§4 step 5). */
const PLAN_NETWORK_TOOLS = new Set(["web_fetch", "web_search", "browser_navigate"]);
/** Commands whose "always allow" suggestion keeps the subcommand (§4). */
const SUBCOMMAND_TOOLS = new Set(["git", "go", "npm", "pnpm", "yarn", "cargo", "docker", "kubectl", "make", "uv", "bun"]);

/** True when a rule naming `ruleTool` covers calls of `tool`. */
function ruleCoversTool(ruleTool: string, tool: string): boolean {
  if (ruleTool === tool || RULE_ALIASES[tool] === ruleTool) return true;
  return ruleTool.startsWith("mcp__") && tool.startsWith(`${ruleTool}__`);
}

function isBash(call: PermissionCall): boolean {
  return call.kind === "bash" || call.tool === "bash";
}

function field(input: unknown, key: string): unknown {
  return input && typeof input === "object" ? (input as Record<string, unknown>)[key] : undefined;
}

function bashCommand(call: PermissionCall): string | undefined {
  if (call.subject !== undefined) return call.subject;
  const c = field(call.input, "command");
  return typeof c === "string" ? c : undefined;
}

function normHost(h: string): string {
  let host = h.trim().toLowerCase();
  if (host.startsWith("*.")) host = host.slice(2);
  if (host.startsWith("[")) host = host.slice(0, host.indexOf("]") + 1);
  else host = host.replace(/:\d+$/, "");
  return host.replace(/\.+$/, "");
}

/** The host a web subject names, from `domain:host` or a URL; undefined if neither. */
function subjectHost(s: string): string | undefined {
  if (s.startsWith("domain:")) return normHost(s.slice(7)) || undefined;
  try {
    return normHost(new URL(s).hostname) || undefined;
  } catch {
    return undefined;
  }
}

/** The host a web call reaches: its subject's, else its `url` input's. */
function webHost(call: PermissionCall): string | undefined {
  const s = call.subject ?? (typeof field(call.input, "url") === "string" ? (field(call.input, "url") as string) : undefined);
  return s === undefined ? undefined : subjectHost(s);
}

/** The realpath of `p`, or `p` itself when it cannot be resolved. */
function canonical(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The realpath of the deepest existing ancestor of `p`, with the missing tail re-attached. */
function canonicalDeep(p: string): string {
  let cur = p;
  const tail: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(cur), ...tail.reverse());
    } catch {
      const up = dirname(cur);
      if (up === cur) return p;
      tail.push(cur.slice(up.length).replace(/^[\\/]+/, ""));
      cur = up;
    }
  }
}

function isSymlink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Entries inside a `.git` directory that could redirect git (§4, invariant 21). */
const PROTECTED_IN_GIT = new Set(["hooks", "config", "config.worktree", "commondir", "info", "modules", "worktrees"]);

/**
 * Why a project-relative path is protected (§4 "Protected paths"), or undefined: `.git` itself,
 * `.git/{hooks,config,config.worktree,commondir,info,modules,worktrees}`, `.larik/`, `.claude/`,
 * `.mcp.json`. Checked at any depth and case-insensitively (a nested repository's `.git` is just
 * as dangerous, and macOS file systems ignore case). The one list for the checker, the
 * checkpoint store and the file tools.
 */
export function protectedPathReason(relPath: string): string | undefined {
  const comps = toPosix(relPath).split("/").filter((c) => c && c !== ".").map((c) => c.toLowerCase());
  for (let i = 0; i < comps.length; i++) {
    const c = comps[i]!;
    if (c === ".larik" || c === ".claude") return `${c}/ is protected: it holds Larik and agent settings`;
    if (c === ".mcp.json") return ".mcp.json is protected: it configures MCP servers";
    if (c === ".git") {
      const next = comps[i + 1];
      if (next === undefined) return ".git itself is protected: it is the repository";
      if (PROTECTED_IN_GIT.has(next)) return `.git/${next} is protected: it could change what git runs`;
    }
  }
  return undefined;
}

/** A compiled bash pattern: `*` matches any characters, the rest is literal, anchored at both ends. */
function bashPatternRegex(pattern: string): RegExp {
  const body = collapseBlanks(pattern)
    .split("*")
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^]*");
  return new RegExp(`(?:${body})$`, "y");
}

function bashPatternMatches(pattern: string, part: string, starts: number[] = [0]): boolean {
  const re = bashPatternRegex(pattern);
  return starts.some((s) => {
    re.lastIndex = s;
    return re.test(part);
  });
}

const globCache = new Map<string, (s: string) => boolean>();
function glob(pattern: string): (s: string) => boolean {
  let m = globCache.get(pattern);
  if (!m) {
    try {
      m = picomatch(pattern, { dot: true });
    } catch {
      m = () => false;
    }
    globCache.set(pattern, m);
  }
  return m;
}

/**
 * The checker. Fields are public and mutable so a mode switch (shift+tab, `/mode`) or
 * `/permissions` edit applies to the next call, including calls of running subagents that
 * share this instance.
 */
export class PermissionChecker {
  mode: PermissionMode;
  readonly cwd: string;
  readonly projectRoot: string;
  sandboxed: boolean;
  allow: string[];
  deny: string[];
  readonly #env: NodeJS.ProcessEnv;
  constructor(opts: CheckerOptions) {
    this.mode = opts.mode;
    this.cwd = resolve(opts.cwd);
    this.projectRoot = resolve(opts.projectRoot);
    this.sandboxed = opts.sandboxed ?? false;
    this.allow = [...(opts.allow ?? [])];
    this.deny = [...(opts.deny ?? [])];
    this.#env = opts.env ?? process.env;
  }

  /**
   * A copy of this checker in `mode` (same folders, rules, sandbox and environment), to learn
   * what a call would get there: `-p` names only the `--mode` values that would allow a denied
   * call.
   */
  withMode(mode: PermissionMode): PermissionChecker {
    return new PermissionChecker({ mode, cwd: this.cwd, projectRoot: this.projectRoot, sandboxed: this.sandboxed, allow: this.allow, deny: this.deny, env: this.#env });
  }

  /** Decides one call (see the file comment for the order). Never throws. */
  decide(call: PermissionCall): PermissionDecision {
    // 1. The project boundary holds over every mode, rule and hook (invariants 14, 21).
    if (call.kind === "write" && call.tool !== "memory") {
      const why = this.writeBoundaryViolation(call.writePaths ?? (call.subject !== undefined ? [call.subject] : []));
      if (why) return { decision: "deny", reason: why, by: "boundary" };
    }
    // 2–4. Hook deny > rule deny > hook allow/ask (§4 "Authorization precedence").
    if (call.hook?.decision === "deny") return { decision: "deny", reason: call.hook.reason ? `denied by a hook: ${call.hook.reason}` : "denied by a hook", by: "hook" };
    const denyRule = this.#matchDeny(call);
    if (denyRule) return { decision: "deny", reason: `denied by rule ${denyRule}`, rule: denyRule, by: "rule" };
    // The plan approval prompt is the approval: no hook or rule may skip it (§3 exit_plan_mode).
    if (call.tool === "exit_plan_mode" && this.mode === "plan") return { decision: "ask", reason: "exit_plan_mode asks for plan approval", by: "plan" };
    if (call.hook?.decision === "allow") return { decision: "allow", reason: call.hook.reason ? `allowed by a hook: ${call.hook.reason}` : "allowed by a hook", by: "hook" };
    if (call.hook?.decision === "ask") {
      return this.#ask(call, call.hook.reason ? `a hook asks for confirmation: ${call.hook.reason}` : "a hook asks for confirmation", "hook");
    }
    // 5–6.
    if (this.mode === "yolo") return { decision: "allow", reason: "yolo mode", by: "mode" };
    if (call.tool === "memory") return { decision: "allow", reason: "the memory tool is always allowed", by: "mode" };
    if (call.kind === "read") return { decision: "allow", reason: "read-only tool", by: "mode" };
    // 7.
    if (call.tool === "exit_plan_mode") return { decision: "allow", reason: "exit_plan_mode outside plan mode", by: "mode" };
    if (this.mode === "plan" && !PLAN_NETWORK_TOOLS.has(call.tool)) {
      // not "use exit_plan_mode": a preset may offer no such tool (the default one does not)
      return { decision: "deny", reason: `plan mode: ${call.tool} is blocked until the plan is approved; use read-only tools, then present the plan`, by: "plan" };
    }
    // 8.
    const allowRule = this.#matchAllow(call, this.#parsed(this.allow));
    if (allowRule) return { decision: "allow", reason: `allowed by rule ${allowRule}`, rule: allowRule, by: "rule" };
    if (isBash(call)) {
      // 9. §19: a confined command runs without asking; `sandbox: false` asks and says so.
      if (this.sandboxed && !call.unsandboxed) return { decision: "allow", reason: "runs inside the sandbox", by: "sandbox" };
      // 10. Sandboxed, only `sandbox: false` gets here: the unconfined run asks (§19) even for `ls`.
      const cmd = bashCommand(call);
      if (cmd !== undefined && !this.sandboxed && isSafeListed(cmd)) return { decision: "allow", reason: "on the safe list", by: "safe-list" };
      return this.#ask(call, this.#bashAskReason(call));
    }
    // 11.
    if (call.kind === "write" && (this.mode === "accept-edits" || this.mode === "auto")) {
      const paths = call.writePaths ?? (call.subject !== undefined ? [call.subject] : []);
      if (paths.length && paths.every((p) => isInside(this.cwd, resolve(this.cwd, expandHome(p))))) {
        return { decision: "allow", reason: `${this.mode} mode allows edits inside the working directory`, by: "mode" };
      }
    }
    return this.#ask(call, `${call.tool} needs approval`);
  }

  /** Adds an allow rule for the rest of the session ("always allow"); the agent persists it. */
  addAllowRule(rule: string): void {
    if (!this.allow.includes(rule)) this.allow.push(rule);
  }

  /**
   * Why writing these paths is refused whatever the mode (§4 step 1), or undefined when all
   * are fine: outside the project, a symlink component below the project root (each existing
   * component is `lstat`ed, including the last), a `..` step that leaves the project, or a
   * protected path. Relative paths are taken from `cwd`.
   */
  writeBoundaryViolation(paths: string[]): string | undefined {
    const canonRoot = canonical(this.projectRoot);
    for (const p of paths) {
      if (p.includes("\0")) return `refusing to write ${JSON.stringify(p)}: the path contains a NUL byte`;
      const expanded = expandHome(p);
      const abs = resolve(this.cwd, expanded);
      // A tool may hand over a realpath (macOS /private/var…) for a root given through a symlink.
      const root = isInside(this.projectRoot, abs) ? this.projectRoot : isInside(canonRoot, abs) ? canonRoot : undefined;
      if (!root) return `refusing to write ${p}: outside the project (${this.projectRoot})`;
      const symlinkAt = (dir: string): string | undefined =>
        dir !== root && isInside(root, dir) && isSymlink(dir) ? `refusing to write ${p}: ${toPosix(relative(root, dir))} is a symlink` : undefined;
      // Walk the path as written from where it starts, so `link/..` is seen passing through `link`.
      let cur = isAbsolute(expanded) ? resolve("/") : this.cwd;
      if (!isAbsolute(expanded)) {
        // Components of cwd below the root count too: a symlinked cwd would move the boundary.
        let c = root;
        for (const w of relative(root, this.cwd).split(sep).filter(Boolean)) {
          c = join(c, w);
          const why = symlinkAt(c);
          if (why) return why;
        }
      }
      let wasInside = isInside(root, cur);
      for (const comp of expanded.split(/[\\/]+/)) {
        if (comp === "" || comp === ".") continue;
        cur = comp === ".." ? dirname(cur) : join(cur, comp);
        const inside = isInside(root, cur);
        if (wasInside && !inside) return `refusing to write ${p}: \`..\` leaves the project`;
        wasInside ||= inside;
        const why = symlinkAt(cur);
        if (why) return why;
      }
      const canon = canonicalDeep(abs);
      if (!isInside(canonRoot, canon)) return `refusing to write ${p}: it resolves outside the project (${canon})`;
      const prot = protectedPathReason(relative(root, abs)) ?? protectedPathReason(relative(canonRoot, canon));
      if (prot) return `refusing to write ${p}: ${prot}`;
    }
    return undefined;
  }

  /** The suggestion for an ask, checked to really allow the call once saved (else none). */
  #ask(call: PermissionCall, reason: string, by: DecidedBy = "default"): PermissionDecision {
    const d: PermissionDecision = { decision: "ask", reason, by };
    const host = DOMAIN_TOOLS.has(call.tool) ? webHost(call) : undefined;
    const subject = isBash(call) ? bashCommand(call) : DOMAIN_TOOLS.has(call.tool) ? host && `domain:${host}` : call.subject;
    const rule = suggestRule(call.tool, subject);
    if (rule) {
      const parsed = tryParse(rule);
      if (parsed && this.#matchAllow(call, [parsed])) d.suggested_rule = rule;
    }
    return d;
  }

  #bashAskReason(call: PermissionCall): string {
    const cmd = bashCommand(call);
    if (cmd === undefined) return "bash needs approval: no command";
    if (this.sandboxed && call.unsandboxed) return "bash with sandbox:false runs unconfined (outside the sandbox) and needs approval";
    const { hazards } = splitBashCommand(cmd);
    if (hazards.length) return `bash needs approval: ${hazards[0]} is never allowed by a rule pattern`;
    return "bash needs approval";
  }

  #parsed(rules: string[]): ParsedRule[] {
    return rules.map(tryParse).filter((p) => p !== undefined);
  }

  /** Path subjects of a call: the subject and every write path, each as [cwd-relative?, absolute]. */
  #pathSubjects(call: PermissionCall): string[][] {
    const raw = [...(call.subject !== undefined ? [call.subject] : []), ...(call.writePaths ?? [])];
    const seen = new Set<string>();
    const out: string[][] = [];
    for (const p of raw) {
      const abs = resolve(this.cwd, expandHome(p));
      if (seen.has(abs)) continue;
      seen.add(abs);
      const forms = [toPosix(abs)];
      if (isInside(this.cwd, abs)) forms.unshift(toPosix(relative(this.cwd, abs)) || ".");
      out.push(forms);
    }
    return out;
  }

  #pathMatches(pattern: string, forms: string[]): boolean {
    let pat = expandHome(pattern);
    while (pat.startsWith("./")) pat = pat.slice(2);
    const m = glob(pat);
    return isAbsolute(pat) ? m(forms[forms.length - 1]!) : forms.length > 1 && m(forms[0]!);
  }

  /** True when a non-bash rule pattern matches the call; `every` asks all path subjects to match. */
  #subjectMatches(rule: ParsedRule, call: PermissionCall, every: boolean): boolean {
    if (rule.pattern === undefined) return true;
    if (call.tool.startsWith("mcp__")) return false;
    if (DOMAIN_TOOLS.has(call.tool) || call.subject?.startsWith("domain:")) {
      if (!rule.pattern.startsWith("domain:")) return false;
      const want = normHost(rule.pattern.slice(7));
      const host = webHost(call);
      return !!want && !!host && (host === want || host.endsWith(`.${want}`));
    }
    const subjects = this.#pathSubjects(call);
    if (!subjects.length) return false;
    return every ? subjects.every((f) => this.#pathMatches(rule.pattern!, f)) : subjects.some((f) => this.#pathMatches(rule.pattern!, f));
  }

  #matchDeny(call: PermissionCall): string | undefined {
    for (const rule of this.#parsed(this.deny)) {
      if (!ruleCoversTool(rule.tool, call.tool)) continue;
      if (isBash(call)) {
        if (rule.pattern === undefined) return rule.text;
        const cmd = bashCommand(call);
        if (cmd === undefined) continue;
        for (const part of splitBashCommand(cmd).parts) {
          if (denyCandidates(part).some((c) => bashPatternMatches(rule.pattern!, c.text, c.starts))) return rule.text;
        }
      } else if (this.#subjectMatches(rule, call, false)) {
        return rule.text;
      }
    }
    return undefined;
  }

  #matchAllow(call: PermissionCall, rules: ParsedRule[]): string | undefined {
    const mine = rules.filter((r) => ruleCoversTool(r.tool, call.tool));
    if (!mine.length) return undefined;
    if (!isBash(call)) return mine.find((r) => this.#subjectMatches(r, call, true))?.text;
    const whole = mine.find((r) => r.pattern === undefined);
    if (whole) return whole.text;
    const cmd = bashCommand(call);
    if (cmd === undefined) return undefined;
    const { parts, hazards } = splitBashCommand(cmd);
    if (hazards.length || !parts.length) return undefined;
    let decided: string | undefined;
    const dirs = new Set([this.cwd]);
    for (const part of parts) {
      const hit = mine.find((r) => bashPatternMatches(r.pattern!, part));
      if (hit) {
        decided ??= hit.text;
        continue;
      }
      const target = cdTarget(part);
      if (target !== undefined) {
        const next = this.#cdInside(target, dirs);
        if (next) {
          dirs.add(next);
          continue;
        }
        return undefined;
      }
      if (isSafeListed(part)) continue;
      return undefined;
    }
    return decided;
  }

  /**
   * Where `cd <target>` leads when it stays inside the project from every directory the command
   * may be in by then (subshells and pipes make the real one uncertain); undefined otherwise.
   */
  #cdInside(target: string, dirs: Set<string>): string | undefined {
    if (!target || /[$~`"'\\*?[\]{}]/.test(target) || target.startsWith("-")) return undefined;
    // bash looks a relative name up in CDPATH first (not `.`, `..`, `./x`, `../x`), so with
    // CDPATH set, `cd web` may land in ~/src/web: the directory is not known.
    const viaCdPath = !isAbsolute(target) && !/^\.\.?(\/|$)/.test(target);
    if (viaCdPath && this.#env.CDPATH) return undefined;
    const canonRoot = canonical(this.projectRoot);
    let last: string | undefined;
    for (const d of dirs) {
      const abs = resolve(d, target);
      if (!isInside(this.projectRoot, abs) || !isInside(canonRoot, canonicalDeep(abs))) return undefined;
      last = abs;
    }
    return last;
  }
}

/**
 * The narrowest "always allow" rule for a call (§4): bash → `bash(<cmd> <sub>*)` for git, go,
 * npm, pnpm, yarn, cargo, docker, kubectl, make, uv, bun when the second word is not a flag,
 * else `bash(<first word>*)` — for a chain, the rule for its parts when they all agree (`cd`
 * parts aside), else none; a command with a hazard (substitution, redirection, …) gets none,
 * since no pattern would allow it; a command led by a wrapper or reserved word (`sudo`,
 * `timeout`, `nohup`, `bash script.sh`, `time`, …) gets none, since `bash(sudo*)` would allow
 * every command behind it (a deliberate narrowing of §4's "first word" rule). `web_fetch`/`browser_navigate` → `tool(domain:host)`;
 * `exit_plan_mode` → none; anything else → the bare tool name.
 *
 * @param subject the command (bash), `domain:host` or a URL (web), ignored otherwise.
 */
export function suggestRule(tool: string, subject?: string): string | undefined {
  if (tool === "exit_plan_mode") return undefined;
  if (tool === "bash") {
    if (subject === undefined) return undefined;
    const { parts, hazards } = splitBashCommand(subject);
    if (hazards.length) return undefined;
    const rules = new Set<string>();
    const nonCd = parts.filter((p) => cdTarget(p) === undefined);
    for (const part of nonCd.length ? nonCd : parts) {
      const words = part.split(" ");
      const first = words[0]!;
      if (first.includes("*") || leadsAnotherCommand(first)) return undefined;
      const sub = words[1];
      rules.add(SUBCOMMAND_TOOLS.has(first) && sub && !sub.startsWith("-") && !sub.includes("*") ? `bash(${first} ${sub}*)` : `bash(${first}*)`);
    }
    return rules.size === 1 ? [...rules][0] : undefined;
  }
  if (DOMAIN_TOOLS.has(tool)) {
    const host = subject === undefined ? undefined : subjectHost(subject);
    return host && /^[\w.\-[\]:]+$/.test(host) ? `${tool}(domain:${host})` : undefined;
  }
  return tool;
}

/** One rule that can never match, and why (for a start-up warning). */
export interface UnmatchableRule {
  rule: string;
  why: string;
}

function balanced(s: string): boolean {
  let depth = 0;
  for (const c of s) {
    if (c === "(") depth++;
    else if (c === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

/**
 * Why `rule` is not a rule at all (`tool` or `tool(pattern)`, parentheses balanced), or
 * undefined when it is one. The settings check uses it: such a rule in a personal file is an
 * error naming the key, in a shared file it is dropped with a notice.
 */
export function ruleSyntaxProblem(rule: string): string | undefined {
  const m = /^([\w-]+)\(([^]*)\)$/.exec(rule.trim());
  if (m && !balanced(m[2]!)) return "unbalanced parentheses in the pattern";
  if (tryParse(rule)) return undefined;
  return balanced(rule) ? "not `tool` or `tool(pattern)` (tool names are letters, digits, _ and -)" : "unbalanced parentheses";
}

/**
 * Lists rules that can never match, so the host can warn at start-up (DESIGN.md "Warn about
 * rules that can never match"): text outside the grammar, unbalanced parentheses, a tool name
 * not in `toolNames` (when given; `mcp__server` counts when a tool of that server is listed),
 * a bash pattern containing a character commands are split on (`; & | ( )`, newline, backtick),
 * an allow pattern whose every match would carry a hazard (`$(`, `>`, `eval`, `sh -c`, …),
 * a web pattern that is not `domain:host`, a pattern on an MCP rule, and `exit_plan_mode` in
 * the allow list.
 *
 * @param list which list the rules come from: hazards only make allow rules unmatchable.
 */
export function unmatchableRules(rules: string[], toolNames?: readonly string[], list: "allow" | "deny" = "allow"): UnmatchableRule[] {
  const out: UnmatchableRule[] = [];
  const known = toolNames ? new Set(toolNames) : undefined;
  for (const rule of rules) {
    const syntax = ruleSyntaxProblem(rule);
    if (syntax) {
      out.push({ rule, why: syntax });
      continue;
    }
    const parsed = tryParse(rule)!;
    const { tool, pattern } = parsed;
    if (known) {
      const covers = [...known].some((t) => ruleCoversTool(tool, t));
      if (!covers) {
        const near = [...known].find((t) => t.toLowerCase() === tool.toLowerCase());
        out.push({ rule, why: `no tool is named "${tool}"${near ? ` (tool names are case-sensitive: did you mean ${near}?)` : ""}` });
        continue;
      }
    }
    if (list === "allow" && tool === "exit_plan_mode") {
      out.push({ rule, why: "exit_plan_mode always asks in plan mode; the approval is never a standing rule" });
      continue;
    }
    if (pattern === undefined) continue;
    if (tool === "bash") {
      const sep = /[;&|()\n\r`]/.exec(pattern);
      if (sep) {
        out.push({ rule, why: `bash patterns are matched per command part, so \`${sep[0] === "\n" ? "\\n" : sep[0]}\` (a split point) can never appear` });
        continue;
      }
      if (collapseBlanks(stripBenignRedirections(pattern)) !== collapseBlanks(pattern)) {
        out.push({ rule, why: "`2>&1` and redirections to /dev/null are removed from commands before matching, so a pattern can't contain them" });
        continue;
      }
      if (list === "allow") {
        const { hazards } = splitBashCommand(pattern.replaceAll("*", " "));
        if (hazards.length) out.push({ rule, why: `every command it matches has ${hazards[0]}, which a pattern never allows (use a bare \`bash\` rule or answer the prompt)` });
      }
      continue;
    }
    if (tool.startsWith("mcp__")) {
      out.push({ rule, why: "MCP rules take no pattern: write the bare tool name or `mcp__<server>`" });
      continue;
    }
    if (DOMAIN_TOOLS.has(tool)) {
      if (!pattern.startsWith("domain:")) out.push({ rule, why: `${tool} patterns must be \`domain:<host>\`` });
      else if (!normHost(pattern.slice(7))) out.push({ rule, why: "`domain:` needs a host" });
    }
  }
  return out;
}
