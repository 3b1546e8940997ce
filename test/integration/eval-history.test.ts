import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backlog } from '../helpers/fleet-harness.js';
import { commitFiles, LIB, TESTS } from '../helpers/eval-history.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';

/**
 * `loopfleet eval` on a history of twenty commits built here: fixes whose tests fail at their parent and
 * pass after (kept), refactors, docs, test-only commits, a merge, a commit whose tests already passed and
 * one that breaks the suite (dropped, each for its reason).
 */

let root: string;
let cleanup: () => Promise<void>;
const shas: Record<string, string> = {};

async function commit(label: string, files: Record<string, string>, message = label): Promise<void> {
  shas[label] = await commitFiles(root, files, message);
}

function cli(args: string[]) {
  return execa(process.execPath, [CLI, ...args], {
    cwd: root,
    reject: false,
    env: { NO_COLOR: '1' },
    timeout: 170_000,
  });
}

const fns: Record<string, string> = { add: '(a, b) => a + b' };
const cases: Record<string, string> = { 'add works': 'm.add(2, 3), 5' };

beforeAll(async () => {
  const repo = await makeRepo({
    'BACKLOG.md': backlog('check: node --test test/*.test.js', '- [ ] T-1 Nothing to do'),
    'README.md': '# math\n',
    'src/math.js': LIB(fns),
    'test/math.test.js': TESTS(cases),
  });
  root = repo.root;
  cleanup = repo.cleanup;
  shas.initial = await git(root, 'rev-parse', 'HEAD');
  await commit('docs 1', { 'README.md': '# math\n\nSmall functions.\n' });
  // A fix: `sub` and its test.
  fns.sub = '(a, b) => a - b';
  cases['sub works'] = 'm.sub(5, 3), 2';
  await commit('fix sub', { 'src/math.js': LIB(fns), 'test/math.test.js': TESTS(cases) }, 'Add sub\n\nSubtraction.');
  await commit('refactor 1', { 'src/math.js': `'use strict';\n${LIB(fns)}` });
  await commit('docs 2', { 'docs/usage.md': 'Call add and sub.\n' });
  // Tests only: nothing for an agent to change.
  cases['add is commutative'] = 'm.add(3, 2), m.add(2, 3)';
  await commit('tests only', { 'test/math.test.js': TESTS(cases) });
  // A fix with two new tests.
  fns.mul = '(a, b) => a * b';
  cases['mul works'] = 'm.mul(2, 3), 6';
  cases['mul by zero'] = 'm.mul(7, 0), 0';
  await commit(
    'fix mul',
    { 'src/math.js': `'use strict';\n${LIB(fns)}`, 'test/math.test.js': TESTS(cases) },
    'Add mul',
  );
  await commit('refactor 2', { 'src/util.js': 'exports.id = (x) => x;\n' });
  await commit('docs 3', { 'CHANGELOG.md': '- mul\n' });
  // Code and tests, but the new test already passed at the parent.
  fns.id = '(x) => x';
  cases['sub of zero'] = 'm.sub(4, 0), 4';
  await commit('already passing', { 'src/math.js': `'use strict';\n${LIB(fns)}`, 'test/math.test.js': TESTS(cases) });
  // Breaks `add` while adding `sq`: the suite fails at the commit.
  fns.add = '(a, b) => a + b + 1';
  fns.sq = '(a) => a * a';
  cases['sq works'] = 'm.sq(3), 9';
  await commit('breaks add', { 'src/math.js': `'use strict';\n${LIB(fns)}`, 'test/math.test.js': TESTS(cases) });
  // The fix of that regression, with a sharper test of add.
  fns.add = '(a, b) => a + b';
  cases['add of negatives'] = 'm.add(-2, -3), -5';
  await commit(
    'fix add',
    { 'src/math.js': `'use strict';\n${LIB(fns)}`, 'test/math.test.js': TESTS(cases) },
    'Fix add',
  );
  await commit('docs 4', { 'README.md': '# math\n\nSmall, tested functions.\n' });
  // A side branch merged back: the merge is dropped, its commit stands on its own.
  await git(root, 'checkout', '--quiet', '-b', 'side');
  await commit('side docs', { 'docs/side.md': 'side\n' });
  await git(root, 'checkout', '--quiet', 'main');
  await git(root, 'merge', '--quiet', '--no-ff', '-m', 'Merge side', 'side');
  shas.merge = await git(root, 'rev-parse', 'HEAD');
  await commit('refactor 3', { 'src/util.js': 'exports.id = (x) => x;\nexports.k = () => 0;\n' });
  await commit('docs 5', { 'docs/usage.md': 'Call add, sub and mul.\n' });
  await commit('refactor 4', { 'src/util.js': 'exports.id = (y) => y;\nexports.k = () => 0;\n' });
  await commit('docs 6', { 'CHANGELOG.md': '- mul\n- add fixed\n' });
  await commit('refactor 5', { 'src/util.js': 'exports.id = (y) => y;\n' });
}, 60_000);

afterAll(async () => cleanup());

describe('loopfleet eval', () => {
  it('finds exactly the commits whose tests fail before and pass after, and says why each other was dropped', {
    timeout: 180_000,
  }, async () => {
    const run = await cli(['eval', '--dry-run', '--json']);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const json = JSON.parse(run.stdout) as {
      tasks: Array<{ commit: string; failToPass: string[]; passToPass: number }>;
    };
    expect(json.tasks).toEqual([
      { commit: shas['fix add'], title: 'Fix add', failToPass: ['add of negatives', 'add works'], passToPass: 6 },
      { commit: shas['fix mul'], title: 'Add mul', failToPass: ['mul by zero', 'mul works'], passToPass: 3 },
      { commit: shas['fix sub'], title: 'Add sub', failToPass: ['sub works'], passToPass: 1 },
    ]);

    const [stamp] = await readdir(join(root, '.loop-worktrees', 'evals'));
    const file = join(root, '.loop-worktrees', 'evals', stamp!, 'candidates.json');
    const candidates = JSON.parse(await readFile(file, 'utf8')) as Array<{
      commit: string;
      kept: boolean;
      why: string;
      tests: string[];
      code: string[];
      text: string;
    }>;
    expect(candidates).toHaveLength(20); // nineteen commits on main and the merged side commit
    const why = Object.fromEntries(candidates.map((c) => [c.commit, c.why]));
    expect(why[shas.initial!]).toBe('the first commit: no parent to start from');
    expect(why[shas['docs 1']!]).toBe('adds or changes no test file');
    expect(why[shas['refactor 2']!]).toBe('adds or changes no test file');
    expect(why[shas['tests only']!]).toBe('changes only tests: no change for an agent to make');
    expect(why[shas.merge!]).toBe('a merge commit');
    expect(why[shas['already passing']!]).toBe('its tests already pass at the parent: nothing fails before');
    expect(why[shas['breaks add']!]).toMatch(/^the check fails at the commit: 1 of \d+ tests failed/);
    const sub = candidates.find((c) => c.commit === shas['fix sub'])!;
    expect(sub).toMatchObject({
      kept: true,
      tests: ['test/math.test.js'],
      code: ['src/math.js'],
      text: 'Add sub\n\nSubtraction.',
    });
    expect(candidates.filter((c) => c.kept).map((c) => c.commit)).toEqual(json.tasks.map((t) => t.commit));
    // Nothing of the person's checkout moved, and no scratch worktree is left.
    expect(await git(root, 'status', '--porcelain')).toBe('');
    expect(await git(root, 'worktree', 'list', '--porcelain')).not.toMatch(/\.eval-/);
  });

  it('takes a range and a limit: the same range gives the same tasks', { timeout: 120_000 }, async () => {
    const run = await cli(['eval', '--dry-run', '--range', `${shas['docs 2']}..${shas['docs 3']}`]);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        `kept +${shas['fix mul']!.slice(0, 12)} Add mul — 2 failing test\\(s\\) pass after it, 3 passing before still pass`,
      ),
    );
    expect(run.stdout).toMatch(
      /1 of 4 commits are eval tasks; candidates: \.loop-worktrees\/evals\/.+\/candidates\.json/,
    );
    const limited = await cli(['eval', '--dry-run', '--range', `${shas['docs 2']}..${shas['docs 3']}`, '--limit', '2']);
    expect(limited.stdout).toMatch(/0 of 2 commits are eval tasks/);
    const bad = await cli(['eval', '--since', 'yesterday']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--since: 'yesterday' is neither days or weeks/);
  });
});
