import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'lf-repo-')));
  temps.push(dir);
  return dir;
}

const git = async (cwd: string, ...args: string[]): Promise<string> =>
  (await execa('git', args, { cwd })).stdout.trim();

describe('SimpleGitAdapter without a repository yet', () => {
  it('creates a repository with one commit of everything, as loopfleet', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'a.txt'), 'a\n');
    await mkdir(path.join(dir, 'src'));
    await writeFile(path.join(dir, 'src', 'b.txt'), 'b\n');
    const commit = await SimpleGitAdapter.createRepository(dir, 'main', 'Demo project');
    expect(commit).toMatch(/^[0-9a-f]{40,64}$/);
    expect(await git(dir, 'rev-parse', 'main')).toBe(commit);
    expect(await git(dir, 'log', '-1', '--format=%an <%ae>|%s')).toBe('loopfleet <loopfleet@localhost>|Demo project');
    expect((await git(dir, 'ls-tree', '-r', '--name-only', 'HEAD')).split('\n')).toEqual(['a.txt', 'src/b.txt']);
    expect(await git(dir, 'status', '--porcelain')).toBe('');
  });

  it('finds the top-level folder from a subfolder, and null outside any repository', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'sub', 'deeper'), { recursive: true });
    await writeFile(path.join(dir, 'sub', 'x.txt'), 'x\n');
    await SimpleGitAdapter.createRepository(dir, 'main', 'init');
    expect(await SimpleGitAdapter.topLevel(path.join(dir, 'sub', 'deeper'))).toBe(dir);
    const outside = await tempDir();
    expect(await SimpleGitAdapter.topLevel(outside)).toBeNull();
  });

  it('tells init where the exclude rule went', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'x.txt'), 'x\n');
    await SimpleGitAdapter.createRepository(dir, 'main', 'init');
    expect(await new SimpleGitAdapter(dir).ensureExcluded('/.loop-worktrees/')).toBe(
      path.join(dir, '.git', 'info', 'exclude'),
    );
  });
});
