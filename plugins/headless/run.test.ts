import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PermissionChecker, type PermissionCall, type PermissionMode } from "../../kernel/index.js";
import { denialReason } from "./run.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "larik-headless-deny-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("denialReason", () => {
  it("names the modes that would allow more than the run's own, and an allow rule", () => {
    expect(denialReason("write", "default", "write")).toBe(
      'headless mode cannot ask for permission: rerun with --mode accept-edits or --mode yolo, or an allow rule such as "write" in permissions.allow',
    );
    expect(denialReason(undefined, "plan", "write")).toMatch(/rerun with --mode accept-edits or --mode yolo, or an allow rule in permissions\.allow$/);
    // already in accept-edits (or auto): suggesting it again would be no way out
    for (const mode of ["accept-edits", "auto"] as const) {
      const reason = denialReason("write", mode, "write");
      expect(reason).toContain("rerun with --mode yolo,");
      expect(reason).not.toContain("accept-edits");
    }
  });

  // The advice must be true: every mode it names allows the call, and no mode that would is left out.
  const calls: PermissionCall[] = [
    { tool: "write", kind: "write", input: { path: "notes.txt" }, subject: "notes.txt", writePaths: ["notes.txt"] },
    { tool: "bash", kind: "bash", input: { command: "touch made.txt" }, subject: "touch made.txt" },
    { tool: "web_fetch", kind: "network", input: { url: "https://docs.rs/" } },
    { tool: "mcp__github__create_issue", kind: "other", input: {} },
  ];
  it.each(calls.map((c) => [c.tool, c] as const))("the modes named for a denied %s call would allow it", (_t, call) => {
    const decide = (mode: PermissionMode) => new PermissionChecker({ mode, cwd: root, projectRoot: root }).decide(call);
    const asked = decide("default");
    expect(asked.decision).toBe("ask");
    const reason = denialReason(asked.suggested_rule, "default", call.kind);
    const named = [...reason.matchAll(/--mode ([\w-]+)/g)].map((m) => m[1] as PermissionMode);
    expect(named).toContain("yolo");
    for (const mode of ["accept-edits", "yolo"] as const) {
      expect(named.includes(mode), `${call.tool}: ${mode} in "${reason}"`).toBe(decide(mode).decision === "allow");
    }
    if (asked.suggested_rule) {
      expect(reason).toContain(`"${asked.suggested_rule}"`);
      const withRule = new PermissionChecker({ mode: "default", cwd: root, projectRoot: root, allow: [asked.suggested_rule] });
      expect(withRule.decide(call).decision).toBe("allow");
    }
  });
});
