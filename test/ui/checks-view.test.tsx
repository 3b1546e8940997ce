import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { checkLines } from '../../src/ui/detail-content.js';
import { fakeAttempt, fakeTask } from '../helpers/fake-fleet.js';
import type { CheckResult, TaskState, TestCounts } from '../../src/domain/types.js';
import { mixedTasks } from '../helpers/ui-fixtures.js';
import { rowOf, setup } from '../helpers/ui-render.js';

afterEach(cleanup);

const counts = (failed: number, total: number): TestCounts => ({
  runner: 'vitest',
  passed: total - failed,
  failed,
  skipped: 0,
  total,
});
const check = (over: Partial<CheckResult>): CheckResult => ({
  command: 'npm test',
  exitCode: 0,
  timedOut: false,
  outputTail: 'ok',
  durationMs: 2000,
  ...over,
});

function taskWithCounts(): TaskState {
  return fakeTask('T-1', {
    title: 'Fix the parser',
    status: 'running',
    phase: 'implement',
    attempt: 2,
    attempts: [
      fakeAttempt(1, {
        outcome: 'check-failed',
        reason: 'check `npm test` exited 1 (7/22 failing)',
        check: check({ exitCode: 1, counts: counts(7, 22), judged: 'failed', name: 'npm test', required: true }),
        checks: [check({ exitCode: 1, counts: counts(7, 22), judged: 'failed', name: 'npm test', required: true })],
        baseline: [
          {
            name: 'npm test',
            command: 'npm test',
            commit: 'abcdef0123456789',
            exitCode: 0,
            timedOut: false,
            counts: counts(0, 20),
            durationMs: 1000,
            outputTail: '',
          },
        ],
      }),
      fakeAttempt(2, {
        outcome: 'verified',
        check: check({
          counts: counts(1, 22),
          judged: 'not-worse',
          note: 'fails on base too (2 failing tests); not worse: 1/22 failing',
          exitCode: 1,
        }),
        checks: [
          check({
            counts: counts(1, 22),
            judged: 'not-worse',
            note: 'fails on base too (2 failing tests); not worse: 1/22 failing',
            exitCode: 1,
            name: 'npm test',
            required: true,
          }),
          check({
            command: 'npm run lint',
            name: 'lint',
            exitCode: 2,
            judged: 'warning',
            required: false,
            note: 'exited 2 (not required: reported only)',
            outputTail: '3 lint problems',
          }),
        ],
        proof: {
          status: 'proved',
          tests: ['test/parser.test.ts'],
          restored: ['src/parser.ts'],
          command: 'npm test',
          exitCode: 1,
          counts: counts(3, 22),
          outputTail: '',
          message: 'proved: 3 tests fail without the change',
        },
      }),
    ],
  });
}

describe('the Check tab', () => {
  test('shows each check with its mark, counts, note and output; the progress; and the proof', () => {
    const text = checkLines({ ...taskWithCounts(), status: 'verified' }, undefined, 100).map((l) => l.text);
    expect(text[0]).toBe('Tests 7/22 failing → 1/22');
    expect(text).toContain('≈ $ npm test');
    expect(text).toContain('attempt 2 · exit 1 · 2s · 1/22 failing');
    expect(text).toContain('fails on base too (2 failing tests); not worse: 1/22 failing');
    expect(text).toContain('⚠ lint: $ npm run lint');
    expect(text).toContain('attempt 2 · exit 2 · 2s · not required');
    expect(text).toContain('3 lint problems');
    expect(text).toContain('✔ proved: 3 tests fail without the change');
    expect(text).toContain('tests kept: test/parser.test.ts');
  });

  test('shows the baseline of the attempt', () => {
    const t = taskWithCounts();
    const text = checkLines({ ...t, status: 'failed', attempts: [t.attempts[0]!] }, undefined, 100).map((l) => l.text);
    expect(text).toContain('On base abcdef0123');
    expect(text).toContain('✔ npm test · exit 0 · 0/20 failing');
    expect(text).toContain('✗ $ npm test');
  });
});

describe('the task row', () => {
  test('shows the test counts after the title: "7/22 failing → 1/22"', async () => {
    const tasks = mixedTasks();
    tasks[0] = taskWithCounts();
    const t = await setup({ tasks, rows: 30, columns: 140 });
    expect(rowOf(t.frame(), 'T-1')).toMatch(/Fix the parser +7\/22 failing → 1\/22/);
  });
});
