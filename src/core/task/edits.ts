/**
 * What each core transition does to a task's record, as pure edits of a draft. Only the task lifecycle
 * ({@link TaskLifecycle}) calls these, inside its transitions, on its own records: it stays the one writer, and
 * these functions never save, count or tell anyone.
 */
import { statusWhenTicked } from '../../domain/task-rules.js';
import {
  ZERO_USAGE,
  addUsage,
  totalTokens,
  type Role,
  type RunRecord,
  type TaskGates,
  type TaskSpec,
  type TaskState,
  type Usage,
} from '../../domain/types.js';
import { newAttempt } from './attempt-record.js';
import type { EndedAttempt, RequeueCause } from './transitions.js';

/** A task's record on first sight: `queued`, or `merged` for an item ticked `[x]`. */
export function newRecord(spec: TaskSpec, gates: TaskGates, now: string): TaskState {
  return {
    id: spec.id,
    title: spec.title,
    status: statusWhenTicked(spec.done, undefined),
    phase: null,
    attempt: 0,
    maxAttempts: gates.attempts,
    usage: { ...ZERO_USAGE },
    costUsd: 0,
    branch: null,
    reason: null,
    gate: null,
    attempts: [],
    elapsedMs: 0,
    startedAt: null,
    updatedAt: now,
    unpricedModels: [],
    verifyOnly: false,
    gates,
    budget: { fromAttempt: 0, usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0 },
    ...(spec.everyMs === undefined ? {} : { everyMs: spec.everyMs }),
  };
}

/** whether the backlog's item says something the record does not (title, gates, `every:`) */
export function specChanged(t: Readonly<TaskState>, spec: TaskSpec, gates: TaskGates): boolean {
  return (
    t.title !== spec.title ||
    t.maxAttempts !== gates.attempts ||
    !sameGates(t.gates, gates) ||
    t.everyMs !== spec.everyMs
  );
}

/**
 * Whether two gates hold the same value under every key either has. Asked for every task when a fleet
 * opens, so it compares in place rather than through JSON (40,000 stringifications at 20,000 tasks).
 */
function sameGates(kept: Readonly<TaskGates> | undefined, gates: Readonly<TaskGates>): boolean {
  if (kept === undefined) return false;
  const a = kept as unknown as Record<string, unknown>;
  const b = gates as unknown as Record<string, unknown>;
  for (const key in a) if (a[key] !== b[key]) return false;
  for (const key in b) if (!(key in a) && b[key] !== undefined) return false;
  return true;
}

export function refreshSpec(t: TaskState, spec: TaskSpec, gates: TaskGates): void {
  t.title = spec.title;
  t.maxAttempts = gates.attempts;
  t.gates = gates;
  if (spec.everyMs === undefined) delete t.everyMs;
  else t.everyMs = spec.everyMs;
}

/** Attempt `n` starts; an interrupted attempt `n` is renumbered `-n`, its spending kept. */
export function startAttempt(t: TaskState, n: number, branch: string, now: string): void {
  t.waitingFor = null;
  t.currentPlan = null;
  t.attempt = n;
  t.branch = branch;
  t.reason = null;
  t.gate = null;
  t.phase = 'setup';
  t.verifyOnly = false;
  // set again when a worker takes the attempt; an attempt run here has none
  delete t.worker;
  t.startedAt ??= now;
  if (t.nextRunAt != null) t.nextRunAt = null;
  const interrupted = t.attempts.findIndex((a) => a.n === n && a.outcome === 'interrupted');
  if (interrupted !== -1) t.attempts[interrupted]!.n = -n;
  t.attempts.push(newAttempt(n, now));
}

export function endAttempt(t: TaskState, ended: EndedAttempt | undefined): void {
  if (ended === undefined) return;
  const attempt = t.attempts.find((a) => a.n === ended.n);
  if (attempt !== undefined) Object.assign(attempt, ended.record);
}

/** The budget counts from now on: attempts, usage, cost and time spent so far are behind it. */
export function freshBudget(t: TaskState): TaskState['budget'] {
  return { fromAttempt: t.attempt, usage: { ...t.usage }, costUsd: t.costUsd, elapsedMs: t.elapsedMs };
}

/** The last attempt that ended (not interrupted, not running) carries `evidence`: what the next one is told. */
export function giveEvidence(t: TaskState, evidence: string): void {
  const last = t.attempts.findLast((a) => a.outcome !== 'interrupted' && a.outcome !== 'running');
  if (last !== undefined) last.evidence = evidence;
}

export function clearConflicts(t: TaskState): void {
  t.conflictsWith = [];
  t.conflicts = [];
}

/** The edit of a requeue for `cause` (`ended`: the attempt the task was in, for `interrupted`). */
export function requeueEdit(cause: RequeueCause, now: string, ended?: EndedAttempt): (t: TaskState) => void {
  switch (cause.kind) {
    case 'interrupted':
      return (t) => {
        endAttempt(t, ended);
        t.phase = null;
        t.reason = `interrupted: ${cause.reason}`;
      };
    case 'crashed':
      // The attempt it was in is kept as `interrupted` (its spending stays in the totals) and runs again
      // under the same number.
      return (t) => {
        const a = t.attempts.find((x) => x.n === t.attempt && x.outcome === 'running');
        if (a !== undefined) {
          a.outcome = 'interrupted';
          a.reason = 'the fleet stopped while the attempt ran';
          a.endedAt = now;
        }
        t.phase = null;
        t.reason = 'resumed after an interrupted run';
      };
    case 'retry':
      return (t) => {
        t.reason = null;
        clearConflicts(t);
        delete t.approvedPlan;
        t.gate = null;
        t.budget = freshBudget(t);
      };
    case 'rebased':
      return (t) => {
        t.reason = 'rebased onto the new base; verifying again';
        t.verifyOnly = true;
        clearConflicts(t);
        t.budget = freshBudget(t);
      };
    case 'replayed':
      // A person's `r`: a fresh budget, as for any retry; the attempt that made the branch carries the
      // conflict as the evidence the next one is told.
      return (t) => {
        giveEvidence(t, cause.evidence);
        t.reason = 'replayed onto the new base with conflict markers; a new attempt resolves them';
        t.verifyOnly = false;
        clearConflicts(t);
        t.budget = freshBudget(t);
      };
  }
}

/** A recurring task's run ends at `now`: recorded in `runs`, the next one due at `nextRunAt`, with a fresh budget. */
export function endRun(t: TaskState, outcome: RunRecord['outcome'], now: string, nextRunAt: string): void {
  const first = t.attempts.find((a) => a.n > t.budget.fromAttempt);
  const run: RunRecord = {
    startedAt: first?.startedAt ?? t.startedAt ?? now,
    endedAt: now,
    outcome,
    costUsd: Math.max(0, t.costUsd - t.budget.costUsd),
    tokens: Math.max(0, totalTokens(t.usage) - totalTokens(t.budget.usage)),
  };
  t.runs = [...(t.runs ?? []), run];
  t.nextRunAt = nextRunAt;
  // A merged or discarded branch is gone; a run that changed nothing keeps its worktree for the next.
  if (outcome !== 'unchanged') t.branch = null;
  t.phase = null;
  t.gate = null;
  t.verifyOnly = false;
  t.reason =
    outcome === 'unchanged' ? `nothing to change; next run at ${nextRunAt}` : `${outcome}; next run at ${nextRunAt}`;
  t.budget = freshBudget(t);
}

/** One usage report, added to the task and to its current attempt (by role). */
export function bookUsage(t: TaskState, role: Role, delta: Usage, costUsd: number, unpriced: string | null): void {
  t.usage = addUsage(t.usage, delta);
  t.costUsd += costUsd;
  if (unpriced !== null && !t.unpricedModels.includes(unpriced)) t.unpricedModels.push(unpriced);
  const attempt = t.attempts.at(-1);
  if (attempt !== undefined) {
    attempt.usageByRole[role] = addUsage(attempt.usageByRole[role] ?? { ...ZERO_USAGE }, delta);
    attempt.costByRole[role] = (attempt.costByRole[role] ?? 0) + costUsd;
    attempt.costUsd += costUsd;
  }
}
