import { checkJson, checksOfAttempt, realAttempts } from '../../core/report/check-facts.js';
import { recurringFields, statusRow } from '../../core/report/status-row.js';
import { parentOf } from '../../core/backlog/scan.js';
import type { ReviewWait } from '../../core/fleet/handle.js';
import type { CheckStatusJson, TaskState, TaskStatusJson, Verdict } from '../../domain/types.js';
import { totalTokens } from '../../domain/types.js';

/**
 * A task as the API lists it: the row of `status --json` ({@link statusRow}, the one builder both use),
 * plus what the list shows beyond it: the wall clock spent, when it started and changed, and its gates.
 */
export interface TaskRowJson extends TaskStatusJson {
  elapsedMs: number;
  startedAt: string | null;
  updatedAt: string;
  /** the task's own limits (attempts, tokens, cost, time), null in state written before they were kept */
  gates: TaskState['gates'] | null;
}

/** `review`: what the task waits behind at `review_capacity:` ({@link FleetView.waitingForReview}) */
export function taskRow(t: TaskState, review: ReviewWait | null = null): TaskRowJson {
  return {
    ...statusRow(t),
    parent: parentOf(t.id),
    ...(t.parts === undefined ? {} : { parts: [...t.parts] }),
    waitingForReview: review,
    ...recurringFields(t, t.everyMs !== undefined),
    elapsedMs: t.elapsedMs,
    startedAt: t.startedAt,
    updatedAt: t.updatedAt,
    gates: t.gates ?? null,
  };
}

/** One check with the tail of its output, as the detail view shows it. */
export interface CheckDetailJson extends CheckStatusJson {
  output: string;
}

/** One attempt of a task's history. */
export interface AttemptJson {
  n: number;
  startedAt: string;
  endedAt: string | null;
  outcome: string;
  reason: string | null;
  commit: string | null;
  diffStat: string | null;
  tokens: number;
  costUsd: number;
  verdict: Verdict | null;
  guard: string[];
  checks: CheckStatusJson[];
}

/** What `GET /api/tasks/:id` answers: the row, and what the detail pane shows of the task. */
export interface TaskDetailJson extends TaskRowJson {
  /** the plan of the latest attempt that has one; null before the explorer wrote any */
  plan: { attempt: number; text: string } | null;
  /** the plan a person approved (`autonomy: plan`), when one was */
  approvedPlan: string | null;
  /** the task branch's unified diff against base ('' when none) */
  diff: string;
  /**
   * the checks of the last attempt that ran any (the row's `checks`, each with its output tail); the
   * counts and the checks on base are the row's `counts` and `baseline`
   */
  checks: CheckDetailJson[];
  /** the attempt `checks` belong to; null when no attempt ran a check */
  checksAttempt: number | null;
  /** that attempt's setup command, when it ran one */
  setup: { command: string; exitCode: number | null; timedOut: boolean; output: string } | null;
  /** the reviewer's verdict of the last attempt that has one */
  review: { attempt: number; pass: boolean; reasons: string[] } | null;
  history: AttemptJson[];
  /** the predicted (verified) or found (conflict) conflicts, with their marker regions */
  conflictDetails: Array<{ with: string; files: string[]; hunks: Array<{ file: string; hunk: string }> }>;
  /** the latest lines of agent output and of setup/check output this server has seen (live, bounded) */
  output: { agent: string[]; phase: string[] };
}

export function taskDetail(
  t: TaskState,
  diff: string,
  output: TaskDetailJson['output'],
  review: ReviewWait | null = null,
): TaskDetailJson {
  const attempts = realAttempts(t);
  const withPlan = attempts.findLast((a) => a.plan !== null && a.plan.trim() !== '');
  const withChecks = attempts.findLast((a) => a.check !== null || a.setup !== null || (a.checks?.length ?? 0) > 0);
  const withVerdict = attempts.findLast((a) => a.verdict !== null);
  const row = taskRow(t, review);
  return {
    ...row,
    plan:
      withPlan !== undefined
        ? { attempt: withPlan.n, text: withPlan.plan! }
        : t.currentPlan
          ? { attempt: t.attempt, text: t.currentPlan }
          : null,
    approvedPlan: t.approvedPlan ?? null,
    diff,
    checks:
      withChecks === undefined
        ? []
        : checksOfAttempt(withChecks).map((r) => ({ ...checkJson(r), output: r.outputTail })),
    checksAttempt: withChecks?.n ?? null,
    setup:
      withChecks?.setup == null
        ? null
        : {
            command: withChecks.setup.command,
            exitCode: withChecks.setup.exitCode,
            timedOut: withChecks.setup.timedOut,
            output: withChecks.setup.outputTail,
          },
    review:
      withVerdict === undefined
        ? null
        : { attempt: withVerdict.n, pass: withVerdict.verdict!.pass, reasons: withVerdict.verdict!.reasons },
    history: attempts.map((a) => ({
      n: a.n,
      startedAt: a.startedAt,
      endedAt: a.endedAt,
      outcome: a.outcome,
      reason: a.reason,
      commit: a.commit,
      diffStat: a.diffStat,
      tokens: Object.values(a.usageByRole).reduce((sum, u) => sum + (u === undefined ? 0 : totalTokens(u)), 0),
      costUsd: Math.round(a.costUsd * 1e6) / 1e6,
      verdict: a.verdict,
      guard: a.guard,
      checks: checksOfAttempt(a).map(checkJson),
    })),
    conflictDetails: conflictDetails(t),
    output,
  };
}

function conflictDetails(t: TaskState): TaskDetailJson['conflictDetails'] {
  if (t.status === 'conflict') return t.conflicts ?? [];
  if (t.status !== 'verified') return [];
  return t.conflicts ?? (t.conflictsWith ?? []).map((name) => ({ with: name, files: [], hunks: [] }));
}
