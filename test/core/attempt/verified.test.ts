import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { failureFingerprint } from '../../../src/core/budget/gates.js';
import { renderReport } from '../../../src/core/report/morning-report.js';
import { findRepo } from '../../../src/commands/repo.js';
import { statusRows } from '../../../src/commands/status.js';
import { backlog, openFleet, reopen, runFleet } from '../../helpers/fleet-harness.js';
import { git, makeRepo } from '../../helpers/git-repo.js';
import type { FakeScript } from '../../helpers/fake-model.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function repo(front: string, items: string, files: Record<string, string> = {}) {
  const r = await makeRepo({ 'BACKLOG.md': backlog(front, items), ...files });
  cleanups.push(r.cleanup);
  return r.root;
}

/** 22 node:test tests; test i passes when `ok(i)` holds. */
const SUITE = {
  'test/cases.test.mjs':
    "import test from 'node:test';\nimport assert from 'node:assert';\nimport { ok } from '../lib.mjs';\nfor (let i = 0; i < 22; i++) test(`case ${i}`, () => assert.ok(ok(i), `case ${i}`));\n",
};
const lib = (expr: string) => ({ 'lib.mjs': `export const ok = (i) => ${expr};\n` });
/** Prints only node:test's summary lines, so two runs differ only in their numbers. */
const SUMMARY_CHECK = `sh -c 'node --test > /tmp/out.txt 2>&1; s=$?; grep "^ℹ" /tmp/out.txt; exit $s'`;

const implementer =
  (byAttempt: (n: number) => Record<string, string>): FakeScript =>
  ({ role, attempt }) =>
    role === 'implementer' ? { edits: byAttempt(attempt) } : {};

describe('several checks, each named', () => {
  it('verifies with a required: false check failing, and keeps every result with the warning', async () => {
    const root = await repo(
      [
        'check:',
        '  - test -f done.txt',
        `  - { name: lint, run: "sh -c 'echo 2 lint problems; exit 1'", required: false }`,
        '  - { name: last, run: "true" }',
      ].join('\n'),
      '- [ ] T-1 One',
    );
    const { fleet } = await runFleet(
      root,
      implementer(() => ({ 'done.txt': 'x\n' })),
    );
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    const a = t.attempts[0]!;
    expect(a.checks!.map((c) => [c.name, c.exitCode, c.judged])).toEqual([
      ['test -f done.txt', 0, 'passed'],
      ['lint', 1, 'warning'],
      ['last', 0, 'passed'],
    ]);
    expect(a.checks![1]!.note).toContain('not required');
    expect(a.checks![1]!.outputTail).toContain('2 lint problems');
    expect(a.check!.command).toBe('test -f done.txt');
  });

  it('stops at the first required check that fails and names it', async () => {
    const root = await repo(
      'check: [test -f done.txt, {name: types, run: "sh -c \'exit 3\'"}, "true"]',
      '- [ ] T-1 One\n  attempts: 1',
    );
    const { fleet } = await runFleet(
      root,
      implementer(() => ({ 'done.txt': 'x\n' })),
    );
    const a = fleet.task('T-1')!.attempts[0]!;
    expect(a.outcome).toBe('check-failed');
    expect(a.reason).toBe("check 'types' (`sh -c 'exit 3'`) exited 3");
    expect(a.checks!.map((c) => c.judged)).toEqual(['passed', 'failed']);
    expect(a.check!.name).toBe('types');
  });
});

describe('test counts, baseline and progress', () => {
  it('lets an attempt that reduced the failing count continue: 9 failing, then 1, then verified', async () => {
    const root = await repo(`check: ${SUMMARY_CHECK}\nreview: false`, '- [ ] T-1 Widen ok\n  attempts: 3', {
      ...SUITE,
      ...lib('i < 22'),
    });
    const { fleet } = await runFleet(
      root,
      implementer((n) => lib(n === 1 ? 'i < 13' : n === 2 ? 'i < 21' : 'i >= 0')),
    );
    const t = fleet.task('T-1')!;
    expect(t.attempts.map((a) => a.outcome)).toEqual(['check-failed', 'check-failed', 'verified']);
    expect(t.status).toBe('verified');
    expect(t.attempts.map((a) => a.check!.counts?.failed)).toEqual([9, 1, 0]);
    expect(t.attempts[0]!.reason).toContain('(9/22 failing)');
    expect(t.attempts[0]!.baseline).toMatchObject([
      { command: SUMMARY_CHECK, exitCode: 0, counts: { total: 22, failed: 0 } },
    ]);
    // The two failures differ only in their numbers: the counts are what tells them apart.
    expect(t.attempts[0]!.fingerprint).not.toBe(t.attempts[1]!.fingerprint);
    const blank = (e: string) => failureFingerprint('check-failed', e.replace(/^Failing tests: .*$/m, ''));
    expect(blank(t.attempts[0]!.evidence!)).toBe(blank(t.attempts[1]!.evidence!));
    // Cached by base commit and command.
    const cache = JSON.parse(await readFile(join(root, '.loop-worktrees', 'baselines.json'), 'utf8'));
    expect(cache.results).toMatchObject([
      { command: SUMMARY_CHECK, commit: await git(root, 'rev-parse', 'main'), counts: { total: 22 } },
    ]);
    // Prune (every start) keeps the cache.
    const again = await reopen(root);
    await again.fleet.prune();
    await again.session.close();
    expect(existsSync(join(root, '.loop-worktrees', 'baselines.json'))).toBe(true);
  }, 60_000);

  it('still stops two attempts that fail with the same counts (no progress)', async () => {
    const root = await repo(`check: ${SUMMARY_CHECK}\nreview: false`, '- [ ] T-1 Widen ok\n  attempts: 3', {
      ...SUITE,
      ...lib('i < 22'),
    });
    const { fleet } = await runFleet(
      root,
      implementer((n) => lib(n === 1 ? 'i < 13' : 'i > 8')),
    );
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.gate).toBe('no-progress');
    expect(t.attempts).toHaveLength(2);
  }, 60_000);

  it('fails an attempt that ran fewer tests than base, even though its check exits 0', async () => {
    // files: lifts the guard's test-file rules for this file, so that the counts rule alone is tested
    const root = await repo(
      'check: node --test\nreview: false',
      '- [ ] T-1 Trim\n  attempts: 1\n  files: test/cases.test.mjs',
      { ...SUITE, ...lib('i < 22') },
    );
    const few = "import test from 'node:test';\nfor (let i = 0; i < 3; i++) test(`case ${i}`, () => {});\n";
    const { fleet } = await runFleet(
      root,
      implementer(() => ({ 'test/cases.test.mjs': few })),
    );
    const a = fleet.task('T-1')!.attempts[0]!;
    expect(a.check!.exitCode).toBe(0);
    expect(a.outcome).toBe('check-failed');
    expect(a.reason).toBe('check `node --test` the check ran 3 tests, base ran 22');
    expect(fleet.task('T-1')!.status).toBe('failed');
  }, 60_000);

  it('reports a check that fails on base up front, and judges the task by not making it worse', async () => {
    const front = 'check: node --test';
    const root = await repo(front, '- [ ] T-1 Better\n  attempts: 1\n- [ ] T-2 Worse\n  attempts: 1', {
      ...SUITE,
      ...lib('i < 20'),
    });
    const h = await openFleet(root, ({ role, task }) =>
      role !== 'implementer' ? {} : { edits: lib(task === 'T-1' ? 'i < 21' : 'i < 21 && i !== 5') },
    );
    const logs: string[] = [];
    h.fleet.events.on('log', (l) => logs.push(`${l.id ?? ''} ${l.level} ${l.message}`));
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    const base = (await git(root, 'rev-parse', 'main')).slice(0, 10);
    expect(logs).toContain(
      `T-1 warn check \`node --test\` fails on base ${base}: 2 failing tests of 22; judged by not making it worse`,
    );
    const better = h.fleet.task('T-1')!.attempts[0]!;
    expect(better.outcome).toBe('verified');
    // The reviewer is told the exit code of 1 was judged a pass, and why.
    const review = h.model.calls.find((c) => c.task === 'T-1' && c.role === 'verifier')!;
    expect(review.prompt).toContain(
      'loopfleet judged this check passed: it fails on base too (2 failing tests); not worse: 1/22 failing.',
    );
    expect(better.check).toMatchObject({ exitCode: 1, judged: 'not-worse', counts: { failed: 1, total: 22 } });
    const worse = h.fleet.task('T-2')!.attempts[0]!;
    expect(worse.outcome).toBe('check-failed');
    expect(worse.reason).toContain('failing now but not on base: case 5');
  }, 60_000);

  it("never passes a task's own check by 'not worse': the task is to make it pass", async () => {
    const root = await repo('review: false', '- [ ] T-1 Better\n  check: node --test\n  attempts: 1', {
      ...SUITE,
      ...lib('i < 20'),
    });
    const h = await openFleet(
      root,
      implementer(() => lib('i < 21')),
    );
    const logs: string[] = [];
    h.fleet.events.on('log', (l) => logs.push(l.message));
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    const a = h.fleet.task('T-1')!.attempts[0]!;
    expect(a.baseline).toMatchObject([{ exitCode: 1, counts: { failed: 2, total: 22 } }]);
    expect(a.outcome).toBe('check-failed');
    expect(a.reason).toBe('check `node --test` exited 1 (1/22 failing)');
    // Its starting point, not news: nothing is logged about base.
    expect(logs.filter((m) => m.includes('fails on base'))).toEqual([]);
  }, 60_000);
});

describe('prove: true', () => {
  const files = {
    'add.mjs': 'export const add = (a, b) => a - b;\n',
    'test/base.test.mjs': "import test from 'node:test';\ntest('base', () => {});\n",
  };
  const fixed = { 'add.mjs': 'export const add = (a, b) => a + b;\n' };
  const realTest = {
    'test/add.test.mjs':
      "import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../add.mjs';\ntest('adds', () => assert.equal(add(1, 2), 3));\n",
  };
  const idleTest = {
    'test/add.test.mjs':
      "import test from 'node:test';\nimport assert from 'node:assert';\ntest('adds', () => assert.equal(1 + 2, 3));\n",
  };

  it('passes an attempt whose new test fails without the change, and fails one whose tests pass without it', async () => {
    const root = await repo(
      'check: node --test\nprove: true\nreview: false',
      '- [ ] T-1 Fix add\n  attempts: 1\n- [ ] T-2 Fix add, idly tested\n  attempts: 1',
      files,
    );
    const { fleet } = await runFleet(root, ({ role, task }) =>
      role !== 'implementer' ? {} : { edits: { ...fixed, ...(task === 'T-1' ? realTest : idleTest) } },
    );
    const good = fleet.task('T-1')!;
    expect(good.status).toBe('verified');
    expect(good.attempts[0]!.proof).toMatchObject({
      status: 'proved',
      tests: ['test/add.test.mjs'],
      restored: ['add.mjs'],
      message: 'proved: 1 test fails without the change',
    });
    const idle = fleet.task('T-2')!;
    expect(idle.status).toBe('failed');
    expect(idle.attempts[0]!.outcome).toBe('check-failed');
    expect(idle.attempts[0]!.reason).toBe('the tests pass without the change: they do not exercise it');
    expect(idle.attempts[0]!.evidence).toContain('Tests kept: test/add.test.mjs; set back to base: add.mjs');
    // The proof ran in a scratch checkout: the task's worktree still holds the change, and no scratch is left.
    expect(await readFile(join(root, '.loop-worktrees', 'T-2', 'add.mjs'), 'utf8')).toBe(fixed['add.mjs']);
    expect(await git(root, 'worktree', 'list')).not.toMatch(/\.prove-|\.base-/);
  }, 60_000);

  it('proves the branch as it stands when a later attempt commits nothing new', async () => {
    const root = await repo(
      'check: node --test\nprove: true\nreview: false',
      '- [ ] T-1 Fix add\n  attempts: 2',
      files,
    );
    // Attempt 1 writes the fix and an idle test; attempt 2 writes nothing, hoping the branch now passes.
    const { fleet } = await runFleet(
      root,
      implementer((n): Record<string, string> => (n === 1 ? { ...fixed, ...idleTest } : {})),
    );
    const t = fleet.task('T-1')!;
    expect(t.attempts.map((a) => a.outcome)).toEqual(['check-failed', 'check-failed']);
    expect(t.attempts[1]!.commit).toBeNull();
    expect(t.attempts[1]!.proof?.status).toBe('not-proved');
    expect(t.status).toBe('failed');
  }, 60_000);

  it('fails an attempt that adds no test at all', async () => {
    const root = await repo(
      'check: node --test\nreview: false',
      '- [ ] T-1 Fix add\n  prove: true\n  attempts: 1',
      files,
    );
    const { fleet } = await runFleet(
      root,
      implementer(() => fixed),
    );
    const a = fleet.task('T-1')!.attempts[0]!;
    expect(a.outcome).toBe('check-failed');
    expect(a.proof?.status).toBe('no-tests');
    expect(a.reason).toMatch(/adds or changes no test file/);
  }, 60_000);
});

describe('the morning report and status --json', () => {
  it('show each check with its counts against base, the baseline, the proof and the cost per verified task', async () => {
    const front = [
      'check:',
      '  - node --test',
      `  - { name: lint, run: "sh -c 'echo 2 lint problems; exit 1'", required: false }`,
      'prove: true',
      'review: false',
    ].join('\n');
    const files = {
      'add.mjs': 'export const add = (a, b) => a - b;\n',
      'test/base.test.mjs': "import test from 'node:test';\ntest('base', () => {});\n",
    };
    const root2 = await repo(front, '- [ ] T-1 Fix add', files);
    const test =
      "import test from 'node:test';\nimport assert from 'node:assert';\nimport { add } from '../add.mjs';\ntest('adds', () => assert.equal(add(1, 2), 3));\n";
    const { fleet } = await runFleet(
      root2,
      implementer(
        (n): Record<string, string> =>
          n === 1 ? { 'test/add.test.mjs': test } : { 'add.mjs': 'export const add = (a, b) => a + b;\n' },
      ),
    );
    const t = fleet.task('T-1')!;
    expect(t.attempts.map((a) => a.outcome)).toEqual(['check-failed', 'verified']);

    const rows = await statusRows(await findRepo(root2));
    expect(rows[0]).toMatchObject({
      id: 'T-1',
      status: 'verified',
      checks: [
        {
          name: 'node --test',
          command: 'node --test',
          required: true,
          exitCode: 0,
          judged: 'passed',
          counts: { passed: 2, failed: 0, total: 2 },
        },
        { name: 'lint', required: false, exitCode: 1, judged: 'warning' },
      ],
      counts: { failed: 0, total: 2 },
      baseline: [
        { name: 'node --test', exitCode: 0, counts: { total: 1, failed: 0 } },
        { name: 'lint', exitCode: 1, judged: 'failed' },
      ],
      proof: { status: 'proved', message: 'proved: 1 test fails without the change', tests: ['test/add.test.mjs'] },
    });

    const report = renderReport({
      repoRoot: root2,
      base: fleet.base,
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T08:00:00.000Z',
      summary: fleet.summary(),
      tasks: fleet.tasks(),
      ran: fleet.ranThisRun,
      config: fleet.config,
      sandboxed: true,
      exitCode: 0,
    });
    expect(report).toContain('- **Tests:** 1/2 failing → 0/2');
    expect(report).toMatch(/\*\*Baseline\*\* \(the checks on [0-9a-f]{10}, before any change\)/);
    expect(report).toContain("- ✗ 'lint' (`sh -c 'echo 2 lint problems; exit 1'`) → exit 1 — fails on base already");
    expect(report).toContain('### Attempt 1 — check-failed: check `node --test` exited 1 (1/2 failing)');
    expect(report).toMatch(/- ✗ `node --test` → exit 1 in (?:<1s|\d+s) — 1\/2 failing \(base: 0\/1\)/);
    expect(report).toContain('### Attempt 2 — verified');
    expect(report).toMatch(/- ✔ `node --test` → exit 0 in (?:<1s|\d+s) — 0\/2 failing \(base: 0\/1\)/);
    expect(report).toMatch(
      /- ⚠ 'lint' \(`sh -c 'echo 2 lint problems; exit 1'`\) → exit 1 in (?:<1s|\d+s) · not required — exited 1 \(not required: reported only\)/,
    );
    expect(report).toContain('**Proof:** proved: 1 test fails without the change (tests: test/add.test.mjs)');
    expect(report).toMatch(/\| implementer \| .* \| \$/);
    expect(report).toMatch(
      /\*\*Cost per verified task:\*\* \$[\d.]+ \(\$[\d.]+ over 1 verified task, failed attempts included\)/,
    );
  }, 60_000);
});
