/**
 * `larik --help`: usage, then what the loaded plugins contribute (front ends and their flags,
 * subcommands, providers, tools, slash commands), so a preset's help describes that preset.
 */
import { join } from "node:path";
import { configDir, dataDir, tildePath, type CliOption, type Host } from "../kernel/index.js";
import { VERSION } from "./version.js";

function flag(name: string, o: CliOption): string {
  const short = o.short ? `-${o.short}, ` : "    ";
  const value = o.type === "string" ? ` ${o.value ?? "<value>"}` : "";
  return `${short}--${name}${value}`;
}

function table(rows: [string, string][], indent = "  "): string {
  const w = Math.min(34, Math.max(0, ...rows.map(([a]) => a.length)));
  // a left cell wider than the column puts its text on the next line, in the column
  return rows.map(([a, b]) => (a.length > w ? `${indent}${a}\n${indent}${" ".repeat(w)}  ${b}` : `${indent}${a.padEnd(w)}  ${b}`)).join("\n");
}

/**
 * ` (plugin b, replacing a's)` for a name that a later plugin registered again: the newest
 * registration wins (kernel/registry.ts), and nothing else tells a user that a config plugin's
 * `read` stands in for the built-in one. Empty for a name registered once.
 */
function replaced(registry: { entries(): { value: { name: string }; owner: string }[] }, name: string): string {
  const owners = registry.entries().filter((e) => e.value.name === name).map((e) => e.owner);
  return owners.length > 1 ? ` (plugin ${owners.at(-1)}, replacing ${owners.at(-2)}'s)` : "";
}

/** The help text for a host and the options parsed for this run. */
export function helpText(host: Host, options: Record<string, CliOption>): string {
  const parts: string[] = [];
  parts.push(`larik ${VERSION}: a terminal coding agent\n`);
  parts.push(`usage:\n${"  larik [flags] [prompt]".padEnd(35)}interactive terminal UI\n${'  larik -p [flags] "prompt"'.padEnd(35)}headless: print the answer and exit`);
  const subs = host.frontends.list().filter((f) => f.subcommand);
  for (const f of subs) parts.push(`  larik ${f.subcommand} [flags]`.padEnd(35) + f.description);
  parts.push("  larik config approve".padEnd(35) + "trust this project's larik.config.ts and the files it loads, as they are now\n");
  parts.push("flags:\n" + table(Object.entries(options).map(([k, o]) => [flag(k, o), o.description])));
  parts.push('  a value that starts with "-": --model=-x; a prompt that does: larik -p -- "-fix it"');
  for (const f of subs) {
    if (!f.options || !Object.keys(f.options).length) continue;
    parts.push(`\nlarik ${f.subcommand} flags:\n` + table(Object.entries(f.options).map(([k, o]) => [flag(k, o), o.description])));
  }
  parts.push("\nfront ends:\n" + table(host.frontends.list().map((f) => [f.name, `${f.description} (plugin ${host.frontends.ownerOf(f.name)})`])));
  parts.push("\nproviders:\n" + table(host.providers.list().map((p) => [p.name, (p.keyEnv?.length ? `key: ${p.keyEnv.join(" or ")}` : "no key needed") + (p.baseUrlEnv?.length ? `, server: ${p.baseUrlEnv.join(" or ")}` : "") + replaced(host.providers, p.name)])));
  parts.push("\ntools:\n  " + host.tools.list().map((t) => t.name + replaced(host.tools, t.name)).join(", "));
  const cmds = host.commands.list();
  if (cmds.length) parts.push("\nslash commands:\n" + table(cmds.map((c) => [`/${c.name}${c.args ? ` ${c.args}` : ""}`, c.description + replaced(host.commands, c.name)])));
  parts.push(`\nplugins: ${host.plugins.join(", ")}`);
  if (host.failed.length) parts.push(`failed plugins: ${host.failed.map((f) => f.name).join(", ")}`);
  // the folders in force ($XDG_CONFIG_HOME, $XDG_DATA_HOME), written with ~ where they are under home
  const personal = tildePath(join(configDir(host.env), "config.json"), host.env);
  const personalCode = tildePath(join(configDir(host.env), "larik.config.ts"), host.env);
  const sessions = tildePath(join(dataDir(host.env), "sessions"), host.env);
  parts.push(`\nconfig: ${personal} (personal), .larik/settings.json (shared)`);
  parts.push(`config code: ${personalCode} (personal), larik.config.ts in the project (after \`larik config approve\`)`);
  parts.push(`sessions: ${sessions}/<dir>-<hash>/<id>.jsonl\n`);
  return parts.join("\n");
}
