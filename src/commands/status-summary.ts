import { formatTokens, formatUsd } from '../core/text/format-units.js';
import { costPerTask, TASK_STATUSES, type StatusSummaryJson, type TaskStatusJson } from '../domain/types.js';

/** `status --json --summary`: the rows of `status --json` in figures ({@link costPerTask}). */
export function statusSummary(rows: readonly TaskStatusJson[]): StatusSummaryJson {
  const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as StatusSummaryJson['counts'];
  for (const r of rows) counts[r.status] += 1;
  const c = costPerTask(rows);
  const round = (x: number | null) => (x === null ? null : Math.round(x * 1e6) / 1e6);
  return {
    counts,
    tasks: rows.length,
    tokens: rows.reduce((sum, r) => sum + r.tokens, 0),
    costUsd: round(c.costUsd)!,
    verified: c.verified,
    merged: c.merged,
    costPerVerified: round(c.costPerVerified),
    costPerMerged: round(c.costPerMerged),
  };
}

/** `status --summary`: the same in one line. */
export function summaryLine(s: StatusSummaryJson): string {
  const counts = TASK_STATUSES.filter((k) => s.counts[k] > 0)
    .map((k) => `${s.counts[k]} ${k}`)
    .join(' · ');
  const perVerified =
    s.costPerVerified === null ? 'none verified' : `${formatUsd(s.costPerVerified)} per verified task`;
  const perMerged = s.costPerMerged === null ? '' : `, ${formatUsd(s.costPerMerged)} per merged task`;
  return `${counts || 'no tasks'} — ${formatTokens(s.tokens)} tokens, ${formatUsd(s.costUsd)}; ${perVerified}${perMerged}`;
}
