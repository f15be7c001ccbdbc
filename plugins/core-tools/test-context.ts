/**
 * Test helpers: a temp project folder and a filled {@link ToolContext} whose tracker,
 * checkpoints and sidecar folder are real and inspectable. Not part of the plugin's runtime.
 */
import { mkdtemp, mkdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { invalidArguments, parseToolArguments, type AnyTool, type FileTracker, type ToolContext, type ToolResult } from "../../kernel/index.js";

/** A temp folder (symlinks resolved, as the host canonicalizes cwd) removed by `cleanup`. */
export async function tempDir(prefix = "larik-core-tools-"): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes `files` (relative path → content) under `root`, creating folders. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, rel);
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, content);
  }
}

/** A context plus what the tools did to it. */
export interface TestContext extends ToolContext {
  /** Absolute paths passed to `checkpoint`, in order. */
  checkpoints: string[];
  /** The controller behind `signal`. */
  controller: AbortController;
  notices: string[];
}

/**
 * A tool context rooted at `root` (cwd and project root unless overridden). `failCheckpoint`
 * makes `checkpoint` throw for the paths it returns true for.
 */
export function makeContext(
  root: string,
  over: Partial<ToolContext> & { failCheckpoint?: (abs: string) => boolean; sidecar?: string } = {},
): TestContext {
  const reads = new Map<string, number>();
  const files: FileTracker = {
    recordRead: (p, m) => void reads.set(p, m),
    lastRead: (p) => reads.get(p),
  };
  const controller = new AbortController();
  const checkpoints: string[] = [];
  const notices: string[] = [];
  const sidecar = over.sidecar ?? join(root, ".sidecars");
  const { failCheckpoint, sidecar: _s, ...rest } = over;
  return {
    cwd: root,
    projectRoot: root,
    signal: controller.signal,
    sessionId: "test-session",
    toolUseId: "toolu_test",
    files,
    async checkpoint(abs) {
      if (failCheckpoint?.(abs)) throw new Error("disk full");
      checkpoints.push(abs);
    },
    notice: (t) => void notices.push(t),
    async sidecarDir() {
      await mkdir(sidecar, { recursive: true, mode: 0o700 });
      return sidecar;
    },
    settings: {},
    ...rest,
    checkpoints,
    controller,
    notices,
  };
}

/** Validates `input` as the kernel does ({@link parseToolArguments}) and runs the tool. */
export async function call(tool: AnyTool, input: unknown, ctx: ToolContext, toolUseId?: string): Promise<ToolResult> {
  const parsed = parseToolArguments(tool.input, input);
  if (!parsed.success) return { content: invalidArguments(tool.name, parsed.error, input), is_error: true };
  return tool.run(parsed.data, toolUseId ? { ...ctx, toolUseId } : ctx);
}
