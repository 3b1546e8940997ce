import { readFile } from 'node:fs/promises';
import { LowdbStateStore } from '../adapters/store/lowdb-state.js';
import { parseBacklog, runnableTasks } from '../core/backlog/parse.js';
import { UsageError } from '../domain/errors.js';
import { formatTokens, formatUsd } from '../core/text/format-units.js';
import { oneLine } from '../domain/sanitize.js';
import { taskGates } from '../core/budget/gates.js';
import { statusWhenTicked } from '../domain/task-rules.js';
import { totalTokens, type TaskState, type TaskStatusJson } from '../domain/types.js';
import type { Repo } from './repo.js';
import { prWords } from '../core/report/pr-words.js';
import { issueUrlOf } from '../core/tracker/issue-item.js';
import { attemptCounts, baselineJson, checkJson, checksOfAttempt, realAttempts } from '../core/report/check-facts.js';

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
    return Object.values(state.tasks).map((t) => row(t, t.title, t.maxAttempts, t.status));
  }
  const backlog = parseBacklog(text, repo.backlogPath).backlog;
  return runnableTasks(backlog).map((spec): TaskStatusJson => {
    const t: TaskState | undefined = state?.tasks[spec.id];
    const recurring =
      spec.everyMs === undefined
        ? {}
        : { nextRun: t?.status === 'queued' ? (t.nextRunAt ?? null) : null, runs: t?.runs ?? [] };
    const maxAttempts = taskGates(spec, backlog.config).attempts;
    // A tracker task: its item's id is its issue's, and the item states the issue's address.
    const tracked = backlog.config.tracker;
    const source =
      tracked !== undefined && spec.source === spec.id && /^gh#\d+$/.test(spec.id)
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
        waitingFor: null,
        pr: null,
        ...source,
        ...recurring,
      };
    }
    return { ...row(t, spec.title, t.maxAttempts, statusWhenTicked(spec.done, t.status)), ...source, ...recurring };
  });
}

function row(t: TaskState, title: string, maxAttempts: number, status: TaskStatusJson['status']): TaskStatusJson {
  // The verification facts are those of the last attempt that ran.
  const last = realAttempts(t).at(-1);
  return {
    id: t.id,
    title,
    status,
    phase: t.phase,
    attempt: t.attempt,
    maxAttempts,
    tokens: totalTokens(t.usage),
    costUsd: Math.round(t.costUsd * 1e6) / 1e6,
    branch: t.branch,
    reason: t.reason,
    checks: last === undefined ? [] : checksOfAttempt(last).map(checkJson),
    counts: last === undefined ? null : attemptCounts(last),
    baseline: (last?.baseline ?? []).map(baselineJson),
    proof: last?.proof ?? null,
    // predicted while verified; a task that left verified has no branch to conflict
    conflictsWith: t.status === 'verified' ? (t.conflictsWith ?? []) : [],
    conflicts: conflictsJson(t),
    // queued behind a task whose planned files overlap this one's
    waitingFor: t.status === 'queued' ? (t.waitingFor?.id ?? null) : null,
    pr:
      t.pr === undefined
        ? null
        : {
            number: t.pr.number,
            url: t.pr.url,
            state: t.pr.state,
            draft: t.pr.draft,
            ci: t.pr.ci,
            review: t.pr.review,
          },
    ...(t.worker === undefined ? {} : { worker: t.worker }),
    ...(t.workerFlag === undefined ? {} : { workerFlag: { ...t.workerFlag } }),
  };
}

/** With whom and in which files: predicted while verified, found in `conflict`. The hunks stay in state. */
function conflictsJson(t: TaskState): Array<{ with: string; files: string[] }> {
  if (t.status === 'conflict') return (t.conflicts ?? []).map((c) => ({ with: c.with, files: c.files }));
  if (t.status !== 'verified') return [];
  // A forecast recorded before details were kept has the names only.
  const details = t.conflicts ?? (t.conflictsWith ?? []).map((name) => ({ with: name, files: [] }));
  return details.map((c) => ({ with: c.with, files: c.files }));
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
    const reason = (r.reason === null ? '' : ` — ${r.reason}`) + conflicts + pr + flag;
    return oneLine(
      `${r.id.padEnd(7)} ${(r.status + phase).padEnd(18)} ${`${r.attempt}/${r.maxAttempts}`.padEnd(5)} ${formatTokens(r.tokens).padStart(7)}  ${formatUsd(r.costUsd).padStart(9)}  ${r.title}${reason}`,
    );
  });
  return [
    `${'id'.padEnd(7)} ${'status'.padEnd(18)} ${'try'.padEnd(5)} ${'tokens'.padStart(7)}  ${'cost'.padStart(9)}  title`,
    ...lines,
  ].join('\n');
}
