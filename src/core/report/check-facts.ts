import type {
  AttemptRecord,
  BaselineResult,
  CheckResult,
  CheckStatusJson,
  TaskState,
  TestCounts,
} from '../../domain/types.js';
import { formatChange, sumCounts } from '../verify/test-counts.js';

/**
 * The verification facts of attempts, the same for the report, `status --json` and the TUI. Attempts
 * recorded before named checks existed have only `check`; they read as a list of that one result.
 */

export function checksOfAttempt(a: AttemptRecord): CheckResult[] {
  if (a.checks !== undefined && a.checks.length > 0) return a.checks;
  return a.check === null ? [] : [a.check];
}

/** Attempts that ran (numbered from 1; a replaced interrupted attempt keeps a negative number). */
export function realAttempts(task: TaskState): AttemptRecord[] {
  return task.attempts.filter((a) => a.n > 0);
}

export function checkJson(r: CheckResult): CheckStatusJson {
  return {
    name: r.name ?? r.command,
    command: r.command,
    required: r.required ?? true,
    exitCode: r.exitCode,
    timedOut: r.timedOut,
    judged: r.judged ?? (r.timedOut || r.exitCode !== 0 ? 'failed' : 'passed'),
    note: r.note ?? null,
    counts: r.counts ?? null,
    durationMs: r.durationMs,
  };
}

export function baselineJson(b: BaselineResult): CheckStatusJson {
  return {
    name: b.name,
    command: b.command,
    required: true,
    exitCode: b.exitCode,
    timedOut: b.timedOut,
    judged: b.timedOut || b.exitCode !== 0 ? 'failed' : 'passed',
    note: `on ${b.commit.slice(0, 10)}`,
    counts: b.counts,
    durationMs: b.durationMs,
  };
}

/** The counts of an attempt: its checks' counts summed; null when no check gave counts. */
export function attemptCounts(a: AttemptRecord): TestCounts | null {
  return sumCounts(checksOfAttempt(a).map((c) => c.counts));
}

export function baselineCounts(baseline: readonly BaselineResult[] | undefined): TestCounts | null {
  return sumCounts((baseline ?? []).map((b) => b.counts));
}

/**
 * "7/22 failing → 1/22": the latest counts against the previous attempt's, else against base's; null when
 * no attempt has counts.
 */
export function progressLine(task: TaskState): string | null {
  const withCounts = realAttempts(task).filter((a) => attemptCounts(a) !== null);
  const last = withCounts.at(-1);
  if (last === undefined) return null;
  const previous = withCounts.at(-2);
  const before = previous !== undefined ? attemptCounts(previous) : baselineCounts(last.baseline);
  return formatChange(before, attemptCounts(last)!);
}
