import { totalTokens, type TaskState, type TaskStatusJson } from '../../domain/types.js';
import { attemptCounts, baselineJson, checkJson, checksOfAttempt, realAttempts } from './check-facts.js';

/**
 * One task's row of `status --json`, from its record. `status` reads it from the state file (with the
 * title, attempts and status BACKLOG.md gives), `serve` from the live fleet: both call this one builder,
 * so the two shapes cannot drift apart.
 */
export function statusRow(
  t: TaskState,
  title: string = t.title,
  maxAttempts: number = t.maxAttempts,
  status: TaskStatusJson['status'] = t.status,
): TaskStatusJson {
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
    ...candidatesField(t),
  };
}

/** A best-of-N task's candidates, every round's; {} for a task that never ran one (the row stays as it was). */
function candidatesField(t: TaskState): Pick<TaskStatusJson, 'candidates'> {
  const rounds = t.attempts.filter((a) => (a.candidates?.length ?? 0) > 0);
  if (rounds.length === 0) return {};
  return {
    candidates: rounds.flatMap((a) =>
      a.candidates!.map((c) => ({ k: c.k, status: c.outcome, ref: c.ref, chosen: a.chosen?.k === c.k })),
    ),
  };
}

/** A recurring task's fields of the row (`every:`): when it runs next and its finished runs; {} for any other. */
export function recurringFields(
  t: TaskState | undefined,
  recurring: boolean,
): Pick<TaskStatusJson, 'nextRun' | 'runs'> {
  if (!recurring) return {};
  return { nextRun: t?.status === 'queued' ? (t.nextRunAt ?? null) : null, runs: t?.runs ?? [] };
}

/** With whom and in which files: predicted while verified, found in `conflict`. The hunks stay in state. */
function conflictsJson(t: TaskState): Array<{ with: string; files: string[] }> {
  if (t.status === 'conflict') return (t.conflicts ?? []).map((c) => ({ with: c.with, files: c.files }));
  if (t.status !== 'verified') return [];
  // A forecast recorded before details were kept has the names only.
  const details = t.conflicts ?? (t.conflictsWith ?? []).map((name) => ({ with: name, files: [] }));
  return details.map((c) => ({ with: c.with, files: c.files }));
}
