import type { AttemptOutcome, TaskStatus } from '../domain/types.js';
import type { FleetSnapshotSummary } from '../core/task/events.js';

/** The colours the TUI uses. Every coloured element also carries a symbol or a word, so nothing is lost without colour. */
export type ColorName = 'green' | 'red' | 'yellow' | 'cyan' | 'blue' | 'magenta' | 'gray' | 'white';

/** One symbol per status; each is a single terminal cell so columns stay aligned. */
export const STATUS_SYMBOL: Readonly<Record<TaskStatus, string>> = {
  queued: '·',
  running: '▶',
  'awaiting-approval': '?',
  verified: '✔',
  merged: '✓',
  discarded: '⌫',
  failed: '✗',
  conflict: '⚠',
};

export const STATUS_COLOR: Readonly<Record<TaskStatus, ColorName>> = {
  queued: 'gray',
  running: 'cyan',
  'awaiting-approval': 'magenta',
  verified: 'green',
  merged: 'blue',
  discarded: 'gray',
  failed: 'red',
  conflict: 'yellow',
};

/** Display order of the status counts in the fleet bar. */
export const STATUS_ORDER: readonly TaskStatus[] = [
  'running',
  'awaiting-approval',
  'queued',
  'verified',
  'merged',
  'conflict',
  'failed',
  'discarded',
];

export type FleetState = FleetSnapshotSummary['state'];

export const FLEET_STATE_LABEL: Readonly<Record<FleetState, { symbol: string; color: ColorName }>> = {
  idle: { symbol: '◌', color: 'gray' },
  running: { symbol: '▶', color: 'cyan' },
  paused: { symbol: '‖', color: 'yellow' },
  stopping: { symbol: '■', color: 'yellow' },
  finished: { symbol: '✔', color: 'green' },
};

export function outcomeColor(outcome: AttemptOutcome): ColorName {
  switch (outcome) {
    case 'verified':
      return 'green';
    case 'running':
      return 'cyan';
    case 'interrupted':
      return 'gray';
    case 'vetoed':
    case 'guard-failed':
      return 'yellow';
    default:
      return 'red';
  }
}

/** Green under 60 % of a limit, yellow under 90 %, red from there on. */
export function ratioColor(ratio: number): ColorName {
  if (ratio >= 0.9) return 'red';
  if (ratio >= 0.6) return 'yellow';
  return 'green';
}
