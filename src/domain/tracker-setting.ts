/**
 * The `tracker:` setting of the front matter: an issue tracker whose labelled open issues are tasks of the
 * fleet, and which hears back from it (state labels, one status comment per issue). Plain data only.
 */

export const TRACKER_TYPES = ['github', 'gitlab'] as const;
export type TrackerType = (typeof TRACKER_TYPES)[number];

/** The task states a tracker shows as labels, in the order a task passes them. */
export const TRACKER_STATES = ['queued', 'running', 'verified', 'failed', 'merged'] as const;
export type TrackerState = (typeof TRACKER_STATES)[number];

export interface TrackerSetting {
  type: TrackerType;
  /** the label that makes an open issue a task */
  label: string;
  /** what the state labels start with (`loopfleet:` → `loopfleet:queued`) */
  labelPrefix: string;
  /** how often `--watch` reads the tracker, ms */
  pollEveryMs: number;
  /** the most pages of issues one pass reads (100 issues a page) */
  maxPages: number;
}

export const DEFAULT_TRACKER = Object.freeze({
  labelPrefix: 'loopfleet:',
  // A conditional read that finds nothing new costs no rate limit on GitHub; a minute keeps a label's effect prompt.
  pollEveryMs: 60_000,
  maxPages: 3,
});

/** How each tracker's issue ids begin (`gh#123`, `gl#45`); a tracker not named here keys its ids otherwise. */
const ISSUE_ID_PREFIX: Partial<Record<TrackerType, string>> = { github: 'gh#', gitlab: 'gl#' };

/** The id of a tracker's issue as a task id: `gh#123`, `gl#45`. */
export function trackerTaskId(type: TrackerType, number: number): string {
  return `${ISSUE_ID_PREFIX[type] ?? `${type}#`}${number}`;
}

/** The issue number a task id names on a tracker of `type`, or null. */
export function trackerIssueNumber(type: TrackerType, id: string): number | null {
  const prefix = ISSUE_ID_PREFIX[type];
  if (prefix === undefined || !id.startsWith(prefix)) return null;
  const digits = id.slice(prefix.length);
  return /^\d+$/.test(digits) ? Number(digits) : null;
}
