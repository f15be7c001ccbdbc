/**
 * Command files built into Larik (LARIK-REFERENCE §13, v0.4): `/review` and `/security-review`.
 * They are discovered below every folder, so a user's `review.md` or `security-review.md` in any
 * commands folder replaces them (`/skills` then lists the built-in one as shadowed). Their text
 * is in `embedded/*.ts`, one module each.
 */
import * as review from "./embedded/review.js";
import * as securityReview from "./embedded/security-review.js";
import type { Entry } from "./discover.js";

/** Where `/skills` says a built-in command file comes from. */
const BUILT_IN_ORIGIN = "built-in";

// name, then the file's frontmatter and body as constants: every start registers these, and
// parsing their frontmatter there cost as much as discovering all the user's skills and commands
const FILES: readonly (readonly [name: string, file: { description: string; argumentHint: string; default: string }])[] = [
  ["review", review],
  ["security-review", securityReview],
];

/**
 * The built-in command files as discovery entries, lowest first. Kept out of the model's index:
 * they are for the user to run (the model can read a diff with its own tools).
 */
export function embeddedCommands(): Entry[] {
  return FILES.map(
    ([name, file]) =>
      ({
        kind: "command",
        name,
        description: file.description,
        described: true,
        file: `${BUILT_IN_ORIGIN}:${name}.md`,
        dir: "",
        origin: BUILT_IN_ORIGIN,
        userInvocable: true,
        modelInvocable: false,
        argumentHint: file.argumentHint,
        embedded: file.default,
      }) satisfies Entry,
  );
}
