/**
 * Skills and custom commands from temp folders (a fake HOME, XDG_CONFIG_HOME and a git project
 * with a subdirectory as cwd), driven through a real Host + Agent with the scripted provider.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { definePlugin, Host, type Agent, type AgentEvent, type PermissionMode, type Plugin, type Settings } from "../../kernel/index.js";
import { ScriptedProvider, call, text } from "../../test/fakes/scripted-provider.js";
import skillsPlugin, { discoverCommands, discoverSkills, parseFrontmatter } from "./index.js";
import { renderTemplate } from "./render.js";

let root: string;
let home: string;
let cfg: string;
let project: string;
let cwd: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "larik-skills-"));
  home = join(root, "home");
  cfg = join(root, "cfg");
  project = join(root, "project");
  cwd = join(project, "pkg");
  mkdirSync(join(project, ".git"), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  env = { ...process.env, HOME: home, XDG_CONFIG_HOME: cfg };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}
function skill(base: string, folder: string, front: string, body = "Do the thing."): void {
  write(join(base, folder, "SKILL.md"), `---\n${front}\n---\n${body}\n`);
}

async function open(settings: Settings = {}, scripts: ConstructorParameters<typeof ScriptedProvider>[0] = [], mode: PermissionMode = "yolo", before: Plugin[] = []) {
  const host = await Host.create({ plugins: [...before, skillsPlugin], settings, cwd, env });
  const provider = new ScriptedProvider(scripts);
  const agent = await host.openAgent({ provider, mode });
  return { host, agent, provider };
}
async function drain(agent: Agent, prompt = "hi"): Promise<AgentEvent[]> {
  const evs: AgentEvent[] = [];
  for await (const ev of agent.run(prompt)) evs.push(ev);
  return evs;
}
async function runCommand(host: Host, agent: Agent, name: string, args: string) {
  const out = await host.commands.get(name)!.run({ host, agent, args, print: () => {} });
  return (out as { prompt: string }).prompt;
}

describe("frontmatter", () => {
  it("parses the YAML subset skills and commands use", () => {
    const fm = parseFrontmatter(
      [
        "---",
        "name: pdf-tools",
        "description: >",
        "  Extract text and",
        "  tables from PDFs.",
        "disable-model-invocation: true",
        "user-invocable: false",
        'quoted: "a: b"',
        "single: 'it''s'",
        "allowed-tools: [Read, Grep]",
        "list:",
        "  - one",
        "  - two",
        "argument-hint: [pr-number] [priority]",
        "# a comment",
        "plain: first",
        "  second",
        "literal: |",
        "  line 1",
        "  line 2",
        "---",
        "",
        "# Body",
      ].join("\n"),
    );
    expect(fm.present).toBe(true);
    expect(fm.data).toMatchObject({
      name: "pdf-tools",
      description: "Extract text and tables from PDFs.\n",
      "disable-model-invocation": true,
      "user-invocable": false,
      quoted: "a: b",
      single: "it's",
      "allowed-tools": ["Read", "Grep"],
      list: ["one", "two"],
      plain: "first second",
      literal: "line 1\nline 2\n",
    });
    expect(fm.raw["argument-hint"]).toBe("[pr-number] [priority]");
    expect(fm.body).toBe("# Body");
    expect(parseFrontmatter("no frontmatter\n---\n").present).toBe(false);
    expect(parseFrontmatter("---\nunclosed: yes\n").body).toBe("---\nunclosed: yes\n");
  });
});

describe("rendering", () => {
  it("substitutes $ARGUMENTS and $1..$9, appends unused arguments, never re-reads argument text", async () => {
    expect(await renderTemplate("Fix $ARGUMENTS now ($1/$2/$3)", "a  b")).toBe("Fix a  b now (a/b/)");
    expect(await renderTemplate("$10 $1", "x")).toBe("$10 x");
    expect(await renderTemplate("Review the code.\n", "focus on auth")).toBe("Review the code.\n\nARGUMENTS: focus on auth");
    expect(await renderTemplate("No args.", "")).toBe("No args.");
    expect(await renderTemplate("say $1", "$ARGUMENTS")).toBe("say $ARGUMENTS");
    const seen: string[] = [];
    const out = await renderTemplate("a !`git log $1` b $ARGUMENTS", "!`rm -rf x`", async (c) => {
      seen.push(c);
      return "<ran>";
    });
    expect(seen).toEqual(["git log !`rm"]);
    expect(out).toBe("a <ran> b !`rm -rf x`");
  });
});

describe("discovery", () => {
  it("searches the §13 paths low to high; the higher skill of a name wins; symlinked folders are followed", async () => {
    skill(join(home, ".agents/skills"), "deploy", "description: from agents home");
    skill(join(home, ".claude/skills"), "deploy", "description: from claude home");
    skill(join(cfg, "larik/skills"), "deploy", "description: from larik config");
    skill(join(project, ".claude/skills"), "deploy", "description: from project root");
    skill(join(cwd, ".larik/skills"), "deploy", "description: from cwd");
    skill(join(home, ".claude/skills"), "lint", "name: lint-all\ndescription: lints", "body");
    skill(join(root, "elsewhere"), "linked", "description: via a symlink");
    mkdirSync(join(project, ".agents/skills"), { recursive: true });
    symlinkSync(join(root, "elsewhere/linked"), join(project, ".agents/skills/linked"));
    skill(join(project, ".agents/skills"), "bad", "name: has space");
    skill(join(project, ".agents/skills"), "nodesc", "user-invocable: false", "\n# First line wins\nmore");

    const d = await discoverSkills({ cwd, env });
    const byName = Object.fromEntries(d.entries.map((e) => [e.name, e]));
    expect(byName.deploy!.description).toBe("from cwd");
    expect(byName.deploy!.origin).toBe("pkg/.larik/skills");
    expect(d.shadowed.map((s) => s.entry.description)).toEqual(["from agents home", "from claude home", "from larik config", "from project root"]);
    expect(d.shadowed.every((s) => s.by.description === "from cwd")).toBe(true);
    expect(byName["lint-all"]!.origin).toBe("~/.claude/skills");
    expect(byName.linked!.description).toBe("via a symlink");
    expect(byName.nodesc).toMatchObject({ description: "First line wins", described: false, userInvocable: false, modelInvocable: true });
    expect(byName["has space"]).toBeUndefined();
    expect(d.problems).toHaveLength(1);
    expect(d.problems[0]).toContain('name "has space"');
  });

  it("finds commands in the §13 folders; subfolders keep the base name; descriptions and raw argument-hint", async () => {
    write(join(home, ".claude/commands/fix.md"), "Fix the bug\nmore");
    write(join(cfg, "larik/commands/git/commit.md"), "---\ndescription: Commit staged work\nargument-hint: [message] [--amend]\n---\nCommit: $ARGUMENTS");
    write(join(project, ".claude/commands/fix.md"), "---\ndescription: Project fix\n---\nFix $1");
    write(join(cwd, ".larik/commands/quiet.md"), "---\ndescription: Quiet\ndisable-model-invocation: true\n---\nbody");
    const d = await discoverCommands({ cwd, env });
    const byName = Object.fromEntries(d.entries.map((e) => [e.name, e]));
    expect(Object.keys(byName).sort()).toEqual(["commit", "fix", "quiet"]);
    expect(byName.fix).toMatchObject({ description: "Project fix", origin: ".claude/commands", modelInvocable: true });
    expect(d.shadowed[0]!.entry).toMatchObject({ description: "Fix the bug", described: false, modelInvocable: false });
    expect(byName.commit).toMatchObject({ argumentHint: "[message] [--amend]", origin: join(cfg, "larik/commands") });
    expect(byName.quiet!.modelInvocable).toBe(false);
  });
});

describe("the plugin in a host", () => {
  beforeEach(() => {
    skill(join(project, ".claude/skills"), "release", `description: ${"Cuts a release. ".repeat(20)}\nargument-hint: [version]`, "Release version $1 ($ARGUMENTS).");
    skill(join(project, ".claude/skills"), "secret", "description: user-only skill\ndisable-model-invocation: true", "secret body");
    skill(join(project, ".claude/skills"), "helper", "description: model-only skill\nuser-invocable: false", "helper body");
    skill(join(project, ".claude/skills"), "cmux-term", "description: hidden skill", "cmux body");
    skill(join(project, ".claude/skills"), "review", "description: the review skill", "skill review");
    write(join(project, ".claude/commands/review.md"), "---\ndescription: command review\n---\ncommand review");
    write(join(project, ".claude/commands/triage.md"), "---\ndescription: Triage issues\n---\nTriage $ARGUMENTS");
    write(join(project, ".claude/commands/notes.md"), "Take notes");
  });

  it("lists model-invocable entries in the system prompt index and offers the skill tool", async () => {
    const { agent, provider, host } = await open({ skills: { hide: ["cmux-*"] } }, [{ blocks: [text("ok")] }]);
    await drain(agent);
    const system = provider.requests[0]!.system;
    const index = system.slice(system.indexOf("<skills>"));
    expect(index).toContain("helper: model-only skill");
    expect(index).toContain("review: the review skill");
    expect(index).toContain("triage: Triage issues");
    expect(index).not.toContain("secret");
    expect(index).not.toContain("cmux-term");
    expect(index).not.toContain("notes");
    expect(index).not.toContain("command review");
    const releaseLine = index.split("\n").find((l) => l.startsWith("release: "))!;
    expect(releaseLine.length - "release: ".length).toBe(160);
    expect(releaseLine.endsWith("…")).toBe(true);
    expect(provider.requests[0]!.tools.map((t) => t.name)).toContain("skill");
    // Registered in the host's skills registry; hidden skills keep their /name.
    expect(host.skills.list().map((s) => s.name).sort()).toEqual(["cmux-term", "helper", "release", "review", "secret"]);
    expect(host.commands.get("cmux-term")).toBeDefined();
    expect(host.commands.get("helper")).toBeUndefined();
    expect(host.commands.get("secret")!.section).toBe("skills");
    expect(host.commands.get("triage")!.section).toBe("custom commands");
  });

  it("rebuilds the index per fresh context: a skill added on disk appears after /clear, not before", async () => {
    const { agent, provider, host } = await open({}, [{ blocks: [text("1")] }, { blocks: [text("2")] }, { blocks: [text("3")] }]);
    await drain(agent);
    skill(join(cwd, ".larik/skills"), "fresh", "description: added mid-session");
    await drain(agent);
    expect(provider.requests[1]!.system).toBe(provider.requests[0]!.system);
    agent.clear();
    await drain(agent);
    expect(provider.requests[2]!.system).toContain("fresh: added mid-session");
    expect(host.commands.get("fresh")).toBeDefined();
    expect(host.skills.list().filter((s) => s.name === "release")).toHaveLength(1);
    expect(host.skills.entries().filter((e) => e.value.name === "release")).toHaveLength(1);
  });

  it("the skill tool returns the expanded body; unknown names are an error naming the choices", async () => {
    const { agent } = await open({}, [
      { blocks: [call("t1", "skill", { name: "release", arguments: "1.2.0 --dry" }), call("t2", "skill", { name: "nope" })] },
      { blocks: [text("done")] },
    ]);
    const all = (await drain(agent)).filter((e) => e.type === "tool_end") as { tool_id: string; output: string; is_error: boolean }[];
    const ends = ["t1", "t2"].map((id) => all.find((e) => e.tool_id === id)!);
    expect(ends[0]!.output).toBe(`Base directory for this skill: ${join(project, ".claude/skills/release")}\n\nRelease version 1.2.0 (1.2.0 --dry).`);
    expect(ends[0]!.is_error).toBe(false);
    expect(ends[1]!.is_error).toBe(true);
    expect(ends[1]!.output).toMatch(/unknown skill "nope": the skills index lists .*release/);
  });

  it("/name expands a skill or command to a prompt; a skill beats a command of the same name", async () => {
    const { host, agent } = await open();
    expect(await runCommand(host, agent, "release", "2.0")).toContain("Release version 2.0 (2.0).");
    expect(await runCommand(host, agent, "triage", "#12 #13")).toBe("Triage #12 #13");
    expect(await runCommand(host, agent, "notes", "about X")).toBe("Take notes\n\nARGUMENTS: about X");
    expect(await runCommand(host, agent, "review", "")).toContain("skill review");
    expect(host.commands.get("release")!.args).toBe("[version]");
  });

  it("built-in commands keep their names; /skills shows what is in force, shadowed and hidden", async () => {
    const builtin = definePlugin({
      name: "builtins",
      setup(ctx) {
        ctx.commands.register({ name: "review", description: "built-in review", async run() {} });
      },
    });
    skill(join(home, ".claude/skills"), "release", "description: older release");
    const { host, agent } = await open({ skills: { hide: ["cmux-*"] } }, [], "yolo", [builtin]);
    expect(host.commands.get("review")!.description).toBe("built-in review");
    const lines: string[] = [];
    await host.commands.get("skills")!.run({ host, agent, args: "", print: (t) => lines.push(t) });
    const out = lines.join("\n");
    expect(out).toContain("[no /review: /review is taken by builtins]");
    expect(out).toContain("shadowed: release (~/.claude/skills) by .claude/skills");
    expect(out).toContain("/cmux-term — hidden skill (.claude/skills) [hidden from the model]");
    expect(out).toContain("shadowed: review (.claude/commands) by the skill of the same name");
    expect(out).toContain("hidden by skills.hide: cmux-*");
  });
});

describe("inline !`cmd`", () => {
  it("runs only when the checker allows without asking; otherwise leaves a note", async () => {
    const marker = join(root, "marker");
    write(join(project, ".claude/commands/status.md"), `---\ndescription: status\n---\nBranch: !\`echo inline-ok-$1\`\nTouch: !\`touch ${marker}\``);

    const asked = await open({}, [], "default");
    const p1 = await runCommand(asked.host, asked.agent, "status", "x");
    expect(p1).toContain(`[inline command \`touch ${marker}\` was not run: it needs approval`);
    expect(existsSync(marker)).toBe(false);

    const allowed = await open({}, [], "yolo");
    const p2 = await runCommand(allowed.host, allowed.agent, "status", "x");
    expect(p2).toContain("Branch: inline-ok-x");
    expect(existsSync(marker)).toBe(true);
  });

  it("inline commands in a skill loaded by the tool use the agent's checker too", async () => {
    skill(join(cwd, ".larik/skills"), "ctx", "description: context", "Files: !`echo from-inline`");
    const { agent } = await open({}, [{ blocks: [call("t1", "skill", { name: "ctx" })] }, { blocks: [text("done")] }], "yolo");
    const end = (await drain(agent)).find((e) => e.type === "tool_end") as { output: string };
    expect(end.output).toContain("Files: from-inline");
  });
});
