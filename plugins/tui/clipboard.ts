/**
 * Clipboard for `/copy` (LARIK-REFERENCE §24: "natively and via terminal (OSC 52, works over
 * SSH)"): the OSC 52 sequence goes to the terminal, and the first native tool found
 * (`pbcopy`, `wl-copy`, `xclip`, `xsel`) gets the text on stdin.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/** The OSC 52 "set clipboard" sequence for `text`. */
function osc52(text: string): string {
  return `\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`;
}

function onPath(cmd: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? "").split(delimiter).some((d) => d && existsSync(join(d, cmd)));
}

/** The native copy command available here, if any. */
function nativeCopyCommand(env: NodeJS.ProcessEnv = process.env): [string, string[]] | undefined {
  const candidates: [string, string[]][] = [
    ["pbcopy", []],
    ...(env.WAYLAND_DISPLAY ? ([["wl-copy", []]] as [string, string[]][]) : []),
    ...(env.DISPLAY ? ([["xclip", ["-selection", "clipboard"]], ["xsel", ["--clipboard", "--input"]]] as [string, string[]][]) : []),
  ];
  return candidates.find(([c]) => onPath(c, env));
}

/**
 * Copies `text`: OSC 52 through `write`, then the native tool when there is one. Resolves when
 * the native tool has taken the text (or at once without one); never rejects.
 */
export async function copyText(text: string, write: (s: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  write(osc52(text));
  const native = nativeCopyCommand(env);
  if (!native) return;
  await new Promise<void>((resolve) => {
    try {
      const child = spawn(native[0], native[1], { stdio: ["pipe", "ignore", "ignore"], env });
      child.on("error", () => resolve());
      child.on("close", () => resolve());
      child.stdin.end(text);
    } catch {
      resolve();
    }
  });
}
