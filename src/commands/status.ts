import { readFile } from 'node:fs/promises';
import { LowdbStateStore } from '../adapters/store/lowdb-state.js';
import { parseBacklog, runnableTasks } from '../core/backlog/parse.js';
import { UsageError } from '../domain/errors.js';
import { formatTokens, formatUsd } from '../core/text/format-units.js';
import { oneLine } from '../domain/sanitize.js';
import { taskGates } from '../core/budget/gates.js';
import { statusWhenTicked } from '../domain/task-rules.js';
import type { TaskState, TaskStatusJson } from '../domain/types.js';
import type { Repo } from './repo.js';
import { prWords } from '../core/report/pr-words.js';
import { recurringFields, statusRow } from '../core/report/status-row.js';
import { needsPerson, reviewLoad, reviewWords } from '../core/task/review-load.js';
import { issueUrlOf } from '../core/tracker/issue-item.js';
import { trackerIssueNumber } from '../domain/tracker-setting.js';

/** status reads state and backlog and writes nothing, so it works while a fleet runs. */
export async function statusRows(repo: Repo): Promise<TaskStatusJson[]> {
  const text = await readFile(repo.backlogPath, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  const state = await new LowdbStateStore(repo.statePath).load();
  if (text === null) {
    // BACKLOG.md deleted or renamed away: what state knows still stands, in the order it was recorded.
    if (state === null) throw new UsageError(`no BACKLOG.md in ${repo.root}: run \`loopfleet init\` to write one`);
    return Object.values(state.tasks).map((t) => statusRow(t));
  }
  const backlog = parseBacklog(text, repo.backlogPath).backlog;
  const specs = runnableTasks(backlog);
  const byId = new Map(specs.map((s) => [s.id, s]));
  // `review_capacity:` reached: every queued task that needs a person waits for one to act.
  const load = reviewLoad(
    specs.map((s) => s.id),
    (id) => {
      const t = state?.tasks[id];
      // An item ticked `[x]` is merged, whatever the state file says.
      return t === undefined ? undefined : { ...t, status: statusWhenTicked(byId.get(id)?.done ?? false, t.status) };
    },
    (id) => byId.get(id),
    backlog.config,
    false,
  );
  const atCap = load !== null && load.running + load.waiting >= load.capacity ? load : null;
  return specs.map((spec): TaskStatusJson => {
    const held = atCap !== null && needsPerson(spec, backlog.config, false) ? { waitingForReview: { ...atCap } } : {};
    const t: TaskState | undefined = state?.tasks[spec.id];
    const recurring = recurringFields(t, spec.everyMs !== undefined);
    const maxAttempts = taskGates(spec, backlog.config).attempts;
    // A tracker task: its item's id is its issue's, and the item states the issue's address.
    const tracked = backlog.config.tracker;
    const source =
      tracked !== undefined && spec.source === spec.id && trackerIssueNumber(tracked.type, spec.id) !== null
        ? { source: { type: tracked.type, id: spec.id, url: issueUrlOf(spec.id, spec.description) } }
        : {};
    if (t === undefined) {
      return {
        id: spec.id,
        title: spec.title,
        status: statusWhenTicked(spec.done, undefined),
        phase: null,
        attempt: 0,
        maxAttempts,
        tokens: 0,
        costUsd: 0,
        branch: null,
        reason: null,
        checks: [],
        counts: null,
        baseline: [],
        proof: null,
        conflictsWith: [],
        conflicts: [],
        parent: spec.parent ?? null,
        waitingFor: null,
        waitingForReview: spec.done ? null : (held.waitingForReview ?? null),
        pr: null,
        ...source,
        ...recurring,
      };
    }
    const r = statusRow(t, spec.title, t.maxAttempts, statusWhenTicked(spec.done, t.status));
    return {
      ...r,
      parent: spec.parent ?? null,
      ...(t.parts === undefined ? {} : { parts: [...t.parts] }),
      waitingForReview: r.status === 'queued' ? (held.waitingForReview ?? null) : null,
      ...source,
      ...recurring,
    };
  });
}

/**
 * The table `loopfleet status` prints. Titles, reasons and task names can come from agents, TODOs and
 * issues: each field is a one-line field of the one sanitiser, so a row stays one row and no escape
 * sequence reaches the terminal.
 */
export function statusTable(rows: TaskStatusJson[]): string {
  if (rows.length === 0) return 'no tasks in BACKLOG.md';
  const lines = rows.map((r) => {
    const phase = r.phase === null ? '' : `/${r.phase}`;
    const conflicts = (r.conflictsWith ?? []).length === 0 ? '' : ` ⚠ conflicts with ${r.conflictsWith!.join(', ')}`;
    const pr = r.pr == null ? '' : ` · ${prWords(r.pr)} ${r.pr.url}`;
    const flag = r.workerFlag === undefined ? '' : ` · ⚑ worker ${r.workerFlag.worker} flagged`;
    const review = r.waitingForReview == null || r.reason !== null ? '' : ` — ${reviewWords(r.waitingForReview)}`;
    const reason = (r.reason === null ? '' : ` — ${r.reason}`) + review + conflicts + pr + flag;
    return oneLine(
      `${r.id.padEnd(7)} ${(r.status + phase).padEnd(18)} ${`${r.attempt}/${r.maxAttempts}`.padEnd(5)} ${formatTokens(r.tokens).padStart(7)}  ${formatUsd(r.costUsd).padStart(9)}  ${r.title}${reason}`,
    );
  });
  return [
    `${'id'.padEnd(7)} ${'status'.padEnd(18)} ${'try'.padEnd(5)} ${'tokens'.padStart(7)}  ${'cost'.padStart(9)}  title`,
    ...lines,
  ].join('\n');
}
