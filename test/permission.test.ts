/**
 * The permission checker (LARIK-REFERENCE §4, §19, invariants 14 and 21): modes × kinds, hook
 * precedence, the write boundary with real symlinks in temp dirs, protected paths, rule grammar,
 * suggestions and unmatchable-rule warnings.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  PERMISSION_MODES,
  PermissionChecker,
  parseRule,
  protectedPathReason,
  suggestRule,
  unmatchableRules,
  type PermissionCall,
  type PermissionMode,
} from "../kernel/permission.js";

let root: string;
let outside: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "larik-perm-")));
  outside = realpathSync(mkdtempSync(join(tmpdir(), "larik-perm-out-")));
  mkdirSync(join(root, "src"), { recursive: true });
  mkdirSync(join(root, "sub", "deep"), { recursive: true });
  mkdirSync(join(root, ".git", "hooks"), { recursive: true });
  writeFileSync(join(root, "src", "a.ts"), "x");
  writeFileSync(join(outside, "secret.txt"), "s");
  symlinkSync(outside, join(root, "link"));
  symlinkSync(join(outside, "secret.txt"), join(root, "file-link"));
  symlinkSync(join(root, "src"), join(root, "alias"));
  symlinkSync(join(root, "sub"), join(root, "sublink"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function checker(mode: PermissionMode, opts: { allow?: string[]; deny?: string[]; sandboxed?: boolean; cwd?: string; projectRoot?: string } = {}) {
  return new PermissionChecker({ mode, cwd: opts.cwd ?? root, projectRoot: opts.projectRoot ?? root, allow: opts.allow, deny: opts.deny, sandboxed: opts.sandboxed });
}
const write = (path: string, extra: Partial<PermissionCall> = {}): PermissionCall => ({ tool: "write", kind: "write", input: { path }, subject: path, writePaths: [path], ...extra });
const bash = (command: string, extra: Partial<PermissionCall> = {}): PermissionCall => ({ tool: "bash", kind: "bash", input: { command }, subject: command, ...extra });

describe("modes × kinds (§4 steps 3–10)", () => {
  const calls: Record<string, PermissionCall> = {
    read: { tool: "read", kind: "read", input: { path: "src/a.ts" }, subject: "src/a.ts" },
    write: write("src/a.ts"),
    bash: bash("npm run build"),
    web_fetch: { tool: "web_fetch", kind: "network", input: { url: "https://example.com/" }, subject: "domain:example.com" },
    web_search: { tool: "web_search", kind: "network", input: { query: "x" } },
    browser_navigate: { tool: "browser_navigate", kind: "network", input: { url: "https://example.com/" } },
    "other network": { tool: "mcp__fetcher__get", kind: "network", input: {} },
    other: { tool: "browser_click", kind: "other", input: { ref: "e1" } },
    memory: { tool: "memory", kind: "other", input: { action: "save" } },
    exit_plan_mode: { tool: "exit_plan_mode", kind: "other", input: { plan: "p" } },
  };
  const expected: Record<string, Record<PermissionMode, "allow" | "ask" | "deny">> = {
    read: { default: "allow", "accept-edits": "allow", plan: "allow", auto: "allow", yolo: "allow" },
    write: { default: "ask", "accept-edits": "allow", plan: "deny", auto: "allow", yolo: "allow" },
    bash: { default: "ask", "accept-edits": "ask", plan: "deny", auto: "ask", yolo: "allow" },
    web_fetch: { default: "ask", "accept-edits": "ask", plan: "ask", auto: "ask", yolo: "allow" },
    web_search: { default: "ask", "accept-edits": "ask", plan: "ask", auto: "ask", yolo: "allow" },
    browser_navigate: { default: "ask", "accept-edits": "ask", plan: "ask", auto: "ask", yolo: "allow" },
    "other network": { default: "ask", "accept-edits": "ask", plan: "deny", auto: "ask", yolo: "allow" },
    other: { default: "ask", "accept-edits": "ask", plan: "deny", auto: "ask", yolo: "allow" },
    memory: { default: "allow", "accept-edits": "allow", plan: "allow", auto: "allow", yolo: "allow" },
    exit_plan_mode: { default: "allow", "accept-edits": "allow", plan: "ask", auto: "allow", yolo: "allow" },
  };
  for (const [name, call] of Object.entries(calls)) {
    for (const mode of PERMISSION_MODES) {
      test(`${name} in ${mode} → ${expected[name]![mode]}`, () => {
        expect(checker(mode).decide(call).decision).toBe(expected[name]![mode]);
      });
    }
  }

  test("sandboxed bash in every mode", () => {
    const want: Record<PermissionMode, string> = { default: "allow", "accept-edits": "allow", plan: "deny", auto: "allow", yolo: "allow" };
    for (const mode of PERMISSION_MODES) expect(checker(mode, { sandboxed: true }).decide(bash("make")).decision, mode).toBe(want[mode]);
  });

  test("accept-edits allows writes inside cwd only; the rest of the project asks", () => {
    const c = checker("accept-edits", { cwd: join(root, "sub") });
    expect(c.decide(write("deep/x.ts")).decision).toBe("allow");
    expect(c.decide(write("../src/a.ts")).decision).toBe("ask");
  });

  test("accept-edits: write_files with one path outside cwd asks for the whole call", () => {
    const c = checker("accept-edits", { cwd: join(root, "sub") });
    const call: PermissionCall = { tool: "write_files", kind: "write", input: {}, writePaths: ["deep/x.ts", "../src/a.ts"] };
    expect(c.decide(call).decision).toBe("ask");
    expect(c.decide({ ...call, writePaths: ["deep/x.ts", "deep/y.ts"] }).decision).toBe("allow");
  });

  test("plan mode: an allow rule lets a web tool through, never bash or a write", () => {
    const c = checker("plan", { allow: ["web_fetch(domain:example.com)", "bash", "write"] });
    expect(c.decide(calls.web_fetch!).decision).toBe("allow");
    expect(c.decide(bash("ls")).decision).toBe("deny");
    expect(c.decide(write("src/a.ts")).decision).toBe("deny");
  });

  test("exit_plan_mode asks without a suggestion; an allow rule cannot pre-approve it", () => {
    const d = checker("plan", { allow: ["exit_plan_mode"] }).decide(calls.exit_plan_mode!);
    expect(d.decision).toBe("ask");
    expect(d.suggested_rule).toBeUndefined();
  });

  test("the mode can change on a live checker", () => {
    const c = checker("default");
    expect(c.decide(write("src/a.ts")).decision).toBe("ask");
    c.mode = "accept-edits";
    expect(c.decide(write("src/a.ts")).decision).toBe("allow");
  });
});

describe("hook precedence (§4 'Authorization precedence')", () => {
  const hook = (decision: "allow" | "deny" | "ask", reason?: string) => ({ hook: { decision, reason } });
  test("hook deny beats yolo and allow rules", () => {
    const d = checker("yolo", { allow: ["bash"] }).decide(bash("ls", hook("deny", "no ls today")));
    expect(d).toMatchObject({ decision: "deny", reason: "denied by a hook: no ls today" });
  });
  test("rule deny beats hook allow", () => {
    expect(checker("default", { deny: ["bash(rm*)"] }).decide(bash("rm x", hook("allow"))).decision).toBe("deny");
  });
  test("hook allow beats the mode and the lack of rules", () => {
    expect(checker("default").decide(write("src/a.ts", hook("allow"))).decision).toBe("allow");
    expect(checker("plan").decide(bash("make", hook("allow"))).decision).toBe("allow");
  });
  test("hook ask forces a prompt in yolo, over allow rules, even for read-only tools", () => {
    expect(checker("yolo").decide(bash("ls", hook("ask"))).decision).toBe("ask");
    expect(checker("default", { allow: ["bash"] }).decide(bash("ls", hook("ask"))).decision).toBe("ask");
    const d = checker("default").decide({ tool: "read", kind: "read", input: {}, subject: "src/a.ts", ...hook("ask", "check") });
    expect(d).toMatchObject({ decision: "ask", reason: "a hook asks for confirmation: check", suggested_rule: "read", by: "hook" });
  });
  test("the project boundary holds over a hook allow, in yolo", () => {
    expect(checker("yolo").decide(write(join(outside, "x"), hook("allow")))).toMatchObject({ decision: "deny", by: "boundary" });
    expect(checker("yolo").decide(write(".git/hooks/pre-commit", hook("allow"))).decision).toBe("deny");
    expect(checker("yolo").decide(write("link/x", hook("allow"))).decision).toBe("deny");
  });
  test("exit_plan_mode in plan mode asks whatever a hook says (except deny)", () => {
    const call: PermissionCall = { tool: "exit_plan_mode", kind: "other", input: { plan: "p" } };
    expect(checker("plan").decide({ ...call, ...hook("allow") })).toMatchObject({ decision: "ask", by: "plan" });
    expect(checker("plan").decide({ ...call, ...hook("deny") }).decision).toBe("deny");
  });
});

describe("write boundary (§4 step 1) with real symlinks", () => {
  const DENIED: [string, RegExp][] = [
    ["link/x.txt", /link is a symlink/],
    ["link", /link is a symlink|outside/],
    ["file-link", /file-link is a symlink/],
    ["alias/a.ts", /alias is a symlink/],
    ["sub/../link/x", /link is a symlink/],
    ["link/../x.txt", /link is a symlink/],
    ["../x.txt", /outside the project/],
    ["sub/../../x.txt", /outside the project/],
    ["", /outside|\.git|symlink/],
  ];
  test.each(DENIED.filter(([p]) => p))("denied in yolo: %s", (p, why) => {
    const d = checker("yolo").decide(write(p));
    expect(d.decision).toBe("deny");
    expect(d.reason).toMatch(why);
  });
  test("absolute paths outside the project, and `..` that leaves and comes back", () => {
    const c = checker("yolo");
    expect(c.decide(write(join(outside, "secret.txt"))).decision).toBe("deny");
    expect(c.decide(write("/etc/passwd")).decision).toBe("deny");
    const base = root.split("/").pop()!;
    const d = c.decide(write(`../${base}/src/a.ts`));
    expect(d).toMatchObject({ decision: "deny" });
    expect(d.reason).toMatch(/leaves the project/);
    expect(c.decide(write(`${root}/sub/../../${base}/src/a.ts`)).reason).toMatch(/leaves the project/);
  });
  test("every write path counts (write_files)", () => {
    const call: PermissionCall = { tool: "write_files", kind: "write", input: {}, writePaths: ["src/ok.ts", "link/bad.ts"] };
    expect(checker("yolo").decide(call).decision).toBe("deny");
  });
  test("ordinary paths inside the project, existing or not, are fine", () => {
    const c = checker("yolo");
    for (const p of ["src/a.ts", "src/new/deep/file.ts", "./sub/deep/x", join(root, "src", "b.ts"), "sub/../src/a.ts", ".gitignore", ".github/workflows/ci.yml", "src/.git-keep", ".larikrc"]) {
      expect(c.decide(write(p)).decision, p).toBe("allow");
    }
  });
  test("from a subdirectory, `..` inside the project is fine", () => {
    expect(checker("yolo", { cwd: join(root, "sub") }).decide(write("../src/a.ts")).decision).toBe("allow");
  });
  test("a symlinked cwd below the root is refused", () => {
    const d = checker("yolo", { cwd: join(root, "sublink") }).decide(write("x.ts"));
    expect(d.decision).toBe("deny");
    expect(d.reason).toMatch(/sublink is a symlink/);
  });
  test("a project root reached through a symlink works with either spelling", () => {
    const via = mkdtempSync(join(tmpdir(), "larik-perm-via-"));
    const linkRoot = join(via, "proj");
    symlinkSync(root, linkRoot);
    try {
      const c = checker("yolo", { cwd: linkRoot, projectRoot: linkRoot });
      expect(c.decide(write("src/a.ts")).decision).toBe("allow");
      expect(c.decide(write(join(root, "src", "a.ts"))).decision).toBe("allow");
      expect(c.decide(write("link/x")).decision).toBe("deny");
    } finally {
      rmSync(via, { recursive: true, force: true });
    }
  });
  test("a NUL byte is refused", () => {
    expect(checker("yolo").decide(write("src/a\0.ts")).decision).toBe("deny");
  });
  test("the memory tool is exempt (its notes live outside the repository)", () => {
    const call: PermissionCall = { tool: "memory", kind: "write", input: {}, writePaths: [join(outside, "note.md")] };
    expect(checker("default").decide(call).decision).toBe("allow");
  });
});

describe("protected paths (§4, invariant 21) in yolo", () => {
  const PROTECTED = [
    ".git", ".git/hooks", ".git/hooks/pre-commit", ".git/config", ".git/config.worktree", ".git/commondir",
    ".git/info/exclude", ".git/modules/sub/config", ".git/worktrees/w/gitdir", ".larik", ".larik/settings.json",
    ".claude/settings.json", ".claude/commands/x.md", ".mcp.json", "sub/.mcp.json", "sub/.git/hooks/post-checkout",
    ".GIT/config", "./.git/hooks/x", "src/../.git/config", ".Larik/settings.json",
  ];
  test.each(PROTECTED)("denied: %s", (p) => {
    const d = checker("yolo", { allow: ["write"] }).decide(write(p));
    expect(d.decision).toBe("deny");
    expect(d.reason).toMatch(/protected/);
  });
  test("other .git entries are not on the list", () => {
    expect(protectedPathReason(".git/HEAD")).toBeUndefined();
    expect(protectedPathReason(".git/objects/ab/cdef")).toBeUndefined();
    expect(checker("yolo").decide(write(".git/HEAD")).decision).toBe("allow");
  });
  test("protection is for writes: reading .git/config is allowed", () => {
    expect(checker("default").decide({ tool: "read", kind: "read", input: {}, subject: ".git/config" }).decision).toBe("allow");
  });
});

describe("rule grammar", () => {
  test("parseRule", () => {
    expect(parseRule("bash")).toEqual({ text: "bash", tool: "bash", pattern: undefined });
    expect(parseRule("bash(*)")).toEqual({ text: "bash(*)", tool: "bash", pattern: undefined });
    expect(parseRule(" bash() ")).toEqual({ text: "bash()", tool: "bash", pattern: undefined });
    expect(parseRule("bash(npm test*)")).toEqual({ text: "bash(npm test*)", tool: "bash", pattern: "npm test*" });
    expect(parseRule("mcp__git-hub")).toMatchObject({ tool: "mcp__git-hub" });
    expect(() => parseRule("bash(npm test")).toThrow(/not `tool` or `tool\(pattern\)`/);
    expect(() => parseRule("web fetch")).toThrow(/web fetch/);
  });

  test("file rules match the cwd-relative path with doublestar globs, dot files included", () => {
    const c = checker("default", { allow: ["edit(src/**)"] });
    const edit = (p: string, tool = "edit"): PermissionCall => ({ tool, kind: "write", input: {}, subject: p, writePaths: [p] });
    expect(c.decide(edit("src/a/b.ts")).decision).toBe("allow");
    expect(c.decide(edit("src/.hidden")).decision).toBe("allow");
    expect(c.decide(edit(join(root, "src", "x.ts"))).decision).toBe("allow");
    expect(c.decide(edit("./src/x.ts")).decision).toBe("allow");
    expect(c.decide(edit("lib/x.ts")).decision).toBe("ask");
    expect(c.decide(edit("src/x.ts", "multi_edit")).decision).toBe("allow");
    expect(c.decide(edit("src/x.ts", "apply_code_action")).decision).toBe("allow");
    expect(c.decide(edit("src/x.ts", "write")).decision).toBe("ask");
  });

  test("absolute patterns match absolute paths", () => {
    const c = checker("default", { allow: [`edit(${root}/src/**)`] });
    expect(c.decide({ tool: "edit", kind: "write", input: {}, subject: "src/a.ts", writePaths: ["src/a.ts"] }).decision).toBe("allow");
    expect(c.decide({ tool: "edit", kind: "write", input: {}, subject: "sub/a.ts", writePaths: ["sub/a.ts"] }).decision).toBe("ask");
  });

  test("deny rules on file tools: any matching path denies; read deny is for read only", () => {
    const c = checker("default", { deny: ["read(**/.env)", "write(secrets/**)"] });
    expect(c.decide({ tool: "read", kind: "read", input: {}, subject: ".env" }).decision).toBe("deny");
    expect(c.decide({ tool: "read", kind: "read", input: {}, subject: "config/.env" }).decision).toBe("deny");
    expect(c.decide({ tool: "grep", kind: "read", input: {}, subject: ".env" }).decision).toBe("allow");
    const wf: PermissionCall = { tool: "write_files", kind: "write", input: {}, writePaths: ["ok.md", "secrets/k"] };
    expect(c.decide(wf).decision).toBe("deny");
    expect(checker("yolo", { deny: ["write(secrets/**)"] }).decide(write("secrets/k")).decision).toBe("deny");
  });

  test("domain rules cover subdomains, tolerate *., and never match look-alikes", () => {
    const c = checker("default", { allow: ["web_fetch(domain:example.com)", "browser_navigate(domain:*.test.dev)"] });
    const fetch = (s: string): PermissionCall => ({ tool: "web_fetch", kind: "network", input: {}, subject: s });
    expect(c.decide(fetch("domain:example.com")).decision).toBe("allow");
    expect(c.decide(fetch("domain:Docs.Example.COM")).decision).toBe("allow");
    expect(c.decide(fetch("domain:notexample.com")).decision).toBe("ask");
    expect(c.decide(fetch("domain:example.com.evil.io")).decision).toBe("ask");
    expect(c.decide({ tool: "web_fetch", kind: "network", input: { url: "https://api.example.com/x" } }).decision).toBe("allow");
    expect(c.decide({ tool: "browser_navigate", kind: "network", input: { url: "http://a.test.dev:8080/" } }).decision).toBe("allow");
    expect(c.decide({ tool: "browser_navigate", kind: "network", input: { url: "http://test.dev.evil/" } }).decision).toBe("ask");
    expect(c.decide({ tool: "browser_navigate", kind: "network", input: { url: "http://example.com/" } }).decision).toBe("ask");
  });

  test("MCP rules: mcp__server covers that server's tools; patterns never match", () => {
    const c = checker("default", { allow: ["mcp__github", "mcp__jira(*)", "mcp__slack(post)"] });
    const mcp = (tool: string): PermissionCall => ({ tool, kind: "other", input: {} });
    expect(c.decide(mcp("mcp__github__create_issue")).decision).toBe("allow");
    expect(c.decide(mcp("mcp__githubx__create_issue")).decision).toBe("ask");
    expect(c.decide(mcp("mcp__jira__search")).decision).toBe("allow");
    expect(c.decide(mcp("mcp__slack__post")).decision).toBe("ask");
    expect(checker("yolo", { deny: ["mcp__github"] }).decide(mcp("mcp__github__delete_repo")).decision).toBe("deny");
  });

  test("rule names are case-sensitive", () => {
    expect(checker("default", { allow: ["Bash(npm test)"] }).decide(bash("npm test")).decision).toBe("ask");
  });

  test("addAllowRule applies at once and is not duplicated", () => {
    const c = checker("default");
    expect(c.decide(bash("make test")).suggested_rule).toBe("bash(make test*)");
    c.addAllowRule("bash(make test*)");
    c.addAllowRule("bash(make test*)");
    expect(c.allow).toEqual(["bash(make test*)"]);
    expect(c.decide(bash("make test -j4")).decision).toBe("allow");
  });
});

describe("suggestRule (§4 'Always allow')", () => {
  test.each([
    ["git push origin main", "bash(git push*)"],
    ["git --no-pager log", "bash(git*)"],
    ["npm install lodash", "bash(npm install*)"],
    ["pnpm run dev", "bash(pnpm run*)"],
    ["cargo build --release", "bash(cargo build*)"],
    ["docker compose up", "bash(docker compose*)"],
    ["kubectl get pods", "bash(kubectl get*)"],
    ["make", "bash(make*)"],
    ["uv sync", "bash(uv sync*)"],
    ["bun test", "bash(bun test*)"],
    ["yarn", "bash(yarn*)"],
    ["go test ./...", "bash(go test*)"],
    ["rm -rf build", "bash(rm*)"],
    ["pytest -q", "bash(pytest*)"],
    ["cd sub && make test", "bash(make test*)"],
    ["npm run lint && npm run lint -- --fix", "bash(npm run*)"],
  ])("bash %j → %s", (cmd, rule) => {
    expect(suggestRule("bash", cmd)).toBe(rule);
  });
  test.each(["npm test && npm run lint", "ls > out", "FOO=1 make", "echo $(x)", "./*.sh", ""])("bash %j → none", (cmd) => {
    expect(suggestRule("bash", cmd)).toBeUndefined();
  });
  // "Always allow" on one of these would save bash(sudo*), bash(timeout*), …, which allows any
  // command behind the wrapper: `sudo rm -rf /` would then run unasked.
  test.each(["sudo apt install jq", "/usr/bin/sudo ls", "timeout 60 npm test", "nohup npm start", "command ls -la", "time npm test", "bash scripts/build.sh", "nice -n 10 make"])(
    "bash %j (a wrapper) → none",
    (cmd) => {
      expect(suggestRule("bash", cmd)).toBeUndefined();
      const d = checker("default").decide(bash(cmd));
      expect(d.decision).toBe("ask");
      expect(d.suggested_rule).toBeUndefined();
    },
  );
  test("why: a first-word rule for a wrapper allows whatever it wraps", () => {
    expect(checker("default", { allow: ["bash(sudo*)"] }).decide(bash("sudo rm -rf /")).decision).toBe("allow");
  });
  test("web, exit_plan_mode and other tools", () => {
    expect(suggestRule("web_fetch", "domain:docs.rs")).toBe("web_fetch(domain:docs.rs)");
    expect(suggestRule("web_fetch", "https://Docs.rs/x?y")).toBe("web_fetch(domain:docs.rs)");
    expect(suggestRule("browser_navigate", "http://localhost:3000/")).toBe("browser_navigate(domain:localhost)");
    expect(suggestRule("exit_plan_mode", "plan")).toBeUndefined();
    expect(suggestRule("write", "src/a.ts")).toBe("write");
    expect(suggestRule("multi_edit", "src/a.ts")).toBe("multi_edit");
    expect(suggestRule("web_search", "q")).toBe("web_search");
    expect(suggestRule("mcp__github__create_issue")).toBe("mcp__github__create_issue");
  });
  test("asks carry a suggestion that really allows the call once saved", () => {
    const c = checker("default");
    const calls: PermissionCall[] = [
      bash("git push origin main"),
      bash("cd sub && npm run build"),
      { tool: "web_fetch", kind: "network", input: { url: "https://docs.rs/serde" } },
      { tool: "browser_navigate", kind: "network", input: {}, subject: "domain:localhost" },
      write("src/a.ts"),
      { tool: "multi_edit", kind: "write", input: {}, subject: "src/a.ts", writePaths: ["src/a.ts"] },
      { tool: "mcp__github__create_issue", kind: "other", input: {} },
    ];
    for (const call of calls) {
      const d = c.decide(call);
      expect(d.decision).toBe("ask");
      expect(d.suggested_rule, call.tool).toBeDefined();
      expect(checker("default", { allow: [d.suggested_rule!] }).decide(call).decision, d.suggested_rule).toBe("allow");
    }
  });
  test("no suggestion when saving it would not help (cd outside the project)", () => {
    expect(checker("default").decide(bash("cd /tmp && make")).suggested_rule).toBeUndefined();
  });
});

describe("cd with CDPATH set (bash chaining's cd exception)", () => {
  test("`cd sub` may leave the project through CDPATH, so it asks; `cd ./sub` does not", () => {
    mkdirSync(join(outside, "sub"), { recursive: true });
    const env = { ...process.env, CDPATH: outside };
    // What bash really does: the CDPATH entry wins over ./sub (and cd prints where it went).
    const where = execFileSync("bash", ["-c", "cd sub >/dev/null && pwd -P"], { cwd: root, env, encoding: "utf8" }).trim();
    expect(where).toBe(join(outside, "sub"));
    const withCdPath = new PermissionChecker({ mode: "default", cwd: root, projectRoot: root, allow: ["bash(make test*)"], env });
    expect(withCdPath.decide(bash("cd sub && make test")).decision).toBe("ask");
    expect(withCdPath.decide(bash("cd sub && make test")).suggested_rule).toBeUndefined();
    for (const cmd of ["cd ./sub && make test", `cd ${root}/sub && make test`, "cd ./sub/deep && make test", "cd . && make test"]) {
      expect(withCdPath.decide(bash(cmd)).decision, cmd).toBe("allow");
    }
    const without = new PermissionChecker({ mode: "default", cwd: root, projectRoot: root, allow: ["bash(make test*)"], env: { ...env, CDPATH: "" } });
    expect(without.decide(bash("cd sub && make test")).decision).toBe("allow");
  });
});

describe("unmatchableRules", () => {
  const tools = ["bash", "read", "write", "edit", "multi_edit", "web_fetch", "browser_navigate", "exit_plan_mode", "mcp__github__create_issue"];
  test("flags rules that can never match, with a reason", () => {
    const bad = [
      ["Bash(npm test)", /case-sensitive: did you mean bash/],
      ["bash(npm test", /not `tool`|unbalanced/],
      ["bash(npm (test)", /unbalanced/],
      ["bash(npm test; ls)", /split point/],
      ["bash(npm test 2>&1)", /split point/],
      ["bash(npm test >/dev/null)", /removed from commands/],
      ["bash(FOO=1 npm*)", /environment assignment/],
      ["bash(eval*)", /`eval`/],
      ["bash(ls > *)", /redirection/],
      ["bash(sh -c *)", /sh -c/],
      ["bash(find * -exec *)", /-exec/],
      ["web_fetch(example.com)", /domain:/],
      ["web_fetch(domain:)", /needs a host/],
      ["mcp__github(create)", /MCP rules take no pattern/],
      ["exit_plan_mode", /always asks/],
      ["mcp__gitlab", /no tool is named/],
      ["todo write", /not `tool`/],
    ] as const;
    const found = unmatchableRules(bad.map(([r]) => r), tools);
    for (const [rule, why] of bad) {
      const hit = found.find((f) => f.rule === rule);
      expect(hit, rule).toBeDefined();
      expect(hit!.why, rule).toMatch(why);
    }
  });
  test("accepts rules that can match", () => {
    const good = ["bash", "bash(*)", "bash(npm test*)", "bash(git status)", "edit(src/**)", "multi_edit", "web_fetch(domain:*.example.com)", "mcp__github", "read(**/.env)"];
    expect(unmatchableRules(good, tools)).toEqual([]);
    expect(unmatchableRules(["Whatever"])).toEqual([]);
  });
  test("hazards only make allow rules unmatchable", () => {
    expect(unmatchableRules(["bash(FOO=1 npm*)", "bash(eval*)"], tools, "deny")).toEqual([]);
  });
});
