import { describe, expect, it } from 'vitest';
import {
  checksOf,
  countsMarker,
  decisive,
  failureDetail,
  failureReason,
  judgeCheck,
} from '../../../src/core/verify/checks.js';
import { failureFingerprint } from '../../../src/core/budget/gates.js';
import { testFileMatcher } from '../../../src/core/verify/prove.js';
import { defaultConfig } from '../../../src/core/backlog/parse.js';
import type { BaselineResult, CheckResult, TestCounts } from '../../../src/domain/types.js';

const counts = (failed: number, total: number, failing?: string[]): TestCounts => ({
  runner: 'node:test',
  passed: total - failed,
  failed,
  skipped: 0,
  total,
  ...(failing ? { failing } : {}),
});
const run = (exitCode: number | null, c: TestCounts | null = null, timedOut = false): CheckResult => ({
  command: 'npm test',
  exitCode,
  timedOut,
  outputTail: 'out',
  durationMs: 1000,
  counts: c,
});
const base = (exitCode: number, c: TestCounts | null): BaselineResult => ({
  name: 'npm test',
  command: 'npm test',
  commit: 'a'.repeat(40),
  exitCode,
  timedOut: false,
  counts: c,
  durationMs: 1,
  outputTail: '',
});
const spec = { name: 'npm test', run: 'npm test', required: true };

describe('judging a check against its base', () => {
  it.each([
    ['exit 0', run(0), null, true, 'passed', null],
    ['exit 1, no base', run(1), null, true, 'failed', 'exited 1'],
    ['timed out, even with exit 0 on record', run(0, null, true), null, true, 'failed', 'timed out after 1s'],
    ['killed', run(null), null, true, 'failed', 'was killed'],
    [
      'exit 0 with fewer tests than base',
      run(0, counts(0, 3)),
      base(0, counts(0, 22)),
      true,
      'failed',
      'the check ran 3 tests, base ran 22',
    ],
    ['exit 0 with more tests than base', run(0, counts(0, 23)), base(0, counts(0, 22)), true, 'passed', null],
    [
      'failing on base, fewer failing now',
      run(1, counts(1, 22)),
      base(1, counts(2, 22)),
      true,
      'not-worse',
      'fails on base too (2 failing tests); not worse: 1/22 failing',
    ],
    [
      'failing on base, more failing now',
      run(1, counts(3, 22)),
      base(1, counts(2, 22)),
      true,
      'failed',
      'exited 1 — 3 failing, base had 2',
    ],
    [
      'failing on base, same count, a new name',
      run(1, counts(2, 22, ['a', 'c'])),
      base(1, counts(2, 22, ['a', 'b'])),
      true,
      'failed',
      'exited 1 — failing now but not on base: c',
    ],
    [
      'failing on base, names a subset',
      run(1, counts(1, 23, ['a'])),
      base(1, counts(2, 22, ['a', 'b'])),
      true,
      'not-worse',
      'fails on base too (2 failing tests); not worse: 1/23 failing',
    ],
    ['failing on base without counts', run(1), base(1, null), true, 'failed', 'exited 1'],
    [
      "the task's own check failing on base",
      run(1, counts(1, 22)),
      base(1, counts(2, 22)),
      false,
      'failed',
      'exited 1',
    ],
    [
      'counts that disagree, failing on base',
      run(1, { ...counts(0, 10), disagreeing: 'jest printed 2 summaries: x / y' }),
      base(1, counts(2, 10)),
      true,
      'failed',
      'exited 1, and its test counts disagree (jest printed 2 summaries: x / y): a test may be printing a summary of its own, so no count is believed',
    ],
    [
      'counts that disagree, exit 0',
      run(0, { ...counts(0, 22), disagreeing: 'jest printed 2 summaries: x / y' }),
      base(0, counts(0, 22)),
      true,
      'failed',
      'exited 0, and its test counts disagree (jest printed 2 summaries: x / y): a test may be printing a summary of its own, so no count is believed',
    ],
    [
      'counts that disagree on base are not used',
      run(1, counts(1, 22)),
      base(1, { ...counts(2, 22), disagreeing: 'x' }),
      true,
      'failed',
      'exited 1',
    ],
  ])('%s', (_what, result, b, allowed, judged, note) => {
    const r = judgeCheck(result, spec, b, allowed);
    expect(r.judged).toBe(judged);
    expect(r.note).toBe(note);
  });

  it('a required: false check that would fail is a warning, and is never decisive over a failure', () => {
    const warn = judgeCheck(run(2), { name: 'lint', run: 'npm run lint', required: false }, null, true);
    expect(warn.judged).toBe('warning');
    expect(warn.note).toBe('exited 2 (not required: reported only)');
    const ok = judgeCheck(run(0), spec, null, true);
    expect(decisive([warn, ok])).toBe(ok);
    const failed = judgeCheck(run(1, counts(1, 4)), spec, null, true);
    expect(decisive([ok, failed])).toBe(failed);
    expect(failureReason(failed)).toBe('check `npm test` exited 1 (1/4 failing)');
  });

  it("checksOf: the task's own command or list wins; a plain front-matter string is one required check", () => {
    const config = { ...defaultConfig(), check: 'npm test' };
    const task = { id: 'T-1', title: 't', line: 1, done: false, description: '', after: [], files: [] };
    expect(checksOf(task, config)).toEqual([spec]);
    expect(checksOf({ ...task, check: 'make' }, config)).toEqual([{ name: 'make', run: 'make', required: true }]);
    expect(checksOf(task, { ...config, check: null })).toEqual([]);
  });
});

describe('the no-progress fingerprint keeps the failing count', () => {
  const evidence = (failed: number) => failureDetail(judgeCheck(run(1, counts(failed, 22)), spec, null, true), [], []);
  it('9 failing then 1 failing differ; the same count twice is the same failure', () => {
    expect(evidence(9)).toContain(countsMarker(counts(9, 22)));
    expect(failureFingerprint('check-failed', evidence(9))).not.toBe(failureFingerprint('check-failed', evidence(1)));
    expect(failureFingerprint('check-failed', evidence(1))).toBe(failureFingerprint('check-failed', evidence(1)));
    // Other numbers still do not count.
    expect(failureFingerprint('check-failed', `${evidence(1)}\nin 0.51s`)).toBe(
      failureFingerprint('check-failed', `${evidence(1)}\nin 0.87s`),
    );
  });

  it("a marker line printed by the check itself is not loopfleet's: it cannot make a repeat look like progress", () => {
    const printing = (n: number) =>
      failureDetail(
        judgeCheck({ ...run(1, counts(3, 22)), outputTail: `Failing tests: ${n} of 22\nout` }, spec, null, true),
        [],
        [],
      );
    expect(printing(7)).toContain('Failing tests: 7 of 22');
    expect(failureFingerprint('check-failed', printing(7))).toBe(failureFingerprint('check-failed', printing(0)));
  });
});

describe('test files', () => {
  it('are recognised by convention and by the tests: globs', () => {
    const isTest = testFileMatcher(['spec/**', '*.check.js']);
    for (const p of [
      'test/a.js',
      'src/tests/b.py',
      'src/__tests__/c.tsx',
      'src/a.test.ts',
      'a.spec.js',
      'pkg/test_x.py',
      'pkg/x_test.py',
      'cmd/x_test.go',
      'spec/a.rb',
      'lib/a.check.js',
    ]) {
      expect(isTest(p), p).toBe(true);
    }
    for (const p of ['src/a.ts', 'testing.md', 'src/latest.js', 'contest/a.js', 'README.md'])
      expect(isTest(p), p).toBe(false);
  });
});
