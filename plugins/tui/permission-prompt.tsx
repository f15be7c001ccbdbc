/**
 * The permission prompt (LARIK-REFERENCE §24 "Permission prompt UI"): the tool, its input or a
 * diff preview, why it asks, and the answers allow / always (naming the suggested rule) / deny
 * with a reason for the model. Several queued requests show as "1 of N", labelled by agent.
 * Keys are fixed: y/1 allow, a/2 always, n/3 deny (then type the reason), ↑/↓ + enter, esc
 * denies without a reason.
 */
import { Box, Text } from "ink";
import type { Buffer } from "./editor.js";
import type { PendingPermission } from "./controller.js";
import { DiffView, diffViewRows } from "./diff-view.js";
import { stripControl } from "./markdown.js";

/** The answer rows for a request. */
function permissionOptions(p: PendingPermission): { key: string; label: string }[] {
  const rule = p.event.suggested_rule;
  const out = [{ key: "y", label: "Yes" }];
  if (rule) out.push({ key: "a", label: `Yes, and always allow ${rule} in this project` });
  out.push({ key: "n", label: "No, and tell the model why" });
  return out;
}

/** The input shown under the title: the bash command, else pretty JSON. */
function inputPreview(p: PendingPermission): string[] {
  const input = p.event.input as Record<string, unknown> | undefined;
  if (input && typeof input.command === "string") return stripControl(input.command).split("\n");
  const json = JSON.stringify(input ?? {}, null, 2) ?? "";
  return stripControl(json).split("\n");
}

/** Props of {@link PermissionPrompt}. */
export interface PermissionPromptProps {
  pending: PendingPermission;
  /** Requests waiting, this one included. */
  count: number;
  step: "choose" | "reason";
  selected: number;
  reason: Buffer;
  /** Rows the whole prompt may take. */
  maxRows: number;
}

/** Preview rows that fit in `maxRows` for this request. */
function previewBudget(p: PendingPermission, maxRows: number, step: "choose" | "reason"): number {
  const fixed = 2 + 1 + 1 + (shownReason(p.event) ? 1 : 0) + (step === "choose" ? permissionOptions(p).length : 2);
  return Math.max(1, Math.min(20, maxRows - fixed));
}

/** Rows {@link PermissionPrompt} takes. */
export function permissionRows(props: Omit<PermissionPromptProps, "reason" | "selected">): number {
  const { pending: p, maxRows, step } = props;
  const budget = previewBudget(p, maxRows, step);
  const preview = p.preview ? diffViewRows(p.preview, budget) : Math.min(inputPreview(p).length, budget);
  return 2 + 1 + 1 + preview + (shownReason(p.event) ? 1 : 0) + (step === "choose" ? permissionOptions(p).length : 2);
}

/**
 * The checker's reason when it says more than the title does: the plain "<tool> needs
 * approval" would repeat "Allow <tool>?" on the next line; "bash needs approval: $(…) is never
 * allowed by a rule pattern" explains why no rule helped.
 */
function shownReason(ev: PendingPermission["event"]): string | undefined {
  return ev.reason && ev.reason !== `${ev.tool_name} needs approval` ? ev.reason : undefined;
}

/** The prompt box. */
export function PermissionPrompt({ pending: p, count, step, selected, reason, maxRows }: PermissionPromptProps) {
  const ev = p.event;
  const budget = previewBudget(p, maxRows, step);
  const lines = inputPreview(p);
  const shownInput = lines.length > budget ? [...lines.slice(0, budget - 1), `… ${lines.length - budget + 1} more lines`] : lines;
  const options = permissionOptions(p);
  const color = ev.agent ? "yellow" : "cyan";
  const before = reason.text.slice(0, reason.cursor);
  const at = reason.text.slice(reason.cursor, reason.cursor + 1) || " ";
  const after = reason.text.slice(reason.cursor + 1);
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={color} paddingX={1}>
      <Text wrap="truncate-end" bold>
        {ev.agent ? <Text color="yellow">{`[${ev.agent}] `}</Text> : null}
        {`Allow ${ev.tool_name}?`}
        {count > 1 ? <Text dimColor>{`  (1 of ${count})`}</Text> : null}
      </Text>
      <Text wrap="truncate-end" dimColor>{`${ev.tool_name} ${p.summary}`}</Text>
      {p.preview ? (
        <DiffView diff={p.preview} maxLines={budget} />
      ) : (
        <Box flexDirection="column">
          {shownInput.map((l, i) => (
            <Text key={i} wrap="truncate-end">
              {l || " "}
            </Text>
          ))}
        </Box>
      )}
      {shownReason(ev) ? <Text wrap="truncate-end" dimColor italic>{stripControl(shownReason(ev)!)}</Text> : null}
      {step === "choose" ? (
        options.map((o, i) => (
          <Text key={o.key} wrap="truncate-end" color={i === selected ? color : undefined}>
            {`${i === selected ? "❯" : " "} ${i + 1}. ${o.label} `}
            <Text dimColor>{`(${o.key})`}</Text>
          </Text>
        ))
      ) : (
        <>
          <Text wrap="truncate-end">Tell the model why (enter denies, esc goes back):</Text>
          <Text wrap="truncate-end">
            {`› ${before}`}
            <Text inverse>{at}</Text>
            {after}
          </Text>
        </>
      )}
    </Box>
  );
}
