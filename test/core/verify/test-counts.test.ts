import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { compareProgress, formatChange, parseTestCounts, sumCounts } from '../../../src/core/verify/test-counts.js';
import { FIXTURES as TEST_FIXTURES, ROOT } from '../../helpers/paths.js';

const FIXTURES = join(TEST_FIXTURES, 'test-output');
const fixture = (name: string) => readFile(join(FIXTURES, name), 'utf8');

describe('test counts from recorded runner output', () => {
  it.each([
    [
      'node-spec.txt',
      {
        runner: 'node:test',
        passed: 3,
        failed: 2,
        skipped: 2,
        total: 7,
        failing: ['multiplies wrongly', 'inner fails'],
      },
    ],
    [
      'node-tap.txt',
      {
        runner: 'node:test',
        passed: 3,
        failed: 2,
        skipped: 2,
        total: 7,
        failing: ['multiplies wrongly', 'inner fails'],
      },
    ],
    [
      'vitest-default.txt',
      { runner: 'vitest', passed: 2, failed: 1, skipped: 1, total: 4, failing: ['a.test.ts > math > fails'] },
    ],
    [
      'vitest-ansi.txt',
      { runner: 'vitest', passed: 2, failed: 1, skipped: 1, total: 4, failing: ['a.test.ts > math > fails'] },
    ],
    [
      'pytest-default.txt',
      { runner: 'pytest', passed: 2, failed: 1, skipped: 1, total: 4, failing: ['test_calc.py::test_fails'] },
    ],
    [
      'pytest-quiet.txt',
      { runner: 'pytest', passed: 2, failed: 1, skipped: 1, total: 4, failing: ['test_calc.py::test_fails'] },
    ],
    ['cargo-test.txt', { runner: 'cargo', passed: 1, failed: 1, skipped: 1, total: 3, failing: ['tests::fails'] }],
    ['jest.txt', { runner: 'jest', passed: 2, failed: 1, skipped: 1, total: 4, failing: ['math › fails'] }],
    ['mocha.txt', { runner: 'mocha', passed: 2, failed: 1, skipped: 1, total: 4 }],
    ['ava.txt', { runner: 'ava', passed: 2, failed: 1, skipped: 1, total: 4, failing: ['fails'] }],
    ['go-verbose.txt', { runner: 'go', passed: 3, failed: 1, skipped: 1, total: 5, failing: ['TestFail'] }],
  ])('%s', async (name, expected) => {
    expect(parseTestCounts(await fixture(name))).toEqual(expected);
  });

  it('counts nothing where the output does not say how many tests passed (go test without -v, a linter)', async () => {
    expect(parseTestCounts(await fixture('go-short.txt'))).toBeNull();
    expect(parseTestCounts('src/a.ts:3:1 error no-unused-vars\n1 problem (1 error, 0 warnings)\n')).toBeNull();
    expect(parseTestCounts('')).toBeNull();
  });

  it('sums the summaries of several runs in one output (npm test running two runners, cargo per binary)', async () => {
    const both = `${await fixture('vitest-default.txt')}\n${await fixture('pytest-quiet.txt')}`;
    expect(parseTestCounts(both)).toMatchObject({
      runner: 'vitest+pytest',
      passed: 4,
      failed: 2,
      total: 8,
      failing: ['a.test.ts > math > fails', 'test_calc.py::test_fails'],
    });
    const cargo = await fixture('cargo-test.txt');
    expect(
      parseTestCounts(
        `${cargo}\n   Doc-tests calc\n\nrunning 2 tests\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n`,
      ),
    ).toMatchObject({ passed: 3, failed: 1, total: 5 });
  });

  it.each([
    ['jest', 'Tests:       0 failed, 10 passed, 10 total', 'Tests:       5 failed, 5 passed, 10 total'],
    ['vitest', '      Tests  10 passed (10)', '      Tests  5 failed | 5 passed (10)'],
    ['mocha', '  10 passing (3ms)\n  0 failing', '  5 passing (12ms)\n  5 failing'],
    ['pytest', '==== 10 passed in 0.01s ====', '==== 5 failed, 5 passed in 0.12s ===='],
    ['ava', '  10 tests passed', '  5 tests failed\n  5 tests passed'],
  ])(
    '%s: a summary a test prints before the real one is no count: the last is read, and the two disagree',
    (runner, fake, real) => {
      const c = parseTestCounts(`test output\n${fake}\nmore output\n${real}\n`)!;
      expect(c).toMatchObject({ runner, failed: 5, passed: 5, total: 10 });
      expect(c.disagreeing).toMatch(new RegExp(`^${runner} printed `));
      // the same summary twice (a runner that repeats it) is no disagreement
      expect(parseTestCounts(`${real}\n${real}\n`)!.disagreeing).toBeUndefined();
      expect(sumCounts([c, null])!.disagreeing).toBe(c.disagreeing);
    },
  );

  it('go test -json events count top-level tests', () => {
    const events = [
      { Action: 'run', Test: 'TestA' },
      { Action: 'pass', Test: 'TestA' },
      { Action: 'pass', Test: 'TestA/sub' },
      { Action: 'fail', Test: 'TestB' },
      { Action: 'skip', Test: 'TestC' },
      { Action: 'fail', Package: 'x' },
    ]
      .map((e) => JSON.stringify(e))
      .join('\n');
    expect(parseTestCounts(events)).toEqual({
      runner: 'go',
      passed: 1,
      failed: 1,
      skipped: 1,
      total: 3,
      failing: ['TestB'],
    });
  });
});

describe('test counts from real runs on this machine', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  async function project(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-counts-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    return dir;
  }
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'NODE_OPTIONS' && k !== 'TEST'),
  );

  it('node --test (default reporter)', async () => {
    const dir = await project({
      'a.test.mjs':
        "import test from 'node:test';\nimport assert from 'node:assert';\ntest('one', () => {});\ntest('two', () => assert.equal(1, 2));\ntest('three', { skip: true }, () => {});\n",
    });
    const run = await execa(process.execPath, ['--test'], {
      cwd: dir,
      reject: false,
      all: true,
      env,
      extendEnv: false,
    });
    expect(run.exitCode).toBe(1);
    expect(parseTestCounts(run.all)).toEqual({
      runner: 'node:test',
      passed: 1,
      failed: 1,
      skipped: 1,
      total: 3,
      failing: ['two'],
    });
  });

  it('vitest run', async () => {
    const dir = await project({
      'package.json': '{"type":"module"}',
      'a.test.js':
        "import { expect, it } from 'vitest';\nit('one', () => expect(1).toBe(1));\nit('two', () => expect(1).toBe(2));\nit('three', () => {});\n",
    });
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const run = await execa(process.execPath, [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], {
      cwd: dir,
      reject: false,
      all: true,
      env,
      extendEnv: false,
    });
    expect(run.exitCode).toBe(1);
    expect(parseTestCounts(run.all)).toEqual({
      runner: 'vitest',
      passed: 2,
      failed: 1,
      skipped: 0,
      total: 3,
      failing: ['a.test.js > two'],
    });
  }, 30_000);

  const pytest = execa('python3', ['-m', 'pytest', '--version'], { reject: false }).then(
    (r) => r.exitCode === 0,
    () => false,
  );
  it('pytest (skipped cleanly when python3 has no pytest)', async (ctx) => {
    if (!(await pytest)) return ctx.skip();
    const dir = await project({
      'test_x.py': 'def test_one():\n    assert True\n\ndef test_two():\n    assert 1 == 2\n',
    });
    const run = await execa('python3', ['-m', 'pytest', '-p', 'no:cacheprovider'], {
      cwd: dir,
      reject: false,
      all: true,
    });
    expect(run.exitCode).toBe(1);
    expect(parseTestCounts(run.all)).toEqual({
      runner: 'pytest',
      passed: 1,
      failed: 1,
      skipped: 0,
      total: 2,
      failing: ['test_x.py::test_two'],
    });
  }, 30_000);
});

describe('progress', () => {
  const c = (failed: number, total: number) => ({
    runner: 'node:test',
    passed: total - failed,
    failed,
    skipped: 0,
    total,
  });
  it('an attempt that reduced the failing count improved; one that ran fewer tests than base did not', () => {
    expect(compareProgress(c(9, 22), c(1, 22), c(0, 20))).toBe('improved');
    expect(compareProgress(c(1, 22), c(1, 22), c(0, 20))).toBe('same');
    expect(compareProgress(c(1, 22), c(3, 22), c(0, 20))).toBe('worse');
    expect(compareProgress(c(9, 22), c(0, 3), c(0, 22))).toBe('fewer-tests');
    expect(compareProgress(null, c(1, 22), c(2, 22))).toBe('improved');
    expect(compareProgress(null, null, c(2, 22))).toBe('same');
  });

  it('formats the change and sums checks', () => {
    expect(formatChange(c(7, 22), c(1, 22))).toBe('7/22 failing → 1/22');
    expect(formatChange(null, c(1, 22))).toBe('1/22 failing');
    expect(sumCounts([c(1, 10), null, c(2, 5)])).toMatchObject({ failed: 3, total: 15 });
    expect(sumCounts([null, undefined])).toBeNull();
  });
});
