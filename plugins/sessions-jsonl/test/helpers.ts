import { mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "../../../kernel/index.js";
import { JsonlSessionStore } from "../store.js";

/** A temp XDG_DATA_HOME and project folder; `done()` removes both. */
export function tempStore(): { store: JsonlSessionStore; env: NodeJS.ProcessEnv; root: string; cwd: string; done: () => void } {
  const base = mkdtempSync(join(tmpdir(), "larik-sessions-"));
  const env = { XDG_DATA_HOME: join(base, "data"), HOME: join(base, "home") };
  const cwd = join(base, "project");
  mkdirSync(cwd);
  return {
    store: new JsonlSessionStore({ env }),
    env,
    root: join(base, "data", "larik"),
    cwd,
    done: () => rmSync(base, { recursive: true, force: true }),
  };
}

export const user = (text: string): Message => ({ role: "user", blocks: [{ type: "text", text }] });
export const assistant = (text: string): Message => ({ role: "assistant", blocks: [{ type: "text", text }], model: "m1" });
export const usage = { input: 10, output: 5, cache_read: 2, cache_write: 1 };
export const meta = (cwd: string) => ({ cwd, provider: "scripted", model: "m1" });
