import type { TestCounts } from '../../domain/types.js';
import { testFileMatcher } from './prove.js';

/**
 * Which past commits make an eval task (`loopfleet eval`): a commit that changes code and tests, whose
 * tests — applied to its parent — fail there and pass at the commit (FAIL_TO_PASS), while every test that
 * passed at the parent still passes (PASS_TO_PASS). Pure: the runs are the caller's.
 *
 * Invariant: a commit is kept only on evidence — the runner named the tests that failed before, the check
 * exited 0 at the commit with no failing test, and it ran at least every test that passed or failed before.
 * Every other case is dropped with the reason in words.
 */

export interface CommitShape {
  parents: readonly string[];
  /** paths the commit adds, changes or deletes, with git's status letter (A, M, D…) */
  changes: ReadonlyArray<{ status: string; path: string }>;
}

export interface Selected {
  /** test files the commit adds or changes: hidden from the agents, applied for the check */
  tests: string[];
  /** the other files it changes: the human change an agent is to reproduce */
  code: string[];
}

/** Whether a commit is worth running at all, from its shape; the reason when it is not. */
export function selectCandidate(shape: CommitShape, testGlobs: readonly string[]): Selected | { why: string } {
  if (shape.parents.length === 0) return { why: 'the first commit: no parent to start from' };
  if (shape.parents.length > 1) return { why: 'a merge commit' };
  const isTest = testFileMatcher(testGlobs);
  const tests = shape.changes.filter((c) => c.status !== 'D' && isTest(c.path)).map((c) => c.path);
  const code = shape.changes.filter((c) => !isTest(c.path)).map((c) => c.path);
  if (tests.length === 0) return { why: 'adds or changes no test file' };
  if (code.length === 0) return { why: 'changes only tests: no change for an agent to make' };
  return { tests, code };
}

/** One run of the check: at the parent with the commit's tests applied, or at the commit. */
export interface HistoryRun {
  exitCode: number | null;
  timedOut: boolean;
  counts: TestCounts | null;
}

export type Judged = { kept: true; failToPass: string[]; passToPass: number } | { kept: false; why: string };

function failedText(run: HistoryRun): string {
  if (run.timedOut) return 'timed out';
  const c = run.counts;
  return c === null ? `exited ${run.exitCode}` : `${c.failed} of ${c.total} tests failed (exit ${run.exitCode})`;
}

export function judgeCandidate(before: HistoryRun, after: HistoryRun): Judged {
  const passes = (r: HistoryRun) => r.exitCode === 0 && !r.timedOut && (r.counts === null || r.counts.failed === 0);
  if (!passes(after)) return { kept: false, why: `the check fails at the commit: ${failedText(after)}` };
  if (passes(before)) return { kept: false, why: 'its tests already pass at the parent: nothing fails before' };
  const b = before.counts;
  if (before.timedOut || b === null || b.failed === 0)
    return {
      kept: false,
      why: `the check fails at the parent without naming failing tests (${failedText(before)}): no FAIL_TO_PASS to tell`,
    };
  if (b.disagreeing !== undefined || after.counts?.disagreeing !== undefined)
    return { kept: false, why: 'the test counts disagree with themselves: not believed' };
  if (b.failing === undefined || b.failing.length === 0)
    return { kept: false, why: `the runner does not name the ${b.failed} failing tests at the parent` };
  const a = after.counts;
  if (a !== null && a.passed < b.passed + b.failing.length)
    return {
      kept: false,
      why: `the commit's check passed ${a.passed} tests, fewer than the ${b.passed} that passed and ${b.failing.length} that failed before`,
    };
  return { kept: true, failToPass: [...b.failing].sort(), passToPass: b.passed };
}
