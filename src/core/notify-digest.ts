/**
 * Which changes reach the `notify:` command. Without `notify_on:` it gets every change, as it always has;
 * with it, only the kinds listed, and a run that ends (`--overnight`, `--watch`) sends one summary.
 */

export const NOTIFY_KINDS = ['verified', 'failed', 'conflict', 'awaiting-approval', 'paused', 'gate', 'idle', 'summary'] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];

/** The payload kinds the fleet sends to the notify command. */
export type NotifyPayload =
  | { event: 'status'; id: string; status: string; [key: string]: unknown }
  | { event: 'idle' | 'paused' | 'gate' | 'summary'; [key: string]: unknown };

/** The kind a payload counts as for `notify_on:`; null for a status change no kind names (running, merged…). */
export function kindOf(payload: NotifyPayload): NotifyKind | null {
  if (payload.event !== 'status') return payload.event;
  const status = (payload as { status: string }).status;
  return (NOTIFY_KINDS as readonly string[]).includes(status) ? (status as NotifyKind) : null;
}

/** Whether `payload` goes to the notify command under `notifyOn` (null: no filter, everything goes). */
export function wanted(payload: NotifyPayload, notifyOn: readonly NotifyKind[] | null): boolean {
  if (notifyOn === null) return true;
  const kind = kindOf(payload);
  return kind !== null && notifyOn.includes(kind);
}

export interface RunSummary {
  counts: Record<string, number>;
  tokens: number;
  costUsd: number;
  elapsedMs: number;
  reportPath: string | null;
  exitCode: number;
}

/** The one event a finished `--overnight` or `--watch` run sends. */
export function summaryPayload(summary: RunSummary): NotifyPayload {
  const c = summary.counts;
  const text = `loopfleet: ${c.verified ?? 0} verified, ${c.merged ?? 0} merged, ${c.failed ?? 0} failed, ${c.conflict ?? 0} conflict; $${summary.costUsd.toFixed(2)}`;
  return { event: 'summary', text, ...summary };
}
