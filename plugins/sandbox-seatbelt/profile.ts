/**
 * The Seatbelt profile (SBPL) for one sandboxed command (LARIK-REFERENCE §19, invariant 21).
 * Deny by default; allows first, denies last, because in SBPL the last matching rule wins: a
 * protected path inside the writable project stays read-only. The base rules (process, sysctl,
 * Mach services, ptys) follow the shape of Chrome's and Codex's `seatbelt_base_policy.sbpl`,
 * minus LaunchServices, which could open apps outside the sandbox.
 *
 * Seatbelt matches resolved paths (`/tmp` is `/private/tmp` on macOS), so callers pass real paths.
 */

/** What {@link buildProfile} needs; every path absolute and already resolved. */
export interface ProfileInput {
  /** The project root (writable). */
  projectRoot: string;
  /** The private temp folder exported as `TMPDIR` (writable). */
  tmpDir: string;
  /** Personal `sandbox.writable` paths (writable). */
  writable: readonly string[];
  /** Build caches (writable). */
  caches: readonly string[];
  /** Paths that stay read-only even inside a writable folder; each covers what lies beneath it. */
  protectedPaths: readonly string[];
  /** Paths that cannot be removed, renamed or replaced while what lies beneath stays writable (`.git`). */
  pinnedPaths?: readonly string[];
  /** Paths that may be neither read nor written (credential files under the config folder). */
  hiddenPaths?: readonly string[];
  /** `sandbox.network`: true shares the host's network; false allows loopback only. */
  network: boolean;
}

/** Paths never made writable, whatever the input says (invariant 21: literal /tmp). */
export const NEVER_WRITABLE: ReadonlySet<string> = new Set(["/", "/tmp", "/private/tmp", "/var", "/private/var", "/dev"]);

/** Mach services a shell and common toolchains need (name lookup, logging, TLS trust, power). */
const MACH_SERVICES = [
  "com.apple.system.opendirectoryd.libinfo",
  "com.apple.system.opendirectoryd.membership",
  "com.apple.system.logger",
  "com.apple.system.notification_center",
  "com.apple.logd",
  "com.apple.bsd.dirhelper",
  "com.apple.trustd.agent",
  "com.apple.securityd.xpc",
  "com.apple.SecurityServer",
  "com.apple.PowerManagement.control",
  "com.apple.analyticsd",
  "com.apple.diagnosticd",
];

/** LaunchServices and Apple Events services: opening apps or scripting them escapes the sandbox. */
const BLOCKED_SERVICES = [
  "com.apple.coreservices.launchservicesd",
  "com.apple.lsd.mapdb",
  "com.apple.lsd.modifydb",
  "com.apple.lsd.open",
  "com.apple.coreservices.appleevents",
  "com.apple.CoreServices.coreservicesd",
];

/**
 * Quotes `s` as an SBPL string literal: backslashes and double quotes escaped.
 * Throws when `s` holds a NUL or a line break, which no real path needs and which could end a rule.
 */
export function sbplString(s: string): string {
  if (/[\0\r\n]/.test(s)) throw new Error(`sandbox path ${JSON.stringify(s)} contains a NUL or line break: rename it or leave it out of sandbox.writable`);
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

function subpaths(paths: readonly string[]): string {
  return paths.map((p) => `\n  (subpath ${sbplString(p)})`).join("");
}

/**
 * Builds the SBPL text. Pure: touches nothing. Throws when a path is relative or holds a line
 * break; writable entries in {@link NEVER_WRITABLE} are dropped (the caller warns about them).
 */
export function buildProfile(input: ProfileInput): string {
  const all = [input.projectRoot, input.tmpDir, ...input.writable, ...input.caches, ...input.protectedPaths, ...(input.pinnedPaths ?? []), ...(input.hiddenPaths ?? [])];
  for (const p of all) if (!p.startsWith("/")) throw new Error(`sandbox path "${p}" is not absolute`);
  const writable = [...new Set([input.projectRoot, input.tmpDir, ...input.caches, ...input.writable])].filter((p) => !NEVER_WRITABLE.has(p.replace(/\/+$/, "") || "/"));
  const out = [
    "(version 1)",
    "(deny default)",
    "(allow process-exec process-fork)",
    "(allow process-info* (target same-sandbox))",
    "(allow signal (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow user-preference-read)",
    "(allow ipc-posix-shm ipc-posix-sem)",
    "(allow iokit-get-properties)",
    `(allow mach-lookup${MACH_SERVICES.map((n) => `\n  (global-name ${sbplString(n)})`).join("")})`,
    "(allow file-read*)",
    `(allow file-write*${subpaths(writable)})`,
    // terminals and the null devices; a pty is allowed only where the sandbox opened it
    '(allow file-read* file-write* file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/ptmx") (literal "/dev/dtracehelper"))',
    '(allow file-read* file-write* file-ioctl (regex #"^/dev/ttys[0-9]+$"))',
    "(allow pseudo-tty)",
  ];
  if (input.network) out.push("(allow network* system-socket)");
  else {
    // loopback only: servers a command starts are reachable by its clients (bind + connect)
    out.push('(allow network-bind network-inbound (local ip "localhost:*"))');
    out.push('(allow network-outbound (remote ip "localhost:*"))');
    // Unix sockets only inside writable folders: the host's (Docker, ssh-agent) stay out of reach
    out.push(`(allow network-bind network-outbound${subpaths(writable)})`);
    out.push("(allow system-socket)");
  }
  // denies last: the last matching rule wins
  if (input.protectedPaths.length) {
    out.push(`(deny file-write*${subpaths(input.protectedPaths)})`);
  }
  if (input.pinnedPaths?.length) {
    out.push(`(deny file-write*${input.pinnedPaths.map((p) => `\n  (literal ${sbplString(p)})`).join("")})`);
  }
  if (input.hiddenPaths?.length) out.push(`(deny file-read* file-write*${subpaths(input.hiddenPaths)})`);
  out.push(`(deny mach-lookup${BLOCKED_SERVICES.map((n) => `\n  (global-name ${sbplString(n)})`).join("")})`);
  out.push("(deny appleevent-send)");
  return out.join("\n") + "\n";
}
