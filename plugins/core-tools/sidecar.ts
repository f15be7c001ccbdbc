/**
 * Sidecar files: the exact output of a bash call, kept privately for `raw_output`
 * (LARIK-REFERENCE §5: keyed by the sha256 of the tool-call id, files 0600 in a 0700 folder).
 */
import { createHash } from "node:crypto";
import { join } from "node:path";

/** `<dir>/<sha256 hex of the tool_use id>.out`: ids may hold characters unsafe in file names. */
export function sidecarFile(dir: string, toolUseId: string): string {
  return join(dir, `${createHash("sha256").update(toolUseId).digest("hex")}.out`);
}
