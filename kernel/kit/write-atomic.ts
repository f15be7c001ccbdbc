/**
 * Replacing a private file so that readers see the old bytes or the new, never half of them: the
 * settings files (config.ts) and the checkpoint manifests (checkpoint.ts).
 */
import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";

/**
 * Writes `data` to `file` through a new temporary file in the same folder (mode 0600, created
 * exclusively) and a rename over `file`. The temporary file is removed when anything fails.
 * @throws the fs error of the write or the rename.
 */
export async function writeAtomic(file: string, data: string | Buffer): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(tmp, data, { mode: 0o600, flag: "wx" });
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
