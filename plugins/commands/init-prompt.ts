/**
 * The `/init` prompt (LARIK-REFERENCE §13, §29); init.ts fills in `{{file}}` and `{{state}}`.
 * Markdown with frontmatter, as a command file on disk would hold it; a module rather than a
 * `.md` file so that the sources also run unbundled (jiti, vitest) as they are.
 */
export default `---
description: Study the project and write or improve its instruction file (AGENTS.md, or CLAUDE.md where the project has that)
argument-hint: [focus]
---
Write the instruction file {{file}} for this project: the notes a coding agent reads at the start
of every session here, so that it can work well without first rediscovering the basics.

{{state}}

Study the project first, with your read-only tools: the README and other docs, the package and
build manifests, the scripts, the test setup and CI configuration, the layout of the source
folders, and any rules written for other agents or editors (\`.cursorrules\`, \`.cursor/rules/\`,
\`.github/copilot-instructions.md\`, \`CLAUDE.md\` or \`AGENTS.md\` in other folders). Read enough code
to see how the parts fit together.

Then write what a capable newcomer would not guess quickly:

- The commands to build, run, lint and type check, the command that runs the whole test suite,
  and how to run a single test. Only commands you found evidence for.
- The big picture: the main parts, how data and control flow between them, and where to look for
  what. Things that take several files to understand.
- The conventions that differ from the language's or framework's defaults, and the traps: generated
  files not to edit, required environment, slow or flaky steps, ordering constraints.

Keep it short and specific to this project. Leave out what any agent already knows (write tests,
handle errors), lists of every file, and anything you did not verify. Use headings and bullet
points; no introduction or closing words in the file.

Write only {{file}}; change no other file. When you are done, summarize in a few lines what the
file now covers (or what you changed), and tell the user that it takes effect from the next fresh
context: after \`/clear\` or in a new session.
`;
