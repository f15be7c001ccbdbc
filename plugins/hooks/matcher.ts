/**
 * Hook matchers (LARIK-REFERENCE §14): a case-insensitive regex anchored at both ends; empty or
 * `*` matches everything; a pattern that is not a valid regex is compared literally (still
 * case-insensitive), so `Edit|Write` and `mcp__.*` work as in Claude Code.
 */

/** Compiles a matcher into a predicate over the matched value (tool name, source, trigger). */
export function compileMatcher(matcher: string | undefined): (value: string) => boolean {
  const m = matcher?.trim() ?? "";
  if (m === "" || m === "*") return () => true;
  try {
    const re = new RegExp(`^(?:${m})$`, "i");
    return (value) => re.test(value);
  } catch {
    const lower = m.toLowerCase();
    return (value) => value.toLowerCase() === lower;
  }
}
