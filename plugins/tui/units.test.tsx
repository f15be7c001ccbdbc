/**
 * Unit tests of the TUI's pure parts: wrapping and the frame scheduler, stable cuts of
 * streaming Markdown, the editor buffer, key mapping, palette ranking, history, the file
 * picker, diff previews and the footer figures.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import stringWidth from "string-width";
import type { Command } from "../../kernel/index.js";
import { previewDiff } from "./diff-view.js";
import * as ed from "./editor.js";
import { contextMeter, formatCost } from "./footer.js";
import { BSU, ESU, FrameScheduler, hardWrap, syncOutput, tailRows, wordWrap } from "./frame.js";
import { HISTORY_LIMIT, historyFile, PromptHistory } from "./history.js";
import { keyAction, splitBurst, textThenEnter } from "./keys.js";
import { loadMarkdown, renderMarkdown, stableCut } from "./markdown.js";
import { listProjectFiles, pickerEntries } from "./mentions.js";
import { filterCommands, needsArgs } from "./palette.js";
import { formatTokens } from "./summary.js";
import { plain, tempProject } from "./test-kit.js";

const key = (k: Partial<import("ink").Key> = {}) =>
  ({
    upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false,
    return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false,
    super: false, hyper: false, capsLock: false, numLock: false, ...k,
  }) as import("ink").Key;

describe("frame", () => {
  it("hard-wraps by cell width, keeping colour across the break", () => {
    expect(hardWrap("abcdefgh", 3)).toEqual(["abc", "def", "gh"]);
    expect(hardWrap("一二三四", 5)).toEqual(["一二", "三四"]);
    const rows = hardWrap("\x1b[31mredredred\x1b[39m", 4);
    expect(rows.map(plain)).toEqual(["redr", "edre", "d"]);
    expect(rows[1]!.startsWith("\x1b[31m")).toBe(true);
    expect(rows[0]!.endsWith("\x1b[0m")).toBe(true);
    expect(hardWrap("", 10)).toEqual([""]);
    expect(hardWrap("a\n\nb", 10)).toEqual(["a", "", "b"]);
  });

  it("wordWrap breaks between words, as Ink wraps the transcript, and inside a word too long for a row", () => {
    expect(wordWrap("without breaking the words here", 10)).toEqual(["without ", "breaking ", "the words ", "here"]);
    expect(wordWrap("abcdefgh", 3)).toEqual(["abc", "def", "gh"]);
    expect(wordWrap("一二三四", 5)).toEqual(["一二", "三四"]);
    expect(wordWrap("a\tb", 3)).toEqual(["a  ", "  b"]);
    // colour closed at each break and reopened on the next row, so every row renders alone
    expect(wordWrap("\x1b[31mred red\x1b[39m", 4)).toEqual(["\x1b[31mred \x1b[39m", "\x1b[31mred\x1b[39m"]);
    for (const cols of [5, 9, 17, 40]) {
      const text = "The quick brown fox jumps over the lazy dog, then naps beside a supercalifragilistic hedge.";
      for (const row of wordWrap(text, cols)) expect(stringWidth(row)).toBeLessThanOrEqual(cols);
      expect(wordWrap(text, cols).join("").replace(/\s+/g, " ")).toBe(text);
    }
    expect(tailRows("streamed without breaking words", 12, 2)).toEqual({ rows: ["breaking ", "words"], hidden: 2 });
  });

  it("splitBurst splits a chunk of typed keys into the keys Ink would have given one by one", () => {
    expect(splitBurst("fix it\r")).toEqual([{ input: "fix it", key: {} }, { input: "\r", key: { return: true } }]);
    expect(splitBurst("\x12query\r")).toEqual([{ input: "r", key: { ctrl: true } }, { input: "query", key: {} }, { input: "\r", key: { return: true } }]);
    expect(splitBurst("ab\x7fc\td")).toEqual([{ input: "ab", key: {} }, { input: "", key: { backspace: true } }, { input: "c", key: {} }, { input: "\t", key: { tab: true } }, { input: "d", key: {} }]);
    // one key, plain text, and escape sequences are left as Ink gave them
    for (const input of ["\r", "x", "plain text", "\x1b[A\r"]) expect(splitBurst(input)).toBeUndefined();
    expect(textThenEnter("ollama/llama3\r")).toBe("ollama/llama3");
    for (const input of ["\r", "a\rb\r", "\x12x\r", "text"]) expect(textThenEnter(input)).toBeUndefined();
  });

  it("tailRows keeps the last rows and counts the hidden ones", () => {
    const text = Array.from({ length: 10 }, (_, i) => `r${i}`).join("\n");
    expect(tailRows(text, 80, 3)).toEqual({ rows: ["r7", "r8", "r9"], hidden: 7 });
    expect(tailRows("short", 80, 3)).toEqual({ rows: ["short"], hidden: 0 });
    expect(tailRows("x", 80, 0).rows).toEqual([]);
  });

  it("the scheduler merges requests into one flush per frame and holds no timer when idle", async () => {
    let t = 0;
    const flush = vi.fn();
    const s = new FrameScheduler(flush, 33, () => t);
    expect(s.pending).toBe(false);
    s.request();
    s.request();
    s.request();
    expect(s.pending).toBe(true);
    await new Promise((r) => setTimeout(r, 5));
    expect(flush).toHaveBeenCalledTimes(1);
    expect(s.pending).toBe(false);
    s.request();
    s.immediate();
    expect(flush).toHaveBeenCalledTimes(2);
    expect(s.pending).toBe(false);
  });

  it("wraps writes in synchronized-output codes only on a TTY outside CI", () => {
    expect(syncOutput("x", { isTTY: true }, {})).toBe(`${BSU}x${ESU}`);
    expect(syncOutput("x", { isTTY: false }, {})).toBe("x");
    expect(syncOutput("x", { isTTY: true }, { CI: "true" })).toBe("x");
  });
});

describe("markdown", () => {
  it("cuts a stream after the last finished paragraph outside code fences", () => {
    expect(stableCut("one\n\ntwo")).toBe(5);
    expect(stableCut("one\ntwo")).toBe(0);
    expect(stableCut("```\na\n\nb\n")).toBe(0);
    expect(stableCut("```\na\n\nb\n```\n\nafter")).toBe("```\na\n\nb\n```\n\n".length);
    expect(stableCut("p\n\n~~~\nx\n\n")).toBe(3);
  });

  it("renders Markdown and strips control characters from model text", async () => {
    await loadMarkdown();
    const out = plain(renderMarkdown("# Head\n\n**bold** \x1b]0;evil\x07text"));
    expect(out).toContain("Head");
    expect(out).toContain("bold");
    expect(out).not.toContain("**");
    expect(renderMarkdown("a\x1b[2Jb")).not.toContain("\x1b[2J");
  });

  it("renders inline Markdown inside list items, tight, loose and nested", async () => {
    await loadMarkdown();
    const out = plain(renderMarkdown("- item **two** and `code`\n  - nested *em*\n1. one **1**\n\n- loose **a**\n\n- b\n"));
    expect(out).toMatch(/^ +\* item two and code$/m);
    expect(out).toMatch(/^ +\* nested em$/m);
    expect(out).toMatch(/^ +1\. one 1$/m);
    expect(out).toMatch(/^ +\* loose a$/m);
    expect(out).not.toMatch(/\*\*|`/);
  });
});

describe("editor", () => {
  it("inserts, deletes by grapheme and moves by line", () => {
    let b = ed.insert(ed.EMPTY, "héllo 👍🏽");
    b = ed.backspace(b);
    expect(b.text).toBe("héllo ");
    b = ed.insert(ed.bufferOf("ab\ncd"), "");
    b = ed.up(b);
    expect(b.cursor).toBe(2);
    b = ed.home(b);
    expect(b.cursor).toBe(0);
    b = ed.down(ed.end(b));
    expect(b.cursor).toBe(5);
    expect(ed.deleteWord(ed.bufferOf("run the tests")).text).toBe("run the ");
    expect(ed.insert(ed.EMPTY, "a\r\nb\rc").text).toBe("a\nb\nc");
  });

  it("finds and completes @ mentions", () => {
    expect(ed.mentionAt(ed.bufferOf("see @src/ma"))).toEqual({ query: "src/ma", start: 4 });
    expect(ed.mentionAt(ed.bufferOf("mail@example"))).toBeUndefined();
    expect(ed.completeMention(ed.bufferOf("see @sr"), "src/", false).text).toBe("see @src/");
    expect(ed.completeMention(ed.bufferOf("see @my"), "my file.ts", true).text).toBe('see @"my file.ts" ');
  });
});

describe("keys", () => {
  it("maps the default bindings", () => {
    expect(keyAction("", key({ return: true }))).toEqual({ type: "submit" });
    expect(keyAction("", key({ return: true, meta: true }))).toEqual({ type: "newline" });
    expect(keyAction("", key({ return: true, shift: true }))).toEqual({ type: "newline" });
    expect(keyAction("\n", key())).toEqual({ type: "newline" });
    expect(keyAction("[27;2;13~", key())).toEqual({ type: "newline" });
    expect(keyAction("", key({ tab: true, shift: true }))).toEqual({ type: "cycleMode" });
    expect(keyAction("r", key({ ctrl: true }))).toEqual({ type: "historySearch" });
    expect(keyAction("g", key({ ctrl: true }))).toEqual({ type: "externalEditor" });
    expect(keyAction("o", key({ ctrl: true }))).toEqual({ type: "toggleThinking" });
    expect(keyAction("", key({ delete: true }))).toEqual({ type: "backspace" });
    expect(keyAction("[200~", key())).toEqual({ type: "pasteStart" });
    expect(keyAction("[15~", key())).toEqual({ type: "none" });
    expect(keyAction("hello", key())).toEqual({ type: "insert", text: "hello" });
  });
});

describe("palette", () => {
  const c = (name: string, description = "", extra: Partial<Command> = {}): Command => ({ name, description, run: async () => {}, ...extra });
  it("ranks exact, then prefix, then substring of the name, by section", () => {
    const list = [c("model"), c("mode"), c("remodel"), c("cost", "model spend"), c("mod-skill", "", { section: "skills" }), c("modx")];
    expect(filterCommands(list, "mode").map((x) => x.name)).toEqual(["mode", "model", "remodel"]);
    expect(filterCommands(list, "mod").map((x) => x.name)).toEqual(["mode", "model", "modx", "mod-skill", "remodel"]);
    expect(filterCommands(list, "zzz")).toEqual([]);
    expect(filterCommands(list, "").length).toBe(list.length);
    expect(needsArgs(c("resume", "", { args: "<id>" }))).toBe(true);
    // Claude Code's /exit finds our /quit, as typing it runs it
    expect(filterCommands([c("quit"), c("export"), c("model")], "exit").map((x) => x.name)).toEqual(["quit"]);
    expect(filterCommands([c("quit"), c("export"), c("model")], "ex").map((x) => x.name)).toEqual(["export", "quit"]);
    expect(needsArgs(c("model", "", { args: "[spec]" }))).toBe(false);
  });
});

describe("history", () => {
  it("persists per project, skips repeats, keeps at most 500 and searches newest first", async () => {
    const { dir, env } = tempProject();
    const h = await PromptHistory.load(dir, env);
    for (let i = 0; i < HISTORY_LIMIT + 20; i++) void h.add(`prompt ${i}`);
    void h.add(`prompt ${HISTORY_LIMIT + 19}`);
    await h.flush();
    const again = await PromptHistory.load(dir, env);
    expect(again.entries).toHaveLength(HISTORY_LIMIT);
    expect(again.entries[0]).toBe("prompt 20");
    expect(again.search("prompt 3")?.text).toBe("prompt 399");
    expect(again.prev("draft")).toBe(`prompt ${HISTORY_LIMIT + 19}`);
    expect(again.next()).toBe("draft");
    writeFileSync(historyFile(dir, env), readFileSync(historyFile(dir, env), "utf8") + '"torn');
    expect((await PromptHistory.load(dir, env)).entries).toHaveLength(HISTORY_LIMIT);
  });
});

describe("file picker", () => {
  it("lists project files honouring .gitignore (also outside git) and ranks picker rows", async () => {
    const { dir } = tempProject();
    mkdirSync(join(dir, "src", "deep"), { recursive: true });
    writeFileSync(join(dir, "src", "app.ts"), "");
    writeFileSync(join(dir, "src", "deep", "apple.ts"), "");
    writeFileSync(join(dir, "build.log"), "");
    writeFileSync(join(dir, ".gitignore"), "*.log\n");
    const files = await listProjectFiles(dir);
    expect(files).toContain("src/app.ts");
    expect(files).not.toContain("build.log");
    expect(pickerEntries(files, "sr")).toEqual([{ path: "src/", dir: true }]);
    expect(pickerEntries(files, "src/")).toEqual([
      { path: "src/deep/", dir: true },
      { path: "src/app.ts", dir: false },
    ]);
    expect(pickerEntries(files, "appl").map((e) => e.path)).toEqual(["src/deep/apple.ts"]);
  });
});

describe("diff preview", () => {
  it("previews edit, write and multi_edit against the file on disk", async () => {
    const { dir } = tempProject();
    writeFileSync(join(dir, "a.txt"), "one\ntwo\nthree\n");
    const edit = await previewDiff("edit", { path: "a.txt", old_string: "two", new_string: "2" }, dir);
    expect(edit).toContain("-two");
    expect(edit).toContain("+2");
    const write = await previewDiff("write", { path: "new.txt", content: "fresh\n" }, dir);
    expect(write).toContain("+fresh");
    const multi = await previewDiff("multi_edit", { path: "a.txt", edits: [{ old_string: "one", new_string: "1" }, { old_string: "three", new_string: "3" }] }, dir);
    expect(multi).toContain("+1");
    expect(multi).toContain("+3");
    expect(await previewDiff("bash", { command: "ls" }, dir)).toBeUndefined();
  });
});

describe("footer and summaries", () => {
  it("formats the context meter, cost and token counts", () => {
    expect(contextMeter(62_000, 200_000)).toBe("ctx 31% · 62k/200k");
    expect(contextMeter(1_500, 128_000)).toBe("ctx 1% · 1.5k/128k");
    expect(formatCost(0.0421)).toBe("$0.042");
    expect(formatCost(null)).toBe("$0 (unpriced)");
    expect(formatTokens(1_200_000)).toBe("1.2M");
  });
});
