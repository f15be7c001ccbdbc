/**
 * A deliberately shallow reading of a bash command line for the permission checker
 * (LARIK-REFERENCE §4 "Bash chaining"). It does not parse quoting: it splits on every control
 * character wherever it appears, so a quote can only cause extra asks, never hide a second
 * command from the allow check. Anything that can run text the rule did not see (substitution,
 * `eval`, `sh -c`, `xargs`, `find -exec`, redirections, background `&`) is reported as a hazard,
 * and a pattern rule never allows a command with a hazard.
 */

/** The result of {@link splitBashCommand}. */
export interface BashSplit {
  /**
   * The simple commands in order: split on `; & | && || ( )`, newlines and backticks, trimmed,
   * runs of spaces/tabs collapsed to one space, empty pieces dropped. The text inside `$( )`,
   * `<( )` and backticks is its own part (so deny rules see it). `2>&1`, `>&2` and redirections
   * to `/dev/null` are removed first.
   */
  parts: string[];
  /** Why no pattern rule may allow this command, one short phrase each; empty when none. */
  hazards: string[];
}

/** Shells whose `-c` runs a string the rule never saw. */
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "busybox"]);
/** Reserved words that may precede a command without changing which command runs. */
const KEYWORDS = new Set(["!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time", "coproc"]);
/** Words at command position that run another command given as arguments (never allowed by a pattern). */
const RUNNERS = new Set(["eval", "exec", "xargs", "env", "source", ".", "trap"]);
/**
 * Wrappers that run the command in their arguments. After one, every later word may start the
 * real command (their option syntax differs too much to skip precisely), so deny rules are tried
 * from each of them.
 */
const WRAPPERS = new Set([
  ...RUNNERS,
  ...SHELLS,
  "sudo", "doas", "command", "builtin", "nohup", "nice", "ionice", "chrt", "taskset", "stdbuf", "setsid",
  "timeout", "watch", "flock", "chroot", "unbuffer", "script", "su", "runuser", "parallel", "strace", "ltrace",
]);
/** `find` (and similar) flags whose following words are a command. */
const EXEC_FLAGS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const SHELL_C_FLAG = /^-[A-Za-z]*c[A-Za-z]*$/;
/** `mapfile`/`readarray` `-C callback` runs the callback string as a command. */
const CALLBACK_FLAG = /^-[A-Za-z]*C/;
/**
 * ANSI-C quoting `$'…'` holding an escape that can spell any character (`\xHH`, `\uHHHH`,
 * `\UHHHHHHHH`, octal `\NNN`, control `\cX`), so `(` and backticks need not appear as written.
 * Other escapes (`\n`, `\t`, `\'`, `\\`) are harmless and do not count.
 */
const ANSI_C_ESCAPE = /\$'(?:[^'\\]|\\[^xuUc0-7])*\\[xuUc0-7]/;

/**
 * Redirections that neither read nor write a file: fd duplication (`2>&1`, `>&2`, `1>&2`) and
 * `/dev/null` targets (`>/dev/null`, `2>>/dev/null`, `&>/dev/null`). They must stand alone
 * (whitespace or an operator on both sides) so `>&file` or `>/dev/nullx` stay hazards.
 */
const BENIGN_REDIRECT = /(^|[ \t;&|()\n])(?:\d*>&\d+|(?:\d*|&)>>?[ \t]*\/dev\/null)(?=$|[ \t;&|()\n])/g;

/** Removes the redirections in {@link BENIGN_REDIRECT}, keeping the separator before each. */
export function stripBenignRedirections(cmd: string): string {
  // Run twice: adjacent redirections share the separator the lookahead left in place.
  let out = cmd;
  for (let i = 0; i < 2; i++) out = out.replace(BENIGN_REDIRECT, (_m, pre: string) => `${pre} `);
  return out;
}

/** Collapses runs of spaces and tabs (bash's blanks) to one space and trims. */
export function collapseBlanks(s: string): string {
  return s.replace(/[ \t]+/g, " ").trim();
}

/** Removes quote characters (with the `$` of `$'…'`/`$"…"`) and backslashes, so `"r"m`, `$'rm'` and `r\m` read as `rm`. */
function unquote(s: string): string {
  return s.replace(/\$(?=["'])/g, "").replace(/["'\\]/g, "");
}

function base(word: string): string {
  const i = word.lastIndexOf("/");
  return i >= 0 ? word.slice(i + 1) : word;
}

/** Command-level hazards found in the raw text (after benign redirections are removed). */
function textHazards(s: string): string[] {
  const out: string[] = [];
  if (s.includes("$(")) out.push("command substitution `$(…)`");
  if (s.includes("`")) out.push("command substitution with backticks");
  if (s.includes("${")) out.push("parameter expansion `${…}`");
  // Bash evaluates array subscripts in arithmetic contexts (`printf -v 'a[x]'`, `test -v`,
  // `[[ x -eq 0 ]]`, `declare -i`), running any `$(…)` they hold, so an escaped one is code too.
  if (ANSI_C_ESCAPE.test(s)) out.push("ANSI-C quoting `$'…'` with a character escape");
  if (/\$IFS\b/.test(s)) out.push("`$IFS` word splitting");
  if (/[<>]\(/.test(s)) out.push("process substitution `<(…)`");
  if (s.includes("<<")) out.push("heredoc or here-string `<<`");
  if (/<(?![<(])/.test(s.replace(/<<+/g, ""))) out.push("input redirection `<` from a file");
  if (/>(?!\()/.test(s)) out.push("output redirection `>` to a file");
  if (/(^|[^&|>])&(?![&>])/.test(s.replace(/&&/g, "  ").replace(/\|&/g, "| "))) out.push("background `&`");
  if (/[\0-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(s)) out.push("control characters");
  return out;
}

/**
 * Which words of a part (already unquoted and collapsed) may begin a command: the first word;
 * the word after leading keywords and `NAME=value` assignments; every word after a wrapper
 * (`sudo`, `env`, `xargs`, `sh`, …); the word after `find -exec`.
 */
function commandStarts(text: string): { words: string[]; offsets: number[]; isStart: boolean[] } {
  const words: string[] = [];
  const offsets: number[] = [];
  const re = /[^ ]+/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    words.push(m[0]);
    offsets.push(m.index);
  }
  const isStart: boolean[] = [];
  let atStart = true;
  let all = false;
  for (const w of words) {
    isStart.push(atStart || all);
    if (atStart) {
      atStart = KEYWORDS.has(w) || ASSIGNMENT.test(w);
      if (WRAPPERS.has(base(w))) all = true;
    }
    if (EXEC_FLAGS.has(w)) atStart = true;
  }
  return { words, offsets, isStart };
}

/** Hazards of one part that come from its words (unquoted). */
function partHazards(part: string): string[] {
  const { words, isStart } = commandStarts(collapseBlanks(unquote(part)));
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (isStart[i]) {
      if (ASSIGNMENT.test(w)) out.push("environment assignment prefix `NAME=…`");
      const b = base(w);
      if (RUNNERS.has(b)) out.push(`\`${b}\` runs another command`);
      if (SHELLS.has(b) && words.slice(i + 1).some((x) => SHELL_C_FLAG.test(x))) out.push(`\`${b} -c\` runs a string`);
      // `printf -v` assigns a variable like `NAME=…`, and from escapes (`\x28`) it can build a
      // `$(…)` that an arithmetic context later runs.
      if (b === "printf" && words[i + 1]?.startsWith("-v")) out.push("`printf -v` assigns a variable");
      if ((b === "mapfile" || b === "readarray") && words.slice(i + 1).some((x) => CALLBACK_FLAG.test(x))) out.push(`\`${b} -C\` runs a string`);
    }
    if (EXEC_FLAGS.has(w)) out.push(`\`${w}\` runs another command`);
  }
  return out;
}

/**
 * Splits a bash command for permission checks (LARIK-REFERENCE §4): every part must match an
 * allow rule for the command to be allowed, and deny rules are tried on every part.
 * Never throws; an empty or blank command yields no parts.
 *
 * @example splitBashCommand("cd web && npm test 2>&1 | tee log")
 *   // → { parts: ["cd web", "npm test", "tee log"], hazards: [] }
 */
export function splitBashCommand(cmd: string): BashSplit {
  const text = stripBenignRedirections(cmd);
  const hazards = new Set(textHazards(text));
  const parts: string[] = [];
  let cur = "";
  const flush = () => {
    const p = collapseBlanks(cur);
    if (p) parts.push(p);
    cur = "";
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ";" || c === "&" || c === "|" || c === "(" || c === ")" || c === "`" || c === "\n" || c === "\r") {
      flush();
      continue;
    }
    cur += c;
  }
  flush();
  for (const p of parts) for (const h of partHazards(p)) hazards.add(h);
  return { parts, hazards: [...hazards] };
}

/**
 * The texts a deny rule is tried against for one part, each with the offsets where a command
 * may start: the part as written (from its start only), and the part with quotes and
 * backslashes removed (from every command start: after keywords, assignments, wrappers such as
 * `env`/`sudo`/`xargs`/`sh -c`, and `find -exec`). This makes deny rules stricter than "text as
 * written" without ever loosening them; a path to the binary (`/bin/rm`) is still not `rm`.
 */
export function denyCandidates(part: string): { text: string; starts: number[] }[] {
  const raw = collapseBlanks(part);
  const plain = collapseBlanks(unquote(part));
  const { offsets, isStart } = commandStarts(plain);
  const starts = offsets.filter((_o, i) => isStart[i]);
  return [
    { text: raw, starts: [0] },
    { text: plain, starts: starts.length ? starts : [0] },
  ];
}

/**
 * True when `word` at the start of a command makes the rest of it another command: a wrapper
 * (`sudo`, `timeout`, `nohup`, `command`, a shell, …; by base name, so `/usr/bin/sudo` counts)
 * or a reserved word (`time`, `if`, `!`, …). A `bash(<word>*)` rule would allow any command
 * behind it.
 */
export function leadsAnotherCommand(word: string): boolean {
  return WRAPPERS.has(base(word)) || KEYWORDS.has(word);
}

/** Characters that disqualify a command from the safe list (§4). */
const SAFE_LIST_META = /[;&|<>$`\n\r(){}\0-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const SAFE_EXACT = new Set([
  "pwd", "date", "git status", "git diff", "git log", "git show", "git branch", "go version", "go env",
  "node --version", "python --version", "python3 --version",
]);
const SAFE_ANY_ARGS = new Set(["ls", "cat", "head", "tail", "wc", "which", "echo", "du", "df"]);

/**
 * True when the command is on the built-in safe list (LARIK-REFERENCE §4): no shell
 * metacharacters, and either one of the exact commands or `ls cat head tail wc which echo du df`
 * with any arguments.
 */
export function isSafeListed(cmd: string): boolean {
  if (SAFE_LIST_META.test(cmd)) return false;
  const c = collapseBlanks(cmd);
  if (SAFE_EXACT.has(c)) return true;
  const first = c.split(" ")[0] ?? "";
  return SAFE_ANY_ARGS.has(first);
}

/** The two words of a bare `cd <dir>` part, or undefined when the part is not one. */
export function cdTarget(part: string): string | undefined {
  const words = part.split(" ");
  if (words[0] !== "cd") return undefined;
  return words.length === 2 ? words[1] : "";
}
