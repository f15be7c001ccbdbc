/**
 * Runs before each test file (vitest `setupFiles`): Larik's personal folders
 * (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_CACHE_HOME`) point into a fresh temp folder, removed
 * after the file. No test then reads the developer's own settings, or leaves sessions and
 * checkpoints in their real `~/.local/share/larik`. Tests that need particular folders still set
 * their own env.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const base = mkdtempSync(join(tmpdir(), "larik-test-xdg-"));
process.env.XDG_CONFIG_HOME = join(base, "config");
process.env.XDG_DATA_HOME = join(base, "data");
process.env.XDG_CACHE_HOME = join(base, "cache");
// A developer's exported CDPATH changes where `cd web` goes, and the permission checker asks for
// such a `cd` (tests that need CDPATH set it on the checker or the child they start).
delete process.env.CDPATH;
// Provider requests go through a proxy the environment names; the tests' servers are on loopback
// (tests of the proxy path set these themselves).
for (const v of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"]) delete process.env[v];
afterAll(() => rmSync(base, { recursive: true, force: true }));
