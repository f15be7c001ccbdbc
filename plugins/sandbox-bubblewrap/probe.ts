/**
 * Why bubblewrap could not start, and the fix (LARIK-REFERENCE §19 "Startup probe"): bwrap
 * missing; unprivileged user namespaces disabled by a sysctl or by AppArmor (Ubuntu 24.04+);
 * Docker's default seccomp profile and masked /proc. The checks read `/proc/sys` files and
 * `/.dockerenv`, so `sysRoot` lets tests point them elsewhere.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface ProbeFailure {
  reason: string;
  fix: string;
}

function readSys(root: string, rel: string): string | undefined {
  try {
    return readFileSync(join(root, rel), "utf8").trim();
  } catch {
    return undefined;
  }
}

/** The install hint for bwrap. */
const INSTALL_FIX = "install bubblewrap: sudo apt-get install bubblewrap (Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)";

/**
 * Explains a failed probe from bwrap's stderr and the host's settings.
 * `spawnError` is the errno code when bwrap itself could not be started (`ENOENT`: not installed).
 */
export function diagnose(stderr: string, spawnError?: string, sysRoot = "/"): ProbeFailure {
  if (spawnError === "ENOENT") return { reason: "bwrap is not installed", fix: INSTALL_FIX };
  if (spawnError) return { reason: `bwrap could not start (${spawnError})`, fix: "check that bwrap is executable" };
  const first = stderr.trim().split("\n").find((l) => l.trim()) ?? "bwrap failed without a message";
  const reason = `bwrap failed: ${first.replace(/^bwrap:\s*/, "")}`;
  if (readSys(sysRoot, "proc/sys/kernel/apparmor_restrict_unprivileged_userns") === "1") {
    return {
      reason,
      fix: "AppArmor blocks unprivileged user namespaces (Ubuntu 24.04+): add an AppArmor profile that allows userns for /usr/bin/bwrap, or run sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
    };
  }
  if (readSys(sysRoot, "proc/sys/kernel/unprivileged_userns_clone") === "0") {
    return { reason, fix: "unprivileged user namespaces are off: sudo sysctl -w kernel.unprivileged_userns_clone=1" };
  }
  if (readSys(sysRoot, "proc/sys/user/max_user_namespaces") === "0") {
    return { reason, fix: "user namespaces are off: sudo sysctl -w user.max_user_namespaces=15000" };
  }
  const cgroup = readSys(sysRoot, "proc/1/cgroup") ?? "";
  if (existsSync(join(sysRoot, ".dockerenv")) || /docker|containerd|kubepods/.test(cgroup)) {
    return { reason, fix: "inside Docker, start the container with --security-opt seccomp=unconfined --security-opt systempaths=unconfined" };
  }
  if (/namespace|uid map|setting up uid|Operation not permitted|Permission denied/i.test(first)) {
    return { reason, fix: "allow unprivileged user namespaces for bwrap (see your distribution's bubblewrap notes), or set sandbox.enabled to false" };
  }
  return { reason, fix: "run bwrap --ro-bind / / true to see the problem, or set sandbox.enabled to false" };
}
