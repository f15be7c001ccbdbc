/**
 * The session store interface and its invariants (LARIK-REFERENCE §7). A session is an
 * append-only linked list of entries; nothing written is rewritten (invariant 2). Branches
 * (fork, rewind) are new sessions that copy a prefix ending at a turn boundary (invariant 4).
 * The JSONL file store is a plugin (`sessions-jsonl`); an embedder may register another.
 */
import * as z from "zod/mini";
import { lazySchema } from "./kit/lazy-schema.js";
import { localMinute } from "./kit/time.js";

// Each schema is a lazySchema: built at its first use, not at import, which keeps zod and
// these ~100 zod objects off the start-up path (bench/startup.mjs).
import { addUsage, emptyUsage, MessageSchema, UsageSchema, type Message, type Usage } from "./types.js";

/**
 * The first entry of every session (LARIK-REFERENCE §7): the folder it belongs to, the model it
 * started with, and for a branch its source id and the message count it kept (`fork_at`).
 */
export const SessionMetaSchema = lazySchema(() =>
  z.object({
    cwd: z.string(),
    provider: z.string(),
    model: z.string(),
    fork_of: z.optional(z.string()),
    fork_at: z.optional(z.number()),
    title: z.optional(z.string()),
  }),
);
/** See {@link SessionMetaSchema}. */
export type SessionMeta = z.infer<typeof SessionMetaSchema>;

const META_FIELD_TYPES: Record<keyof SessionMeta, { type: "string" | "number"; optional: boolean }> = {
  cwd: { type: "string", optional: false },
  provider: { type: "string", optional: false },
  model: { type: "string", optional: false },
  fork_of: { type: "string", optional: true },
  fork_at: { type: "number", optional: true },
  title: { type: "string", optional: true },
};

/**
 * What is wrong with `meta` as {@link SessionMetaSchema} sees it (`model: expected string`), or
 * undefined when nothing is. A store checks the meta of every new session with it: that happens
 * at every start-up, before which nothing else needs zod, and zod's set-up is most of the cost
 * of a parse there (bench/startup.mjs). A test keeps it equal to the schema.
 */
export function sessionMetaProblem(meta: unknown): string | undefined {
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) return "expected an object";
  const m = meta as Record<string, unknown>;
  for (const [key, { type, optional }] of Object.entries(META_FIELD_TYPES)) {
    const value = m[key];
    if (value === undefined && optional) continue;
    if (typeof value !== type || (type === "number" && !Number.isFinite(value))) return `${key}: expected ${type}`;
  }
  return undefined;
}

/**
 * Session entry types (§7): `meta` first, then `message`, `compaction` (a summary, or `/clear`),
 * `usage` (spend outside the transcript), `recovery` (a torn line found on reopening); `decision`
 * and `task` are reserved.
 */
const EntryTypeSchema = lazySchema(() =>
  z.enum(["meta", "message", "compaction", "usage", "decision", "recovery", "task"]),
);

/** One line of a session file. `id` is `<session>-<seq>`, `parent_id` the previous entry's id. */
export const SessionEntrySchema = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    parent_id: z.nullable(z.string()),
    type: EntryTypeSchema,
    ts: z.string(),
    message: z.optional(MessageSchema),
    usage: z.optional(UsageSchema),
    summary: z.optional(z.string()),
    model: z.optional(z.string()),
    meta: z.optional(SessionMetaSchema),
    /** Compaction metrics, decision audit data, recovery details. */
    data: z.optional(z.record(z.string(), z.unknown())),
  }),
);
/** See {@link SessionEntrySchema}. */
export type SessionEntry = z.infer<typeof SessionEntrySchema>;

/** What a caller appends; the store fills `id`, `parent_id` and `ts`. */
export type NewEntry = Omit<SessionEntry, "id" | "parent_id" | "ts">;

/** An open, writable session. One writer per session: a second opener gets a clear error. */
export interface SessionHandle {
  readonly id: string;
  /** Where it lives (a file path for the JSONL store); named in compaction summaries. */
  readonly location: string;
  readonly meta: SessionMeta;
  /** Every entry, oldest first (including those written by this handle). */
  entries(): readonly SessionEntry[];
  /** Appends one entry durably, as one write of one whole record. */
  append(entry: NewEntry): SessionEntry;
  /**
   * Notices produced when opening (a torn line was recovered, ...), for the user: they may name
   * the file, its lines and byte offsets.
   */
  readonly warnings: readonly string[];
  /**
   * For the model, what those warnings mean for the conversation (`part of the saved history was
   * dropped: the last message may be missing`), without what it cannot use (paths, line numbers,
   * byte offsets); sent as `<system-note>`s with the next prompt. A store without them has its
   * warnings sent instead, with a path ending in `.jsonl` replaced by "the session file".
   */
  readonly notes?: readonly string[];
  close(): Promise<void>;
}

/** One session as {@link SessionStore.list} gives it. */
export interface SessionSummary {
  id: string;
  /** `meta.title`, else the first prompt (at most 80 characters); empty before the first prompt. */
  title: string;
  /** ms since epoch of the last write. */
  updated: number;
  location: string;
  fork_of?: string;
}

/**
 * One row of a session list, as `larik --sessions` and `/sessions` print it (§1, §7):
 * `id  YYYY-MM-DD HH:MM  title`, the time being the last write in local time, `⑂ ` before the
 * title of a branch and `  ✓ current` after the one `currentId` names.
 */
export function sessionLine(s: SessionSummary, currentId?: string): string {
  const title = s.title || "(no prompt yet)";
  return `${s.id}  ${localMinute(s.updated)}  ${s.fork_of ? "⑂ " : ""}${title}${s.id === currentId ? "  ✓ current" : ""}`;
}

/** Persists sessions. `cwd` scopes listing and `-c` to one project directory. */
export interface SessionStore {
  name: string;
  create(meta: SessionMeta): Promise<SessionHandle>;
  /**
   * Opens by id or unique id prefix within `cwd`'s sessions. Throws a one-line error for an
   * unknown or ambiguous prefix (listing the candidates).
   */
  open(cwd: string, idOrPrefix: string): Promise<SessionHandle>;
  /** Sessions of `cwd`, newest first. */
  list(cwd: string): Promise<SessionSummary[]>;
  /**
   * Creates a branch holding the first `keep` messages of `source` (`keep` must be the end or a
   * prompt index), with `fork_of`/`fork_at` in its meta. The source is never touched.
   */
  fork(cwd: string, sourceId: string, keep?: number): Promise<SessionHandle>;
}

/**
 * A "prompt" (turn boundary) is a user message with non-empty text, no tool results, not
 * starting with `<task-notification ` or `<hook-feedback ` (LARIK-REFERENCE §7).
 */
export function isPrompt(m: Message): boolean {
  if (m.role !== "user") return false;
  if (m.blocks.some((b) => b.type === "tool_result")) return false;
  const text = m.blocks
    .filter((b) => b.type === "text" && !b.attachment)
    .map((b) => (b as { text: string }).text)
    .join("")
    .trim();
  if (!text) return false;
  const visible = text.replace(/^(<system-note>[\s\S]*?<\/system-note>\s*)+/, "");
  return !visible.startsWith("<task-notification ") && !visible.startsWith("<hook-feedback ");
}

/**
 * What the user typed for a prompt entry that a slash command made (`/review main..HEAD`, whose
 * message holds the collected review prompt): its `data.typed`, written by `Agent.run`'s `typed`
 * option; undefined for a prompt sent as it was typed. Session titles prefer it (§7 "titles =
 * first prompt": the prompt the user gave, as Claude Code lists the typed command).
 */
export function typedPrompt(e: SessionEntry): string | undefined {
  const t = e.data?.typed;
  return typeof t === "string" && t.trim() ? t : undefined;
}

/** One prompt (turn boundary) of a display history, as {@link promptsOf} lists it. */
export interface SessionPrompt {
  /** Index in the display history (`Replayed.all`): the `keep` of a branch before the prompt. */
  index: number;
  /** The prompt's text as the model got it, queued notes, hook context and attachments left out. */
  text: string;
  /** What the user typed when a slash command made the prompt (`/review main..HEAD`); lists show it instead of `text`. */
  typed?: string;
}

/**
 * Prompt indexes (turn boundaries) of a display history, with the text the user typed: queued
 * `<system-note>` and `<hook-context>` blocks and attachments are left out.
 * @param typed `Replayed.typed`: the command line of each prompt a command made, by index
 */
export function promptsOf(all: readonly Message[], typed?: ReadonlyMap<number, string>): SessionPrompt[] {
  return all
    .map((m, index) => ({ m, index }))
    .filter(({ m }) => isPrompt(m))
    .map(({ m, index }) => {
      const text = m.blocks
        .filter((b) => b.type === "text" && !b.attachment && !/^<(system-note|hook-context)[\s>]/.test(b.text))
        .map((b) => (b as { text: string }).text)
        .join("");
      const line = typed?.get(index);
      return line === undefined ? { index, text } : { index, text, typed: line };
    });
}

/** State rebuilt from a session's entries. */
export interface Replayed {
  /**
   * The active context: messages after the latest compaction (or `/clear`, which empties it),
   * consecutive user messages merged.
   */
  messages: Message[];
  /** Every message ever written, for display. */
  all: Message[];
  /**
   * What the user typed for the prompts slash commands made, by index in `all` (the entries'
   * {@link typedPrompt}): front ends show `/review main..HEAD`, not the collected review prompt.
   */
  typed: Map<number, string>;
  /** Token totals per model (`provider/model` or bare model as stored). */
  usageByModel: Map<string, { usage: Usage; requests: number }>;
  compactions: number;
  /** Tokens freed by compactions (their recorded `saved_tokens`, estimates). */
  compactionSavedTokens: number;
  /** `provider/model` of the newest assistant message or usage entry (the model in use). */
  lastModel?: string;
  /**
   * Tokens the active context held at its last model request (input + cache read + cache write
   * of the newest assistant message), or the compaction's recorded `after_tokens` when one came
   * later; 0 after `/clear` or when nothing recorded it. What the context meter shows on resume.
   */
  lastContextTokens: number;
}

/**
 * Rebuilds context and display history from entries (§7: resume reads exactly what was sent;
 * a compaction entry replaces what came before it, `/clear` empties it).
 */
export function replay(entries: readonly SessionEntry[]): Replayed {
  let messages: Message[] = [];
  const all: Message[] = [];
  const typed = new Map<number, string>();
  const usageByModel = new Map<string, { usage: Usage; requests: number }>();
  let compactions = 0;
  let compactionSavedTokens = 0;
  let lastModel: string | undefined;
  let lastContextTokens = 0;
  for (const e of entries) {
    if (e.type === "message" && e.message?.role === "assistant" && e.model) lastModel = e.model;
    if (e.type === "message" && e.message) {
      const line = typedPrompt(e);
      if (line !== undefined) typed.set(all.length, line.trim());
      all.push(e.message);
      pushMerged(messages, e.message);
    } else if (e.type === "compaction" && e.data?.clear === true) {
      // `/clear` (Agent.clear) writes this: a fresh, empty context, not a summary.
      messages = [];
      lastContextTokens = 0;
    } else if (e.type === "compaction" && e.summary !== undefined) {
      compactions++;
      lastContextTokens = typeof e.data?.after_tokens === "number" ? e.data.after_tokens : 0;
      const saved = e.data?.saved_tokens;
      if (typeof saved === "number") compactionSavedTokens += saved;
      messages = [{ role: "user", blocks: [{ type: "text", text: e.summary }] }];
    }
    if (e.type === "message" && e.usage) lastContextTokens = e.usage.input + e.usage.cache_read + e.usage.cache_write;
    if ((e.type === "message" || e.type === "usage") && e.usage) {
      const model = e.model ?? e.message?.model ?? "unknown";
      const cur = usageByModel.get(model) ?? { usage: emptyUsage(), requests: 0 };
      cur.usage = addUsage(cur.usage, e.usage);
      cur.requests++;
      usageByModel.set(model, cur);
    }
  }
  return { messages, all, typed, usageByModel, compactions, compactionSavedTokens, lastModel, lastContextTokens };
}

/** Appends `m`, merging it into a trailing user message so roles alternate. */
export function pushMerged(list: Message[], m: Message): void {
  const last = list[list.length - 1];
  if (last && last.role === "user" && m.role === "user") {
    list[list.length - 1] = { ...last, blocks: [...last.blocks, ...m.blocks] };
  } else {
    list.push(m);
  }
}

/**
 * The result given to a tool call that has none in the session: the process ended (a crash,
 * `kill -9`) between the call and its result, so the call may have started. Saying it never ran
 * would invite the model to repeat a command that already committed, pushed or migrated.
 */
const UNRECORDED_RESULT =
  "interrupted: Larik stopped before this tool call's result was recorded, so it may have run in part, in full or not at all; check its effects before running it again";

/**
 * Makes every tool_use answered: a missing tool_result gets an ordered synthetic error in the
 * next user message, and stray results without a tool_use are dropped (invariant 3;
 * LARIK-REFERENCE §2). Applied
 * before any provider serializes a request, so no 400 comes back for a broken history.
 */
export function repairToolResults(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "assistant") {
      out.push(m);
      const uses = m.blocks.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
      if (uses.length === 0) continue;
      const next = messages[i + 1];
      const results = new Map<string, Message["blocks"][number]>();
      const rest: Message["blocks"] = [];
      if (next && next.role === "user") {
        for (const b of next.blocks) {
          if (b.type === "tool_result") results.set(b.id, b);
          else rest.push(b);
        }
        i++;
      }
      const ordered = uses.map(
        (id) =>
          results.get(id) ?? {
            type: "tool_result" as const,
            id,
            content: UNRECORDED_RESULT,
            is_error: true,
          },
      );
      out.push({ role: "user", blocks: [...ordered, ...rest] });
    } else {
      const known = new Set<string>();
      const prev = out[out.length - 1];
      if (prev?.role === "assistant") for (const b of prev.blocks) if (b.type === "tool_use") known.add(b.id);
      const blocks = m.blocks.filter((b) => b.type !== "tool_result" || known.has(b.id));
      if (blocks.length === 0) continue;
      pushMerged(out, { ...m, blocks });
    }
  }
  return out;
}
