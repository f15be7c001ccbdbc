/**
 * The Seatbelt backend's pure parts (LARIK-REFERENCE §19, invariant 21). sandbox-exec exists only
 * on macOS, so these tests check the generated profile text, the environment and the probe's
 * answer elsewhere; on macOS one test also runs the profile for real.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildProfile, sbplString } from "./profile.js";
import { scrubEnv, configuredKeyVars } from "../../kernel/index.js";
import { createSeatbeltSandbox, protectedPaths, SANDBOX_EXEC } from "./sandbox.js";

const input = {
  projectRoot: "/Users/me/proj",
  tmpDir: "/private/var/folders/xy/T/larik-sandbox-1",
  writable: ["/Users/me/extra"],
  caches: ["/Users/me/.npm", "/Users/me/Library/Caches"],
  protectedPaths: ["/Users/me/proj/.git/hooks", "/Users/me/proj/.mcp.json"],
  pinnedPaths: ["/Users/me/proj/.git"],
  network: false,
};

/** The `(allow|deny op …)` rules of a profile, one string each. */
function rules(profile: string): string[] {
  return profile.split(/\n(?=\()/).map((r) => r.replace(/\s+/g, " ").trim());
}

describe("buildProfile", () => {
  const p = buildProfile(input);
  const r = rules(p);

  it("denies by default", () => {
    expect(r[0]).toBe("(version 1)");
    expect(r[1]).toBe("(deny default)");
  });

  it("allows writes only under the project, temp folder, caches and sandbox.writable", () => {
    const writes = r.filter((x) => x.startsWith("(allow") && x.includes("file-write*"));
    const paths = writes.flatMap((x) => [...x.matchAll(/\((?:subpath|literal|regex) ([^)]*)\)/g)].map((m) => m[1]));
    const devices = paths.filter((x) => x!.startsWith('"/dev/') || x!.startsWith("#"));
    expect(paths.filter((x) => !devices.includes(x)).sort()).toEqual(
      ['"/Users/me/.npm"', '"/Users/me/Library/Caches"', '"/Users/me/extra"', '"/Users/me/proj"', '"/private/var/folders/xy/T/larik-sandbox-1"'],
    );
    expect(devices.every((d) => /^"\/dev\/(null|zero|tty|ptmx|dtracehelper)"$|^#"\^\/dev\/ttys/.test(d!))).toBe(true);
  });

  it("denies writes to protected paths after every allow", () => {
    const deny = r.findIndex((x) => x.startsWith("(deny file-write*") && x.includes('(subpath "/Users/me/proj/.git/hooks")'));
    expect(deny).toBeGreaterThan(0);
    expect(r[deny]).toContain('(subpath "/Users/me/proj/.mcp.json")');
    const lastAllow = r.map((x) => x.startsWith("(allow")).lastIndexOf(true);
    expect(deny).toBeGreaterThan(lastAllow);
    const pin = r.findIndex((x) => x === '(deny file-write* (literal "/Users/me/proj/.git"))');
    expect(pin).toBeGreaterThan(lastAllow);
  });

  it("never allows literal /tmp, even when asked", () => {
    const q = buildProfile({ ...input, writable: ["/tmp", "/private/tmp/", "/", "/tmp/ok"] });
    expect(q).not.toMatch(/\(subpath "\/(private\/)?tmp\/?"\)/);
    expect(q).not.toContain('(subpath "/")');
    expect(q).toContain('(subpath "/tmp/ok")');
  });

  it("allows only loopback network, or all of it with sandbox.network", () => {
    const net = r.filter((x) => x.startsWith("(allow network"));
    expect(net.length).toBeGreaterThan(0);
    for (const x of net) expect(x).not.toContain('"*:*"');
    expect(net.filter((x) => x.includes("ip "))).toEqual([
      '(allow network-bind network-inbound (local ip "localhost:*"))',
      '(allow network-outbound (remote ip "localhost:*"))',
    ]);
    expect(p).not.toContain("(allow network*");
    expect(buildProfile({ ...input, network: true })).toContain("(allow network* system-socket)");
  });

  it("blocks LaunchServices and Apple Events", () => {
    expect(p).toContain('(global-name "com.apple.coreservices.launchservicesd")');
    expect(r.at(-1)).toBe("(deny appleevent-send)");
    const allowMach = r.find((x) => x.startsWith("(allow mach-lookup"))!;
    expect(allowMach).not.toMatch(/launchservices|lsd\./);
  });

  it("hides credential files from reads", () => {
    const q = rules(buildProfile({ ...input, hiddenPaths: ["/Users/me/.config/larik/chatgpt-auth.json"] }));
    const hide = q.findIndex((x) => x === '(deny file-read* file-write* (subpath "/Users/me/.config/larik/chatgpt-auth.json"))');
    expect(hide).toBeGreaterThan(q.findIndex((x) => x === "(allow file-read*)"));
  });

  it("escapes quotes and backslashes in paths", () => {
    expect(sbplString('/a "b"\\c')).toBe('"/a \\"b\\"\\\\c"');
    const q = buildProfile({ ...input, projectRoot: '/Users/me/we"ird\\dir' });
    expect(q).toContain('(subpath "/Users/me/we\\"ird\\\\dir")');
    expect(() => buildProfile({ ...input, writable: ["/a\n(allow default)"] })).toThrow(/line break/);
    expect(() => buildProfile({ ...input, writable: ["rel/path"] })).toThrow(/not absolute/);
  });
});

describe("environment", () => {
  it("scrubs credentials and keeps sandbox.env_passthrough", () => {
    const env = { PATH: "/bin", OPENAI_API_KEY: "x", GH_ACCESS_TOKEN: "x", ANTHROPIC_AUTH_TOKEN: "x", MY_SECRET: "x", KEEP_API_KEY: "k", LARIK_SERVER_TOKEN: "x" };
    const extra = configuredKeyVars({ providers: { p: { api_key_env: "MY_SECRET" } } });
    expect(scrubEnv(env, { passthrough: ["KEEP_API_KEY"], extra })).toEqual({ PATH: "/bin", KEEP_API_KEY: "k" });
  });
});

describe("seatbelt sandbox", () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "larik-seatbelt-test-")));
  const project = join(base, "project");
  mkdirSync(project);
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it("probes as macOS-only elsewhere", async () => {
    const sb = createSeatbeltSandbox({ projectRoot: project, settings: {}, platform: "linux" });
    expect(await sb.probe()).toEqual({ ok: false, reason: "seatbelt runs on macOS only", fix: "use the bubblewrap sandbox on Linux" });
  });

  it("wraps as sandbox-exec -p <profile> bash -c <command> with a private TMPDIR and a scrubbed env", () => {
    const notices: string[] = [];
    const sb = createSeatbeltSandbox({
      projectRoot: project,
      settings: { sandbox: { writable: ["/tmp", "relative"], env_passthrough: ["KEEP_API_KEY"] } },
      notice: (t) => notices.push(t),
    });
    try {
      const cmd = sb.wrap("echo hi", { cwd: project, projectRoot: project, env: { PATH: "/bin", OPENAI_API_KEY: "s", KEEP_API_KEY: "k" } });
      expect(cmd.file).toBe(SANDBOX_EXEC);
      expect(cmd.args[0]).toBe("-p");
      expect(cmd.args.slice(2)).toEqual(["bash", "-c", "echo hi"]);
      const t = sb.tmpDir();
      expect(t).not.toBe(realpathSync(tmpdir()));
      expect(cmd.env).toEqual({ PATH: "/bin", KEEP_API_KEY: "k", TMPDIR: t, TMP: t, TEMP: t });
      expect(cmd.args[1]).toContain(`(subpath ${sbplString(t)})`);
      expect(cmd.args[1]).toContain(`(subpath ${sbplString(project)})`);
      expect(notices).toHaveLength(2);
    } finally {
      sb.dispose();
    }
  });

  it("protects .git metadata, .larik, .claude and .mcp.json, existing or not", () => {
    expect(protectedPaths(project).deny).toEqual([".git", ".larik", ".claude", ".mcp.json"].map((e) => join(project, e)));
    const repo = join(base, "repo");
    mkdirSync(repo);
    execFileSync("git", ["init", "-q"], { cwd: repo });
    const p = protectedPaths(repo);
    expect(p.pin).toEqual([join(repo, ".git")]);
    expect(p.deny).toContain(join(repo, ".git", "hooks"));
    expect(p.deny).toContain(join(repo, ".git", "config"));
    const wt = join(base, "wt");
    mkdirSync(wt);
    writeFileSync(join(wt, ".git"), `gitdir: ${join(repo, ".git")}\n`);
    const w = protectedPaths(wt);
    expect(w.deny).toContain(join(wt, ".git"));
    expect(w.writable).toEqual([join(repo, ".git")]);
    expect(w.deny).toContain(join(repo, ".git", "config"));
  });

  it.runIf(process.platform === "darwin")("really confines writes on macOS", () => {
    const sb = createSeatbeltSandbox({ projectRoot: project, settings: {} });
    try {
      const run = (c: string) => {
        const cmd = sb.wrap(c, { cwd: project, projectRoot: project, env: process.env as Record<string, string> });
        return spawnSync(cmd.file, cmd.args, { cwd: project, env: cmd.env }).status;
      };
      expect(run("echo a > ok.txt && echo b > \"$TMPDIR/x\"")).toBe(0);
      expect(run("echo a > /tmp/larik-seatbelt-escape")).not.toBe(0);
      expect(run("mkdir .larik")).not.toBe(0);
    } finally {
      sb.dispose();
    }
  });
});
