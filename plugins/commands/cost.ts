/**
 * `/cost` (LARIK-REFERENCE §9, §29): tokens and USD per model, totals, the context meter and
 * what compaction freed. Prices come from the catalog of the model that answered; a model with
 * no price is shown as unpriced rather than as $0.
 */
import { addUsage, catalogEntry, costOf, emptyUsage, type Agent, type Command, type Usage } from "../../kernel/index.js";
import { COMMAND_META } from "./meta.js";
import { contextMeter, exactTokens, kTokens, usd } from "./format.js";

/** One model's row of `/cost`. Tokens; `cost_usd` null when unpriced. */
export interface CostRow {
  model: string;
  requests: number;
  usage: Usage;
  cost_usd: number | null;
}

/** The figures `/cost` prints, for the TUI sidebar or tests. */
export interface CostReport {
  rows: CostRow[];
  total: Usage;
  /** Sum of priced rows in USD. */
  total_usd: number;
  /** Models that have no price in the catalog. */
  unpriced: string[];
  /** Prompt size of the last request and the window, in tokens. */
  context_tokens: number;
  /**
   * The window of the model in use; null when no model could be opened (`larik -p /cost` with
   * none configured, or `-c` whose model has no key here) and the catalog does not know it: the
   * 128k fallback the loop assumes for a model it runs would be invented there.
   */
  context_window: number | null;
  compactions: number;
  /** Tokens freed by compaction in this session (estimates recorded with each compaction). */
  compaction_saved_tokens: number;
}

/** Collects the `/cost` figures of an agent's session. */
function costReport(agent: Agent): CostReport {
  const { host } = agent;
  const rows: CostRow[] = [];
  let total = emptyUsage();
  let totalUsd = 0;
  const unpriced: string[] = [];
  for (const [model, v] of agent.usageByModel) {
    const slash = model.indexOf("/");
    const entry = slash > 0 ? catalogEntry(host.providers, host.settings, model.slice(0, slash), model.slice(slash + 1)) : catalogEntry(host.providers, host.settings, "", model);
    const cost = costOf(v.usage, entry);
    rows.push({ model, requests: v.requests, usage: v.usage, cost_usd: cost });
    total = addUsage(total, v.usage);
    if (cost === null) unpriced.push(model);
    else totalUsd += cost;
  }
  const entries = agent.session.entries();
  let saved = 0;
  for (const e of entries) if (e.type === "compaction" && typeof e.data?.saved_tokens === "number") saved += e.data.saved_tokens;
  return {
    rows,
    total,
    total_usd: totalUsd,
    unpriced,
    context_tokens: agent.lastContextTokens,
    context_window: agent.modelError ? (catalogEntry(host.providers, host.settings, agent.providerName, agent.model)?.context_window ?? null) : agent.contextWindow(),
    compactions: agent.compactions,
    // Metrics of compactions made since opening are also in the entries; the larger covers both.
    compaction_saved_tokens: Math.max(saved, agent.compactionSavedTokens),
  };
}

function tokenLine(u: Usage): string {
  return `input ${exactTokens(u.input)} · output ${exactTokens(u.output)} · cache read ${exactTokens(u.cache_read)} · cache write ${exactTokens(u.cache_write)}`;
}

/** The printed lines of `/cost`. */
function costLines(r: CostReport): string[] {
  const lines: string[] = [];
  if (!r.rows.length) lines.push("no model requests in this session yet");
  for (const row of r.rows) {
    lines.push(`${row.model} · ${row.requests} request${row.requests === 1 ? "" : "s"} · ${row.cost_usd === null ? "unpriced" : usd(row.cost_usd)}`);
    lines.push(`  ${tokenLine(row.usage)}`);
  }
  if (r.rows.length) {
    const cost = r.unpriced.length === r.rows.length ? "unpriced" : `${usd(r.total_usd)}${r.unpriced.length ? ` + unpriced (${r.unpriced.join(", ")})` : ""}`;
    lines.push(`total · ${cost}`);
    lines.push(`  ${tokenLine(r.total)}`);
  }
  lines.push(r.context_window === null ? `ctx ${kTokens(r.context_tokens)} · context window unknown: no model is open` : contextMeter(r.context_tokens, r.context_window));
  if (r.compactions) lines.push(`compactions: ${r.compactions} · ~${kTokens(r.compaction_saved_tokens)} tokens freed`);
  return lines;
}

export const costCommand: Command = {
  ...COMMAND_META.cost,
  async run(ctx) {
    for (const l of costLines(costReport(ctx.agent))) ctx.print(l);
  },
};
