import { afterEach, describe, expect, it } from 'vitest';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';
import { conflictHunks } from '../../../src/adapters/git/forecast.js';
import {
  pathsMeet,
  conflictsWith,
  ForecastMemo,
  forecastFleet,
  MAX_HUNKS_PER_TASK,
} from '../../../src/core/land/conflict-forecast.js';
import type { ConflictForecast } from '../../../src/ports/git.js';
import { git, makeRepo, writeFiles } from '../../helpers/git-repo.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** A branch off main with `files` committed on it. */
async function branch(root: string, name: string, files: Record<string, string>): Promise<void> {
  await git(root, 'switch', '-q', '-c', name, 'main');
  await writeFiles(root, files);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', name);
  await git(root, 'switch', '-q', 'main');
}

/** Five marker regions in each of `files`. */
function conflict(...files: string[]): ConflictForecast {
  const hunks: Record<string, string[]> = {};
  for (const f of files)
    hunks[f] = Array.from({ length: 5 }, (_, i) => `<<<<<<< ours\n${f} ${i}\n=======\ntheirs\n>>>>>>> theirs`);
  return { files, hunks };
}

/** A git that answers `forecastConflicts(left, right)` from `pairs` ("left|right"); clean otherwise. */
function fakeGit(pairs: Record<string, ConflictForecast>) {
  return {
    forecastConflicts: async (left: string, right: string) => pairs[`${left}|${right}`] ?? { files: [], hunks: {} },
    revParse: async (ref: string) => ref,
    resolveCommits: async (refs: readonly string[]) => [...refs],
    // Declared conflicts, not computed ones: every commit its own fork, so every pair is asked.
    changesSinceFork: async (_base: string, commit: string) => ({ fork: `fork-of-${commit}`, paths: [] }),
  };
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `T-${i + 1}`, branch: `loop/T-${i + 1}` }));

describe('conflict forecast', () => {
  it('predicts which verified branches conflict with base and with each other, touching nothing', async () => {
    const repo = await makeRepo({ 'calc.js': 'a\nb\nc\n', 'other.js': 'x\n', 'third.js': '1\n' });
    cleanups.push(repo.cleanup);
    const { root } = repo;
    await branch(root, 'loop/T-1', { 'calc.js': 'a\nB-one\nc\n' });
    await branch(root, 'loop/T-2', { 'calc.js': 'a\nB-two\nc\n' });
    await branch(root, 'loop/T-3', { 'other.js': 'y\n' });
    await branch(root, 'loop/T-4', { 'third.js': '2\n' });
    // base moves on third.js after T-4 branched: T-4 now conflicts with base, not with any task
    await writeFiles(root, { 'third.js': '3\n' });
    await git(root, 'commit', '-qam', 'base moves');
    const refsBefore = await git(root, 'for-each-ref');
    const statusBefore = await git(root, 'status', '--porcelain');

    const adapter = new SimpleGitAdapter(root);
    const forecast = await forecastFleet({
      git: adapter,
      base: 'main',
      branches: ['T-1', 'T-2', 'T-3', 'T-4'].map((id) => ({ id, branch: `loop/${id}` })),
    });

    expect(conflictsWith(forecast.get('T-1'))).toEqual(['T-2']);
    expect(conflictsWith(forecast.get('T-2'))).toEqual(['T-1']);
    expect(forecast.has('T-3')).toBe(false);
    expect(conflictsWith(forecast.get('T-4'))).toEqual(['main']);
    expect(forecast.get('T-4')!.map((d) => [d.with, d.files])).toEqual([['main', ['third.js']]]);
    expect(forecast.get('T-1')!.map((d) => [d.with, d.files])).toEqual([['T-2', ['calc.js']]]);
    const hunk = forecast.get('T-1')![0]!.hunks[0]!;
    expect(hunk.file).toBe('calc.js');
    expect(hunk.hunk).toContain('B-one');
    expect(hunk.hunk).toContain('B-two');
    expect(hunk.hunk.startsWith('<<<<<<< ')).toBe(true);
    // nothing was written that anyone can see
    expect(await git(root, 'for-each-ref')).toBe(refsBefore);
    expect(await git(root, 'status', '--porcelain')).toBe(statusBefore);
  });

  it('with a memo, asks again only the pairs one of whose sides moved, and labels the markers with branch names', async () => {
    const repo = await makeRepo({ 'calc.js': 'a\nb\nc\n', 'other.js': 'x\n' });
    cleanups.push(repo.cleanup);
    const { root } = repo;
    await branch(root, 'loop/T-1', { 'calc.js': 'a\nB-one\nc\n' });
    await branch(root, 'loop/T-2', { 'calc.js': 'a\nB-two\nc\n' });
    await branch(root, 'loop/T-3', { 'other.js': 'y\n' });
    const adapter = new SimpleGitAdapter(root);
    const memo = new ForecastMemo();
    const run = () => forecastFleet({ git: adapter, base: 'main', branches: ids(3), memo });

    const first = await run();
    // All three forked at main's tip: none can conflict with base, and only T-1 and T-2 share a path.
    expect([memo.asked, memo.skipped]).toEqual([1, 5]);
    const hunk = first.get('T-1')![0]!.hunks[0]!.hunk;
    expect(hunk.split('\n')[0]).toBe('<<<<<<< loop/T-1');
    expect(hunk.split('\n').at(-1)).toBe('>>>>>>> loop/T-2');
    expect(await run()).toEqual(first);
    expect(memo.asked).toBe(1);

    // T-3 moves onto calc.js: its pairs with T-1 and T-2 now meet and are asked, nothing else
    await git(root, 'switch', '-q', 'loop/T-3');
    await writeFiles(root, { 'calc.js': 'a\nB-three\nc\n' });
    await git(root, 'commit', '-qam', 'T-3 again');
    await git(root, 'switch', '-q', 'main');
    const moved = await run();
    expect(memo.asked).toBe(3);
    expect(conflictsWith(moved.get('T-3'))).toEqual(['T-1', 'T-2']);
    expect(moved.get('T-3')![0]!.hunks[0]!.hunk).toContain('>>>>>>> loop/T-3');
  });

  it('asks no merge-tree where branches cannot meet, and still finds a file against a folder and a moved base', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    cleanups.push(repo.cleanup);
    const { root } = repo;
    // Twelve branches, each on a file of its own: no pair can conflict.
    for (let i = 1; i <= 12; i++) await branch(root, `loop/T-${i}`, { [`own-${i}.txt`]: `${i}\n` });
    const adapter = new SimpleGitAdapter(root);
    const memo = new ForecastMemo();
    expect((await forecastFleet({ git: adapter, base: 'main', branches: ids(12), memo })).size).toBe(0);
    expect([memo.asked, memo.skipped]).toEqual([0, 12 + 66]);

    // T-13 adds a file named like T-14's folder: they meet, and git says they conflict.
    await branch(root, 'loop/T-13', { docs: 'a file\n' });
    await branch(root, 'loop/T-14', { 'docs/readme.md': 'in a folder\n' });
    // Base moves under T-1's path after T-1 forked: T-1 meets base and is asked.
    await writeFiles(root, { 'own-1.txt': 'base\n' });
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'base takes own-1.txt');
    const found = await forecastFleet({ git: adapter, base: 'main', branches: ids(14), memo });
    expect(conflictsWith(found.get('T-13'))).toContain('T-14');
    expect(conflictsWith(found.get('T-1'))).toEqual(['main']);
  });

  it('pathsMeet: a common path, or a file against a folder above the other side’s path', () => {
    expect(pathsMeet(['a/b.txt'], ['a/c.txt'])).toBe(false);
    expect(pathsMeet(['a/b.txt'], ['a/b.txt'])).toBe(true);
    expect(pathsMeet(['a'], ['a/b.txt'])).toBe(true);
    expect(pathsMeet(['a/b/c.txt'], ['a/b'])).toBe(true);
    expect(pathsMeet(['ab/c.txt'], ['a'])).toBe(false);
    expect(pathsMeet([], ['x'])).toBe(false);
  });

  it("orders a task's conflicts base first, then the other tasks in backlog order", async () => {
    // T-3 conflicts with base and with T-1 and T-2; the pairs are asked in any order
    const git = fakeGit({
      'main|loop/T-3': conflict('x.js'),
      'loop/T-2|loop/T-3': conflict('y.js'),
      'loop/T-1|loop/T-3': conflict('z.js'),
    });
    const forecast = await forecastFleet({ git, base: 'main', branches: ids(3) });
    expect(forecast.get('T-3')!.map((d) => [d.with, d.files])).toEqual([
      ['main', ['x.js']],
      ['T-1', ['z.js']],
      ['T-2', ['y.js']],
    ]);
    expect(conflictsWith(forecast.get('T-3'))).toEqual(['main', 'T-1', 'T-2']);
    expect(conflictsWith(forecast.get('T-1'))).toEqual(['T-3']);
    expect(conflictsWith(undefined)).toEqual([]);
  });

  it(`keeps at most ${MAX_HUNKS_PER_TASK} hunks per task, shared so that every conflict shows its first`, async () => {
    // T-1 conflicts with base and with ten other branches, each with five hunks in each of two files
    const many = conflict('a.js', 'b.js');
    const pairs: Record<string, ConflictForecast> = { 'main|loop/T-1': many };
    for (let i = 2; i <= 11; i++) pairs[`loop/T-1|loop/T-${i}`] = many;
    const forecast = await forecastFleet({ git: fakeGit(pairs), base: 'main', branches: ids(11) });
    const details = forecast.get('T-1')!;
    expect(details).toHaveLength(11);
    expect(details.flatMap((d) => d.hunks)).toHaveLength(MAX_HUNKS_PER_TASK);
    for (const d of details) {
      expect(d.files).toEqual(['a.js', 'b.js']);
      expect(d.hunks.length).toBeGreaterThanOrEqual(1);
      expect(d.hunks[0]).toEqual({ file: 'a.js', hunk: '<<<<<<< ours\na.js 0\n=======\ntheirs\n>>>>>>> theirs' });
    }
    // a task with a single conflict under the cap keeps all of its ten
    expect(forecast.get('T-2')!.flatMap((d) => d.hunks)).toHaveLength(10);
  });

  it('lists a modify/delete conflict without hunks', async () => {
    const repo = await makeRepo({ 'a.txt': 'one\n' });
    cleanups.push(repo.cleanup);
    const { root } = repo;
    await branch(root, 'loop/T-1', { 'a.txt': 'changed\n' });
    await git(root, 'switch', '-q', '-c', 'loop/T-2', 'main');
    await git(root, 'rm', '-q', 'a.txt');
    await git(root, 'commit', '-qm', 'delete');
    await git(root, 'switch', '-q', 'main');
    const forecast = await new SimpleGitAdapter(root).forecastConflicts('loop/T-1', 'loop/T-2');
    expect(forecast.files).toEqual(['a.txt']);
    expect(forecast.hunks).toEqual({});
  });

  it('cuts long hunks and keeps at most five per file', () => {
    const long = [
      '<<<<<<< ours',
      ...Array.from({ length: 100 }, (_, i) => `line ${i}`),
      '=======',
      'theirs',
      '>>>>>>> theirs',
    ].join('\n');
    const [hunk] = conflictHunks(long);
    expect(hunk!.split('\n')).toHaveLength(41);
    expect(hunk).toContain('more lines');
    expect(hunk!.endsWith('>>>>>>> theirs')).toBe(true);
    const many = Array.from({ length: 8 }, () => '<<<<<<< a\nx\n=======\ny\n>>>>>>> b').join('\nctx\n');
    expect(conflictHunks(many)).toHaveLength(5);
  });
});
