/**
 * What the tracker shows of a task: the one state label and the one status comment.
 *
 * Invariants:
 * - the comment begins with {@link STATUS_MARKER}, by which a restarted fleet finds it again;
 * - every word in it that loopfleet did not write (the reason, which may quote a check or an agent) is made
 *   inert ({@link inertLine}): it can close no issue, mention nobody, start no quick action;
 * - the money is {@link formatUsd}'s, the one formatter of dollars.
 */
import type { TaskState, TaskStatus } from '../../domain/types.js';
import type { TrackerState, TrackerType } from '../../domain/tracker-setting.js';
import { TRACKER_STATES } from '../../domain/tracker-setting.js';
import { inertLine } from '../land/pr/text.js';
import { attemptCounts, realAttempts } from '../report/check-facts.js';
import { formatUsd } from '../text/format-units.js';

export const STATUS_MARKER = '<!-- loopfleet:status -->';

/** The state label a task's status shows as; null for a discarded task (no state label at all). */
export function trackerState(status: TaskStatus): TrackerState | null {
  switch (status) {
    case 'queued':
    case 'awaiting-approval':
      return 'queued';
    case 'running':
      return 'running';
    case 'verified':
      return 'verified';
    case 'failed':
    case 'conflict':
      return 'failed';
    case 'merged':
      return 'merged';
    case 'discarded':
      return null;
  }
}

/** Every state label under `prefix`, and the one `status` wants. */
export function stateLabels(prefix: string, status: TaskStatus): { all: string[]; wanted: string | null } {
  const state = trackerState(status);
  return { all: TRACKER_STATES.map((s) => `${prefix}${s}`), wanted: state === null ? null : `${prefix}${state}` };
}

/** What a tracker's forge calls a change to merge, and how it refers to one: GitLab's merge request `!7`. */
const CHANGE_WORDS: Partial<Record<TrackerType, { name: string; ref: string }>> = {
  gitlab: { name: 'merge request', ref: '!' },
};

/** The status comment of `task`: the marker, then the state, attempts, tests, cost, branch or PR, reason. */
export function statusComment(task: Readonly<TaskState>, tracker?: TrackerType): string {
  const change = (tracker === undefined ? undefined : CHANGE_WORDS[tracker]) ?? { name: 'pull request', ref: '#' };
  const rows: Array<[string, string]> = [
    ['status', task.phase === null ? task.status : `${task.status} (${task.phase})`],
    ['attempts', `${task.attempt} of ${task.maxAttempts}`],
  ];
  const last = realAttempts(task as TaskState).at(-1);
  const counts = last === undefined ? null : attemptCounts(last);
  if (counts !== null)
    rows.push([
      'tests',
      `${counts.passed}/${counts.total} passing${counts.failed > 0 ? `, ${counts.failed} failing` : ''}`,
    ]);
  rows.push(['cost so far', formatUsd(task.costUsd)]);
  if (task.pr !== undefined)
    rows.push([change.name, `[${change.ref}${task.pr.number}](${task.pr.url}) (${task.pr.state})`]);
  else if (task.branch !== null) rows.push(['branch', `\`${task.branch.replace(/`/g, '')}\``]);
  if (task.reason !== null && task.status !== 'merged') rows.push(['reason', inertLine(task.reason).slice(0, 500)]);
  return [
    STATUS_MARKER,
    `**loopfleet** is working on this issue as task \`${task.id}\`.`,
    '',
    '| | |',
    '| --- | --- |',
    ...rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`),
    '',
    `loopfleet edits this comment as the task moves on; it never closes the issue (the ${change.name} does when it is merged).`,
  ].join('\n');
}
