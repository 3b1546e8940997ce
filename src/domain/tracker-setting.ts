/**
 * The `tracker:` setting of the front matter: an issue tracker whose labelled open issues are tasks of the
 * fleet, and which hears back from it (state labels, one status comment per issue). Plain data only.
 */

export const TRACKER_TYPES = ['github', 'gitlab', 'linear'] as const;
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
  /** Linear: the key of the team whose issues are read (`ENG`), which starts every task id (`ENG-12`) */
  team?: string;
  /** Linear: the workflow state (by its name in the team) an issue is moved to as its task reaches each state */
  states?: Partial<Record<TrackerState, string>>;
  /** false when no state label is written (Linear without `labels:`); state labels are written otherwise */
  stateLabels?: boolean;
}

export const DEFAULT_TRACKER = Object.freeze({
  labelPrefix: 'loopfleet:',
  // A conditional read that finds nothing new costs no rate limit on GitHub; a minute keeps a label's effect prompt.
  pollEveryMs: 60_000,
  maxPages: 3,
});

/** What a task id of a tracker issue looks like, per tracker type (the scope is the setting: Linear's team key). */
const ID_FORMS: Record<TrackerType, { id: (scope: TrackerScope, n: number) => string; number: RegExp }> = {
  github: { id: (_, n) => `gh#${n}`, number: /^gh#(\d+)$/ },
  gitlab: { id: (_, n) => `gl#${n}`, number: /^gl#(\d+)$/ },
  // Linear's own key: the team's key and the issue's number within the team.
  linear: { id: (s, n) => `${s.team ?? 'LIN'}-${n}`, number: /^([A-Z][A-Z0-9]*)-(\d+)$/ },
};

export type TrackerScope = Pick<TrackerSetting, 'type' | 'team'>;

/** The id of a tracker's issue as a task id: `gh#123`, `gl#45`, `ENG-12`. */
export function trackerTaskId(scope: TrackerScope, number: number): string {
  return ID_FORMS[scope.type].id(scope, number);
}

/** The issue number a task id names on the tracker `scope`, or null. */
export function trackerIssueNumber(scope: TrackerScope, id: string): number | null {
  const m = ID_FORMS[scope.type].number.exec(id);
  if (m === null) return null;
  const n = Number(m.at(-1));
  return trackerTaskId(scope, n) === id ? n : null;
}

/** Whether `id` names an issue of the tracker `scope` (a tracker task's id). */
export function isTrackerTaskId(scope: TrackerScope, id: string): boolean {
  return trackerIssueNumber(scope, id) !== null;
}
