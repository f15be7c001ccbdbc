import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { defineTool, PermissionChecker, type AnyTool, type PermissionMode, type ToolKind } from "../../kernel/index.js";
import { denialReason, modesThatAllow } from "./run.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "larik-headless-deny-")));
mkdirSync(join(root, "sub"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("denialReason", () => {
  it("names the modes given, and an allow rule", () => {
    expect(denialReason("write", ["accept-edits", "yolo"])).toBe(
      'headless mode cannot ask for permission: rerun with --mode accept-edits or --mode yolo, or an allow rule such as "write" in permissions.allow',
    );
    expect(denialReason(undefined, ["yolo"])).toBe("headless mode cannot ask for permission: rerun with --mode yolo, or an allow rule in permissions.allow");
    expect(denialReason("bash(touch*)", [])).toBe('headless mode cannot ask for permission: rerun with an allow rule such as "bash(touch*)" in permissions.allow');
  });
});

describe("modesThatAllow", () => {
  /** A tool shaped like the built-in one of that kind (what the checker reads of it). */
  const tool = (name: string, kind: ToolKind): AnyTool =>
    defineTool({
      name,
      description: name,
      input: z.object({ path: z.optional(z.string()), command: z.optional(z.string()), url: z.optional(z.string()) }),
      kind,
      subject: (i) => i.path ?? i.command,
      writePaths: kind === "write" ? (i) => [i.path!] : undefined,
      run: async () => ({ content: "" }),
    }) as AnyTool;
  // The advice must be true: every mode it names allows the call, and no mode that would is left out.
  const calls: [what: string, cwd: string, tool: AnyTool, input: Record<string, string>][] = [
    ["a write in the working directory", root, tool("write", "write"), { path: "notes.txt" }],
    // accept-edits allows writes inside the working directory only, not elsewhere in the project
    ["a write above the working directory", join(root, "sub"), tool("write", "write"), { path: "../README.md" }],
    ["bash", root, tool("bash", "bash"), { command: "touch made.txt" }],
    ["web_fetch", root, tool("web_fetch", "network"), { url: "https://docs.rs/" }],
    ["an MCP tool", root, tool("mcp__github__create_issue", "other"), {}],
  ];
  it.each(calls)("names for %s exactly the modes that would allow it", (_what, cwd, t, input) => {
    const checker = new PermissionChecker({ mode: "default", cwd, projectRoot: root });
    const call = { tool: t.name, kind: t.kind, input, subject: t.subject?.(input), writePaths: t.writePaths?.(input) };
    const asked = checker.decide(call);
    expect(asked.decision).toBe("ask");
    const named = modesThatAllow(checker, t, input);
    expect(named).toContain("yolo");
    for (const mode of ["accept-edits", "yolo"] as PermissionMode[]) {
      expect(named.includes(mode), `${mode} named: ${named.join(", ")}`).toBe(checker.withMode(mode).decide(call).decision === "allow");
    }
    if (asked.suggested_rule) {
      expect(denialReason(asked.suggested_rule, named)).toContain(`"${asked.suggested_rule}"`);
      expect(new PermissionChecker({ mode: "default", cwd, projectRoot: root, allow: [asked.suggested_rule] }).decide(call).decision).toBe("allow");
    }
  });

  it("never names the run's own mode", () => {
    const checker = new PermissionChecker({ mode: "accept-edits", cwd: join(root, "sub"), projectRoot: root });
    expect(modesThatAllow(checker, tool("write", "write"), { path: "../README.md" })).toEqual(["yolo"]);
    expect(modesThatAllow(checker, undefined, {})).toEqual(["yolo"]);
  });
});
