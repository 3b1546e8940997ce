import { describe, expect, it } from 'vitest';
import { judgeCandidate, selectCandidate, type HistoryRun } from '../../../src/core/verify/fail-to-pass.js';
import { parseSince } from '../../../src/commands/since.js';

const run = (exitCode: number, failed: number, passed: number, failing?: string[]): HistoryRun => ({
  exitCode,
  timedOut: false,
  counts: { runner: 'node:test', passed, failed, skipped: 0, total: passed + failed, ...(failing ? { failing } : {}) },
});

describe('which commit is an eval task', () => {
  it('needs one parent, a changed test and a changed non-test file', () => {
    const m = (path: string, status = 'M') => ({ status, path });
    expect(selectCandidate({ parents: [], changes: [m('a.js')] }, [])).toEqual({
      why: 'the first commit: no parent to start from',
    });
    expect(selectCandidate({ parents: ['a', 'b'], changes: [m('a.js')] }, [])).toEqual({ why: 'a merge commit' });
    expect(selectCandidate({ parents: ['a'], changes: [m('README.md')] }, [])).toEqual({
      why: 'adds or changes no test file',
    });
    // a deleted test file is no test of the change
    expect(selectCandidate({ parents: ['a'], changes: [m('src/a.js'), m('test/a.test.js', 'D')] }, [])).toEqual({
      why: 'adds or changes no test file',
    });
    expect(selectCandidate({ parents: ['a'], changes: [m('test/a.test.js', 'A')] }, [])).toEqual({
      why: 'changes only tests: no change for an agent to make',
    });
    expect(selectCandidate({ parents: ['a'], changes: [m('src/a.js'), m('checks/a.js')] }, ['checks/'])).toEqual({
      tests: ['checks/a.js'],
      code: ['src/a.js'],
    });
  });

  it('keeps a commit only on evidence: named failures before, a clean pass after, nothing lost', () => {
    expect(judgeCandidate(run(1, 2, 3, ['b', 'a']), run(0, 0, 5))).toEqual({
      kept: true,
      failToPass: ['a', 'b'],
      passToPass: 3,
    });
    expect(judgeCandidate(run(1, 1, 3, ['a']), run(1, 1, 3, ['c']))).toMatchObject({
      why: 'the check fails at the commit: 1 of 4 tests failed (exit 1)',
    });
    expect(judgeCandidate(run(0, 0, 4), run(0, 0, 4))).toMatchObject({ why: /already pass at the parent/ });
    expect(judgeCandidate({ exitCode: 2, timedOut: false, counts: null }, run(0, 0, 4))).toMatchObject({
      why: /fails at the parent without naming failing tests \(exited 2\)/,
    });
    expect(judgeCandidate(run(1, 2, 3), run(0, 0, 5))).toMatchObject({ why: /does not name the 2 failing tests/ });
    // the commit dropped a test that passed before: PASS_TO_PASS cannot hold
    expect(judgeCandidate(run(1, 1, 3, ['a']), run(0, 0, 3))).toMatchObject({
      why: /passed 3 tests, fewer than the 3/,
    });
    const disagree = run(1, 1, 3, ['a']);
    disagree.counts!.disagreeing = 'two summaries';
    expect(judgeCandidate(disagree, run(0, 0, 4))).toMatchObject({ why: /disagree/ });
  });

  it('reads --since as days, weeks or a date', () => {
    const now = Date.parse('2026-12-02T12:00:00Z');
    expect(parseSince('90d', now)).toEqual({ ok: true, value: new Date('2026-09-03T12:00:00Z') });
    expect(parseSince('2w', now)).toEqual({ ok: true, value: new Date('2026-11-18T12:00:00Z') });
    expect(parseSince('2026-01-31', now)).toEqual({ ok: true, value: new Date('2026-01-31T00:00:00Z') });
    expect(parseSince('2026-02-31', now).ok).toBe(false);
    expect(parseSince('yesterday', now).ok).toBe(false);
  });
});
