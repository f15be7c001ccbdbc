/**
 * The footer (LARIK-REFERENCE §24 "Footer"): permission mode (colour-coded; shift+tab cycles),
 * model, effort, sandbox state, session cost, the context meter `ctx 31% · 62k/200k` and the
 * number of background tasks. One row, cut at the terminal width.
 */
import { Text } from "ink";
import type { PermissionMode } from "../../kernel/index.js";
import { formatTokens } from "./summary.js";

/** What the footer shows. Tokens in tokens, cost in USD (null: unpriced model). */
export interface FooterInfo {
  mode: PermissionMode;
  model: string;
  effort?: string;
  sandbox: boolean;
  costUsd: number | null;
  contextTokens: number;
  contextWindow: number;
  backgroundTasks: number;
}

/** Mode colours: the further a mode lets the agent go unasked, the hotter the colour. */
const MODE_COLORS: Record<PermissionMode, string> = {
  default: "gray",
  "accept-edits": "green",
  plan: "blue",
  auto: "magenta",
  yolo: "red",
};

/** `ctx 31% · 62k/200k`; an unknown window gives just the token count. */
export function contextMeter(tokens: number, window: number): string {
  if (!window) return `ctx ${formatTokens(tokens)}`;
  const pct = Math.min(999, Math.round((tokens / window) * 100));
  return `ctx ${pct}% · ${formatTokens(tokens)}/${formatTokens(window)}`;
}

/** `$0.042`, `$1.25`; null for an unpriced model gives `$0 (unpriced)` once something ran. */
export function formatCost(usd: number | null): string {
  if (usd === null) return "$0 (unpriced)";
  return `$${usd < 1 ? usd.toFixed(3) : usd.toFixed(2)}`;
}

/** The effort ramp of §24: a bar that fills with the level. */
const EFFORT_BARS: Record<string, string> = { low: "▂", medium: "▂▃", high: "▂▃▅", xhigh: "▂▃▅▆", max: "▂▃▅▆█" };

/** The footer row. */
export function Footer({ info }: { info: FooterInfo }) {
  const pct = info.contextWindow ? info.contextTokens / info.contextWindow : 0;
  const ctxColor = pct >= 0.8 ? "red" : pct >= 0.6 ? "yellow" : undefined;
  const sep = <Text dimColor>{" · "}</Text>;
  return (
    <Text wrap="truncate-end">
      <Text color={MODE_COLORS[info.mode]} bold>
        {info.mode}
      </Text>
      {sep}
      <Text>{info.model}</Text>
      {info.effort ? (
        <>
          {sep}
          <Text color="magenta">{`${info.effort} ${EFFORT_BARS[info.effort] ?? ""}`.trim()}</Text>
        </>
      ) : null}
      {sep}
      <Text dimColor={!info.sandbox} color={info.sandbox ? "green" : undefined}>
        {info.sandbox ? "sandbox on" : "sandbox off"}
      </Text>
      {sep}
      <Text>{formatCost(info.costUsd)}</Text>
      {sep}
      <Text color={ctxColor}>{contextMeter(info.contextTokens, info.contextWindow)}</Text>
      {info.backgroundTasks > 0 ? (
        <>
          {sep}
          <Text color="yellow">{`${info.backgroundTasks} background`}</Text>
        </>
      ) : null}
    </Text>
  );
}
