/**
 * Which changes reach the `notify:` command. Without `notify_on:` it gets every change, as it always has;
 * with it, only the kinds listed, and a run that ends (`--overnight`, `--watch`) sends one summary. The
 * Notifier hands them to the command one at a time, in the order they happened.
 */
import { jsonText, oneLine } from '../../domain/sanitize.js';
import { NOTIFY_KINDS, type NotifyKind } from '../../domain/types.js';
import { formatDuration, formatTokens, formatUsd } from '../text/format-units.js';
import type { ReviewPacingSummary } from '../task/events.js';
import { reviewWords } from '../task/review-load.js';

/** The payload kinds the fleet sends to the notify command. */
export type NotifyPayload =
  | { event: 'status'; id: string; status: string; [key: string]: unknown }
  | { event: 'idle' | 'paused' | 'review' | 'gate' | 'summary'; [key: string]: unknown };

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
  /** `review_capacity:` set: the review queue at the end and over the run */
  review?: ReviewPacingSummary;
}

/**
 * The one event a finished `--overnight` or `--watch` run sends: the figures as numbers, and `text`, the line
 * a receiver shows a person, in the words of the TUI and the morning report.
 */
export function summaryPayload(summary: RunSummary): NotifyPayload {
  const c = summary.counts;
  const text =
    `loopfleet: ${c.verified ?? 0} verified, ${c.merged ?? 0} merged, ${c.failed ?? 0} failed, ${c.conflict ?? 0} conflict; ` +
    `${formatTokens(summary.tokens)} tokens, ${formatUsd(summary.costUsd)}, ${formatDuration(summary.elapsedMs)}` +
    (summary.review?.held === true ? `; ${reviewWords(summary.review)}` : '');
  return { event: 'summary', text, ...summary };
}

/** Every string of `value` (at any depth) as a one-line field of the one sanitiser. */
function cleanStrings(value: unknown): unknown {
  if (typeof value === 'string') return oneLine(value);
  if (Array.isArray(value)) return value.map(cleanStrings);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cleanStrings(v)]));
  return value;
}

/**
 * The JSON line the `notify:` command reads on stdin. Its titles and reasons quote agents, and a receiver
 * typically prints them (a desktop notification, a chat message, a terminal): every string is a one-line
 * field of the one sanitiser, and the JSON escapes C1 and bidi controls as well as C0.
 */
export function notifyJson(payload: Record<string, unknown>): string {
  return jsonText(cleanStrings(payload));
}

/**
 * The `notify:` command's chain. Invariant: commands run one after another, so the receiver sees the changes
 * in the order they happened; drained() resolves once every payload sent so far has been handed over (the
 * fleet waits for it at stop, so the last change is not lost at exit).
 */
export class Notifier {
  #chain: Promise<void> = Promise.resolve();
  readonly #config: () => { notify: string | null; notifyOn?: readonly NotifyKind[] | null };
  readonly #run: (command: string, payload: Record<string, unknown>) => Promise<void>;

  /** `run` runs the command with the payload on stdin and resolves when it has ended (it never rejects). */
  constructor(
    config: () => { notify: string | null; notifyOn?: readonly NotifyKind[] | null },
    run: (command: string, payload: Record<string, unknown>) => Promise<void>,
  ) {
    this.#config = config;
    this.#run = run;
  }

  /**
   * The `notify:` command gets each status change, the fleet going idle or pausing, and each gate, as
   * JSON on stdin; `notify_on:` narrows it to the kinds listed.
   */
  send(payload: Record<string, unknown>): void {
    const { notify, notifyOn } = this.#config();
    if (notify === null) return;
    if (!wanted(payload as NotifyPayload, notifyOn ?? null)) return;
    this.#chain = this.#chain.then(() => this.#run(notify, payload));
  }

  drained(): Promise<void> {
    return this.#chain;
  }
}
