/**
 * plugins/sandbox-bubblewrap/placeholders.ts: the ledger that lets a later run remove what a killed
 * one left. Its own file: the ledger is per process and module (the first sandbox names it), and
 * vitest gives each test file fresh modules. Needs no bwrap (`wrap` only builds the argv).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { sweep } from "../plugins/sandbox-bubblewrap/placeholders.js";
import { createBubblewrapSandbox } from "../plugins/sandbox-bubblewrap/sandbox.js";

it("removes the unchanged placeholders of a process that was killed, at the next command", () => {
  const data = mkdtempSync(join(tmpdir(), "larik-sbx-data-"));
  const ledgers = join(data, "larik", "sandbox");
  mkdirSync(ledgers, { recursive: true });
  // what a killed run left: its ledger, an untouched .git placeholder, and a .mcp.json someone edited
  const left = realpathSync(mkdtempSync(join(tmpdir(), "larik-sbx-left-")));
  mkdirSync(join(left, ".git"));
  writeFileSync(join(left, ".mcp.json"), '{"mcpServers":{}}');
  const gone = spawnSync(process.execPath, ["-e", "0"]).pid; // a pid no live process has
  const entries = [
    { path: join(left, ".git"), kind: "dir", ino: statSync(join(left, ".git")).ino },
    { path: join(left, ".mcp.json"), kind: "file", content: "{}", ino: statSync(join(left, ".mcp.json")).ino },
  ];
  writeFileSync(join(ledgers, `placeholders-${gone}.json`), JSON.stringify(entries));
  const here = realpathSync(mkdtempSync(join(tmpdir(), "larik-sbx-here-")));
  const sb = createBubblewrapSandbox({ projectRoot: here, settings: {}, env: { ...process.env, XDG_DATA_HOME: data } });
  try {
    sb.wrap("true", { cwd: here, projectRoot: here, env: {} });
    expect(readdirSync(left).sort()).toEqual([".mcp.json"]); // the edited one stays
    // this process's own ledger lists what it made
    const mine = JSON.parse(readFileSync(join(ledgers, `placeholders-${process.pid}.json`), "utf8")) as { path: string }[];
    expect(mine.map((e) => e.path)).toContain(join(here, ".git"));
    expect(existsSync(join(ledgers, `placeholders-${gone}.json`))).toBe(false);
  } finally {
    sb.dispose();
  }
  sweep(Date.now() + 60_000);
  expect(readdirSync(here)).toEqual([]);
  expect(existsSync(join(ledgers, `placeholders-${process.pid}.json`))).toBe(false); // empty: removed
  for (const d of [data, left, here]) rmSync(d, { recursive: true, force: true });
});


it("the start-up probe's placeholders are gone when the probe resolves, not a sweep later", async () => {
  const data = mkdtempSync(join(tmpdir(), "larik-sbx-data-"));
  const here = realpathSync(mkdtempSync(join(tmpdir(), "larik-sbx-probe-")));
  // a bwrap that succeeds at once: the probe runs it as it would run the real one
  const sb = createBubblewrapSandbox({ projectRoot: here, settings: {}, env: { ...process.env, XDG_DATA_HOME: data }, bwrap: "/bin/true" });
  try {
    const r = await sb.probe();
    expect(r.ok).toBe(true);
    // git run outside the sandbox right after start-up must not see a `.mcp.json` placeholder
    expect(readdirSync(here)).toEqual([]);
  } finally {
    sb.dispose();
  }
  for (const d of [data, here]) rmSync(d, { recursive: true, force: true });
});
