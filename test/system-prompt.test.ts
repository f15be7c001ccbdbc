/**
 * The system prompt (LARIK-REFERENCE §2, §13; invariants 1–2): base prompt, `<env>` block,
 * instruction files (global first, then AGENTS.md — or CLAUDE.md where a folder has none — from
 * the git root down to cwd), then `systemPrompt` taps; built once per fresh context and free of
 * run-varying text. Real git repositories in temp folders, the scripted provider.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { BASE_PROMPT, definePlugin, defineTool, envBlock, Host, instructionFiles, type Plugin } from "../kernel/index.js";
import { ScriptedProvider, text } from "./fakes/scripted-provider.js";
import { drain } from "./fakes/drain.js";

const tmp = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

/** A home with a global AGENTS.md and a repo with instruction files at several depths. */
function layout() {
  const home = tmp("larik-sp-home-");
  mkdirSync(join(home, ".config", "larik"), { recursive: true });
  writeFileSync(join(home, ".config", "larik", "AGENTS.md"), "GLOBAL rules\n");
  const outer = tmp("larik-sp-outer-");
  // above the git root: never read
  writeFileSync(join(outer, "AGENTS.md"), "OUTSIDE the repo\n");
  const repo = join(outer, "repo");
  mkdirSync(join(repo, "pkg", "sub"), { recursive: true });
  execFileSync("git", ["init", "-q"], { cwd: repo });
  writeFileSync(join(repo, "AGENTS.md"), "ROOT agents\n");
  writeFileSync(join(repo, "CLAUDE.md"), "ROOT claude (shadowed)\n");
  writeFileSync(join(repo, "pkg", "CLAUDE.md"), "PKG claude\n");
  writeFileSync(join(repo, "pkg", "sub", "AGENTS.md"), "SUB agents\n");
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local", "share") };
  return { home, repo, cwd: join(repo, "pkg", "sub"), env };
}


describe("instruction files", () => {
  it("global first, then one file per folder from the git root down to cwd; AGENTS.md wins over CLAUDE.md", () => {
    const { cwd, env } = layout();
    expect(instructionFiles(cwd, env)).toEqual([
      ["~/.config/larik/AGENTS.md", "GLOBAL rules\n"],
      ["AGENTS.md", "ROOT agents\n"],
      ["pkg/CLAUDE.md", "PKG claude\n"],
      ["pkg/sub/AGENTS.md", "SUB agents\n"],
    ]);
  });

  it("the global file is read from XDG_CONFIG_HOME and labelled with it, never with a run-varying path", async () => {
    const { home, cwd, env } = layout(); // ~/.config/larik/AGENTS.md says "GLOBAL rules"
    const dotfiles = join(home, "dotfiles", "cfg");
    mkdirSync(join(dotfiles, "larik"), { recursive: true });
    writeFileSync(join(dotfiles, "larik", "AGENTS.md"), "DOTFILES rules\n");
    expect(instructionFiles(cwd, { ...env, XDG_CONFIG_HOME: dotfiles })[0]).toEqual(["~/dotfiles/cfg/larik/AGENTS.md", "DOTFILES rules\n"]);
    // outside the home folder (a temp folder per CI run): the prompt must not change with it
    const systems: string[] = [];
    for (const xdg of [tmp("larik-sp-xdg-"), tmp("larik-sp-xdg-")]) {
      mkdirSync(join(xdg, "larik"));
      writeFileSync(join(xdg, "larik", "AGENTS.md"), "XDG rules\n");
      expect(instructionFiles(cwd, { ...env, XDG_CONFIG_HOME: xdg })[0]).toEqual(["$XDG_CONFIG_HOME/larik/AGENTS.md", "XDG rules\n"]);
      const host = await Host.create({ plugins: [], cwd, settings: {}, env: { ...env, XDG_CONFIG_HOME: xdg } });
      const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
      const agent = await host.openAgent({ provider, model: "scripted/x", mode: "default" });
      await drain(agent.run("hi"));
      systems.push(provider.requests[0]!.system);
      expect(provider.requests[0]!.system).not.toContain(xdg);
    }
    expect(systems[0]).toContain('<instructions source="$XDG_CONFIG_HOME/larik/AGENTS.md">\nXDG rules\n</instructions>');
    expect(systems[0]).not.toContain("GLOBAL rules");
    expect(systems[1]).toBe(systems[0]);
  });

  it("an empty AGENTS.md does not hide the CLAUDE.md beside it", () => {
    const dir = tmp("larik-sp-empty-");
    writeFileSync(join(dir, "AGENTS.md"), "\n  \n");
    writeFileSync(join(dir, "CLAUDE.md"), "claude rules\n");
    expect(instructionFiles(dir, { HOME: tmp("larik-sp-nohome-") })).toEqual([["CLAUDE.md", "claude rules\n"]]);
  });

  it("labels files relative to cwd's canonical path when cwd is reached through a symlink outside git", () => {
    const real = tmp("larik-sp-real-");
    writeFileSync(join(real, "AGENTS.md"), "linked\n");
    const link = join(tmp("larik-sp-link-"), "project");
    symlinkSync(real, link);
    expect(instructionFiles(link, { HOME: tmp("larik-sp-nohome-") })).toEqual([["AGENTS.md", "linked\n"]]);
  });
});

describe("the system prompt", () => {
  it("is the base prompt, the <env> block, the instructions in order, then taps; with no run-varying text", async () => {
    const { repo, cwd, env, home } = layout();
    const tap = definePlugin({ name: "tail-section", setup: (ctx) => void ctx.hooks.systemPrompt.tap((sections) => [...sections, "TAIL section"]) });
    const host = await Host.create({ plugins: [tap], cwd, settings: {}, env });
    const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
    const agent = await host.openAgent({ provider, model: "scripted/x", mode: "default" });
    await drain(agent.run("hi"));
    const system = provider.requests[0]!.system;
    const now = new Date();
    const day = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
    expect(system).toBe(
      [
        BASE_PROMPT,
        `<env>\nworking directory: ${cwd}\nplatform: ${process.platform}\ndate: ${day}\ngit repository: ${repo}\n</env>`,
        '<instructions source="~/.config/larik/AGENTS.md">\nGLOBAL rules\n</instructions>',
        '<instructions source="AGENTS.md">\nROOT agents\n</instructions>',
        '<instructions source="pkg/CLAUDE.md">\nPKG claude\n</instructions>',
        '<instructions source="pkg/sub/AGENTS.md">\nSUB agents\n</instructions>',
        "TAIL section",
      ].join("\n\n"),
    );
    // nothing of this run: not the session id, the data folder, the home or the temp folder
    expect(system).not.toContain(agent.session.id);
    expect(system).not.toContain(home);
    expect(system).not.toMatch(/\d{2}:\d{2}:\d{2}/);
  });

  it("is byte-identical across runs in the same folder (another process, another session, another data folder)", async () => {
    const { cwd, env } = layout();
    const systems: string[] = [];
    for (const data of [tmp("larik-sp-data-"), tmp("larik-sp-data-")]) {
      const host = await Host.create({ plugins: [], cwd, settings: {}, env: { ...env, XDG_DATA_HOME: data, TMPDIR: data } });
      const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
      const agent = await host.openAgent({ provider, model: "scripted/x", mode: "default" });
      await drain(agent.run("hi"));
      systems.push(provider.requests[0]!.system);
    }
    expect(systems[1]).toBe(systems[0]);
  });

  it("is built once per fresh context: an instruction file edited mid-context applies after /clear", async () => {
    const { repo, cwd, env } = layout();
    let built = 0;
    const counter = definePlugin({ name: "counter", setup: (ctx) => void ctx.hooks.systemPrompt.tap((s) => (built++, s)) });
    const host = await Host.create({ plugins: [counter], cwd, settings: {}, env });
    const provider = new ScriptedProvider([{ blocks: [text("one")] }, { blocks: [text("two")] }, { blocks: [text("three")] }]);
    const agent = await host.openAgent({ provider, model: "scripted/x", mode: "default" });
    await drain(agent.run("one"));
    writeFileSync(join(repo, "AGENTS.md"), "ROOT agents, edited\n");
    await drain(agent.run("two"));
    expect(built).toBe(1);
    expect(provider.requests[1]!.system).toBe(provider.requests[0]!.system);
    agent.clear();
    await drain(agent.run("three"));
    expect(built).toBe(2);
    expect(provider.requests[2]!.system).toContain("ROOT agents, edited");
  });
});

describe("the <env> block", () => {
  it("gives the local date to the day only", async () => {
    const cwd = tmp("larik-sp-env-");
    const host = await Host.create({ plugins: [], cwd, settings: {} });
    const tz = process.env.TZ;
    try {
      // late evening in New York is already tomorrow in UTC: the user's day is the one to give
      process.env.TZ = "America/New_York";
      const morning = envBlock(host, new Date("2026-03-04T05:00:01Z"));
      expect(morning).toContain("date: 2026-03-04\n");
      expect(envBlock(host, new Date("2026-03-05T04:59:59Z"))).toBe(morning);
      expect(morning).toContain("git repository: no\n");
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });
});

describe("the tool list", () => {
  /** A plugin registering read-only tools of the given names, in that order. */
  const toolsNamed = (name: string, names: string[]): Plugin =>
    definePlugin({
      name,
      setup(ctx) {
        for (const n of names) ctx.tools.register(defineTool({ name: n, description: `The ${n} tool.`, input: z.object({}), kind: "read", run: async () => ({ content: n }) }));
      },
    });

  it("is in name order whatever order the tools arrive in, so the prompt prefix does not depend on it", async () => {
    const lists: string[] = [];
    for (const plugins of [
      [toolsNamed("one", ["zeta", "beta"]), toolsNamed("two", ["alpha"])],
      [toolsNamed("two", ["alpha"]), toolsNamed("one", ["beta", "zeta"])],
    ]) {
      const host = await Host.create({ plugins, cwd: tmp("larik-sp-tools-"), settings: {} });
      const provider = new ScriptedProvider([{ blocks: [text("ok")] }]);
      const agent = await host.openAgent({ provider, model: "scripted/x", mode: "default" });
      await drain(agent.run("hi"));
      lists.push(JSON.stringify(provider.requests[0]!.tools));
    }
    expect(JSON.parse(lists[0]!).map((t: { name: string }) => t.name)).toEqual(["alpha", "beta", "zeta"]);
    expect(lists[1]).toBe(lists[0]);
  });
});
