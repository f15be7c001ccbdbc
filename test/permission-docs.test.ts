/**
 * docs/permissions.md stays true: every row of its example tables is run through the checker,
 * and every example rule the page mentions is either in those tables or reported by
 * `unmatchableRules` as the page says.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { isSafeListed } from "../kernel/bash-split.js";
import { PermissionChecker, unmatchableRules, type PermissionCall } from "../kernel/permission.js";

const doc = readFileSync(join(import.meta.dirname, "..", "docs", "permissions.md"), "utf8");
const root = realpathSync(mkdtempSync(join(tmpdir(), "larik-perm-docs-")));
mkdirSync(join(root, "web"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Row {
  rule: string;
  call: PermissionCall;
  yes: boolean;
  line: string;
}

const ticks = (s: string) => [...s.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);

/** Rows of the table whose header starts with `header`. */
function table(header: string): Row[] {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`| ${header} |`));
  expect(start, `table "${header}" in docs/permissions.md`).toBeGreaterThanOrEqual(0);
  const rows: Row[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line.replaceAll("\\|", "\u0000").split("|").slice(1, -1).map((c) => c.replaceAll("\u0000", "|").trim());
    const [ruleCell, callCell, result] = cells as [string, string, string];
    const rule = ticks(ruleCell)[0]!;
    const colon = callCell.indexOf(":");
    const tool = colon >= 0 && colon < callCell.indexOf("`") ? callCell.slice(0, colon).trim() : callCell.trim();
    const subjects = colon >= 0 && colon < callCell.indexOf("`") ? ticks(callCell) : [];
    rows.push({ rule, call: toCall(tool, subjects), yes: result === "yes", line });
  }
  return rows;
}

function toCall(tool: string, subjects: string[]): PermissionCall {
  const [first] = subjects;
  if (tool === "bash") return { tool, kind: "bash", input: { command: first }, subject: first };
  if (tool === "read" || tool === "grep" || tool === "glob") return { tool, kind: "read", input: { path: first }, subject: first };
  if (tool === "write_files") return { tool, kind: "write", input: {}, writePaths: subjects };
  if (["edit", "multi_edit", "write"].includes(tool)) return { tool, kind: "write", input: { path: first }, subject: first, writePaths: subjects };
  if (tool === "web_fetch" || tool === "browser_navigate") {
    return first!.startsWith("domain:") ? { tool, kind: "network", input: {}, subject: first } : { tool, kind: "network", input: { url: first } };
  }
  return { tool, kind: "other", input: {} };
}

const allowRows = table("Rule");
const denyRows = table("Deny rule");

describe("docs/permissions.md examples", () => {
  test("the tables are there", () => {
    expect(allowRows.length).toBeGreaterThanOrEqual(20);
    expect(denyRows.length).toBeGreaterThanOrEqual(6);
  });

  test.each(allowRows.map((r) => [r.line, r] as const))("allow: %s", (_l, row) => {
    const d = new PermissionChecker({ mode: "default", cwd: root, projectRoot: root, allow: [row.rule] }).decide(row.call);
    expect(d.decision === "allow", d.reason).toBe(row.yes);
    if (row.yes && !(row.call.tool === "bash" && isSafeListed(String(row.call.subject)))) {
      // The rule, not something else, is what allows it.
      expect(new PermissionChecker({ mode: "default", cwd: root, projectRoot: root }).decide(row.call).decision).not.toBe("allow");
    }
  });

  test.each(denyRows.map((r) => [r.line, r] as const))("deny: %s", (_l, row) => {
    const d = new PermissionChecker({ mode: "yolo", cwd: root, projectRoot: root, deny: [row.rule] }).decide(row.call);
    expect(d.decision, d.reason).toBe(row.yes ? "deny" : "allow");
  });

  test("every example rule in the page is tested", () => {
    const tested = new Set([...allowRows, ...denyRows].map((r) => r.rule));
    const tools = ["bash", "read", "write", "edit", "web_fetch", "browser_navigate", "mcp__github__create_issue"];
    const mentioned = ticks(doc).filter((t) => /^[\w-]+\([^]*\)$/.test(t) && !t.includes("<") && !t.includes("domain:host") && !t.startsWith("unmatchableRules("));
    expect(mentioned.length).toBeGreaterThan(10);
    for (const rule of mentioned) {
      if (tested.has(rule)) continue;
      expect(unmatchableRules([rule], tools), `${rule} is neither in a table nor reported as unmatchable`).toHaveLength(1);
    }
  });
});
