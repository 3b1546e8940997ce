import { afterEach, describe, expect, it } from 'vitest';
import { SimpleGitAdapter } from '../../src/adapters/simple-git.js';
import { conflictHunks } from '../../src/adapters/git-forecast.js';
import { conflictsWith, forecastFleet } from '../../src/core/conflict-forecast.js';
import { git, makeRepo, writeFiles } from '../helpers/git-repo.js';

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

    expect(conflictsWith(forecast.get('T-1'), 'main')).toEqual(['T-2']);
    expect(conflictsWith(forecast.get('T-2'), 'main')).toEqual(['T-1']);
    expect(forecast.has('T-3')).toBe(false);
    expect(conflictsWith(forecast.get('T-4'), 'main')).toEqual(['main']);
    expect(forecast.get('T-1')!.tasks).toEqual([{ id: 'T-2', files: ['calc.js'] }]);
    const hunk = forecast.get('T-1')!.hunks[0]!;
    expect(hunk).toMatchObject({ with: 'T-2', file: 'calc.js' });
    expect(hunk.hunk).toContain('B-one');
    expect(hunk.hunk).toContain('B-two');
    expect(hunk.hunk.startsWith('<<<<<<< ')).toBe(true);
    // nothing was written that anyone can see
    expect(await git(root, 'for-each-ref')).toBe(refsBefore);
    expect(await git(root, 'status', '--porcelain')).toBe(statusBefore);
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
    const long = ['<<<<<<< ours', ...Array.from({ length: 100 }, (_, i) => `line ${i}`), '=======', 'theirs', '>>>>>>> theirs'].join('\n');
    const [hunk] = conflictHunks(long);
    expect(hunk!.split('\n')).toHaveLength(41);
    expect(hunk).toContain('more lines');
    expect(hunk!.endsWith('>>>>>>> theirs')).toBe(true);
    const many = Array.from({ length: 8 }, () => '<<<<<<< a\nx\n=======\ny\n>>>>>>> b').join('\nctx\n');
    expect(conflictHunks(many)).toHaveLength(5);
  });
});
