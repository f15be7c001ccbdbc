/**
 * Command files built into Larik (LARIK-REFERENCE §13, v0.4): `/review` and `/security-review`.
 * They are discovered below every folder, so a user's `review.md` or `security-review.md` in any
 * commands folder replaces them (`/skills` then lists the built-in one as shadowed). Their text
 * is in `embedded/*.ts`, one module each.
 */
import reviewText from "./embedded/review.js";
import securityReviewText from "./embedded/security-review.js";
import type { Entry } from "./discover.js";
import { parseFrontmatter } from "./frontmatter.js";

/** Where `/skills` says a built-in command file comes from. */
export const BUILT_IN_ORIGIN = "built-in";

const FILES: readonly (readonly [name: string, text: string])[] = [
  ["review", reviewText],
  ["security-review", securityReviewText],
];

/**
 * The built-in command files as discovery entries, lowest first. Kept out of the model's index:
 * they are for the user to run (the model can read a diff with its own tools).
 */
export function embeddedCommands(): Entry[] {
  return FILES.map(([name, text]) => {
    const fm = parseFrontmatter(text);
    return {
      kind: "command",
      name,
      description: typeof fm.data.description === "string" ? fm.data.description : name,
      described: true,
      file: `${BUILT_IN_ORIGIN}:${name}.md`,
      dir: "",
      origin: BUILT_IN_ORIGIN,
      userInvocable: true,
      modelInvocable: false,
      argumentHint: fm.raw["argument-hint"] || undefined,
      embedded: fm.body,
    } satisfies Entry;
  });
}
