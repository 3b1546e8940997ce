/** Checks: what a check is, what one run of it gave, on base and with a proof, and the reviewer's verdict. Plain data only: every value survives a JSON round-trip. */

/** One named check. A check with `required: false` is run and reported but never fails a task. */
export interface CheckSpec {
  name: string;
  run: string;
  required: boolean;
}

/** What a test runner's summary says. `failing` names the failing tests where the output names them. */
export interface TestCounts {
  /** node:test, vitest, jest, mocha, ava, pytest, go, cargo */
  runner: string;
  passed: number;
  failed: number;
  skipped: number;
  total: number;
  failing?: string[];
  /**
   * set when one runner's summaries in the output do not all say the same (a test printing a summary of
   * its own): what they said. Such counts are not believed: the check fails ({@link judgeCheck}).
   */
  disagreeing?: string;
}

export interface CheckResult {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  /** the last lines of combined stdout+stderr, bounded */
  outputTail: string;
  durationMs: number;
  /** the check's name (its command unless named); absent on results written before named checks */
  name?: string;
  /** false: reported, never fails the task */
  required?: boolean;
  /** test counts parsed from the output, null when no known runner's summary was found */
  counts?: TestCounts | null;
  /** how the attempt was judged on this check (see {@link judgeCheck}) */
  judged?: CheckJudgement;
  /** why, in words, when it is not a plain pass */
  note?: string | null;
}

/**
 * passed: exit 0; failed: fails the attempt; warning: a `required: false` check failed; not-worse: failed
 * on base already and this attempt did not make it worse.
 */
export type CheckJudgement = 'passed' | 'failed' | 'warning' | 'not-worse';

/** A check run once on the commit a task starts from, cached by commit and command. */
export interface BaselineResult {
  name: string;
  command: string;
  commit: string;
  exitCode: number | null;
  timedOut: boolean;
  counts: TestCounts | null;
  durationMs: number;
  outputTail: string;
}

/**
 * `prove: true`: the attempt's tests run against the base's code. proved: the check failed there;
 * not-proved: it passed, so the tests do not exercise the change; no-tests: the diff holds no test file;
 * tests-only: the diff holds nothing but tests, so there is no change to prove (not a failure).
 */
export interface ProofResult {
  status: 'proved' | 'not-proved' | 'no-tests' | 'tests-only';
  /** test files of the diff kept in the scratch copy */
  tests: string[];
  /** non-test files set back to base */
  restored: string[];
  command: string | null;
  exitCode: number | null;
  counts: TestCounts | null;
  outputTail: string;
  message: string;
}

export interface Verdict {
  pass: boolean;
  reasons: string[];
}
