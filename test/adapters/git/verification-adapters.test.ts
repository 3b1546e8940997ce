import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonBaselineStore } from '../../../src/adapters/store/baseline-store.js';
import { GitScratchTrees } from '../../../src/adapters/git/scratch-trees.js';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';
import type { BaselineResult } from '../../../src/domain/types.js';
import { git, makeRepo, writeFiles } from '../../helpers/git-repo.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

const result = (commit: string, command: string, exitCode = 0): BaselineResult => ({
  name: command,
  command,
  commit,
  exitCode,
  timedOut: false,
  counts: null,
  durationMs: 5,
  outputTail: '',
});

describe('baselines.json', () => {
  it('caches by commit and command, replaces a result, survives concurrent writes and rebuilds a broken file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loopfleet-baselines-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'nested', 'baselines.json');
    const store = new JsonBaselineStore(path);
    expect(await store.get('c1', 'npm test')).toBeNull();
    await Promise.all([
      store.put(result('c1', 'npm test')),
      store.put(result('c1', 'npm run lint')),
      store.put(result('c2', 'npm test')),
    ]);
    await store.put(result('c1', 'npm test', 1));
    expect((await store.get('c1', 'npm test'))?.exitCode).toBe(1);
    expect(await store.get('c2', 'npm run lint')).toBeNull();
    expect((await store.all()).map((r) => `${r.commit} ${r.command}`).sort()).toEqual([
      'c1 npm run lint',
      'c1 npm test',
      'c2 npm test',
    ]);
    // Another process sees the same file.
    expect((await new JsonBaselineStore(path).get('c2', 'npm test'))?.command).toBe('npm test');
    await writeFile(path, '{ not json');
    expect(await store.get('c1', 'npm test')).toBeNull();
    await store.put(result('c3', 'x'));
    expect(JSON.parse(await readFile(path, 'utf8')).results).toHaveLength(1);
  });
});

describe('scratch worktrees', () => {
  it('checks out a commit detached, restores paths to another commit (deleting what it lacks) and is removed', async () => {
    const r = await makeRepo({ 'a.js': 'base a\n', 'keep.js': 'base keep\n' });
    cleanups.push(r.cleanup);
    const baseCommit = await git(r.root, 'rev-parse', 'HEAD');
    await git(r.root, 'checkout', '-q', '-b', 'work');
    await writeFiles(r.root, { 'a.js': 'changed a\n', 'new.js': 'new\n', 'keep.js': 'changed keep\n' });
    await git(r.root, 'add', '-A');
    await git(r.root, 'commit', '-qm', 'work');
    const work = await git(r.root, 'rev-parse', 'HEAD');
    await git(r.root, 'checkout', '-q', 'main');

    const scratch = new GitScratchTrees(new SimpleGitAdapter(r.root));
    const dir = await scratch.create('prove-T-1', work);
    expect(dir).toMatch(/\.loop-worktrees\/\.prove-T-1$/);
    expect(await readFile(join(dir, 'a.js'), 'utf8')).toBe('changed a\n');
    await scratch.restore(dir, baseCommit, ['a.js', 'new.js']);
    expect(await readFile(join(dir, 'a.js'), 'utf8')).toBe('base a\n');
    expect(existsSync(join(dir, 'new.js'))).toBe(false);
    expect(await readFile(join(dir, 'keep.js'), 'utf8')).toBe('changed keep\n');
    expect(await scratch.mergeBase(dir, 'main')).toBe(baseCommit);
    // A leftover of the same name (a crash) is replaced, not refused.
    const again = await scratch.create('prove-T-1', work);
    expect(await readFile(join(again, 'a.js'), 'utf8')).toBe('changed a\n');
    await scratch.remove(again);
    expect(existsSync(again)).toBe(false);
    expect(await git(r.root, 'worktree', 'list')).not.toContain('.prove-T-1');
    // The user's checkout and branches are untouched.
    expect(await readFile(join(r.root, 'a.js'), 'utf8')).toBe('base a\n');
    expect(await git(r.root, 'rev-parse', 'work')).toBe(work);
    await expect(scratch.remove(join(r.root, '.loop-worktrees', 'T-1'))).rejects.toThrow(/not a scratch worktree/);
    await expect(scratch.create('../escape', work)).rejects.toThrow(/letters, digits/);
  });
});

describe('a scratch worktree with hidden tests written over it', () => {
  it('replaces what an agent committed at the path or in its way, and never writes outside the worktree', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'loopfleet-outside-'));
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    const r = await makeRepo({ 'src/a.js': 'a\n' });
    cleanups.push(r.cleanup);
    // The agent's commit: `test` is a link to a folder outside, `spec.js` a link to a file outside, and
    // `lib` a file where a hidden test needs a folder.
    await writeFile(join(outside, 'target.js'), 'outside\n');
    await git(r.root, 'checkout', '-q', '-b', 'agent');
    await symlink(outside, join(r.root, 'test'));
    await symlink(join(outside, 'target.js'), join(r.root, 'spec.js'));
    await writeFiles(r.root, { lib: 'a file\n', 'own.test.js': 'the agent version\n' });
    await git(r.root, 'add', '-A');
    await git(r.root, 'commit', '-qm', 'agent');
    const commit = await git(r.root, 'rev-parse', 'HEAD');

    const scratch = new GitScratchTrees(new SimpleGitAdapter(r.root));
    const dir = await scratch.create('hidden-E-1', commit);
    await scratch.overlay(dir, {
      'test/neg.test.js': 'hidden neg\n',
      'spec.js': 'hidden spec\n',
      'lib/deep/x.test.js': 'hidden deep\n',
      'own.test.js': 'the hidden version\n',
    });
    expect(await readFile(join(dir, 'test', 'neg.test.js'), 'utf8')).toBe('hidden neg\n');
    expect(await readFile(join(dir, 'spec.js'), 'utf8')).toBe('hidden spec\n');
    expect(await readFile(join(dir, 'lib', 'deep', 'x.test.js'), 'utf8')).toBe('hidden deep\n');
    expect(await readFile(join(dir, 'own.test.js'), 'utf8')).toBe('the hidden version\n');
    // Nothing went through the links.
    expect(existsSync(join(outside, 'neg.test.js'))).toBe(false);
    expect(await readFile(join(outside, 'target.js'), 'utf8')).toBe('outside\n');
    // Nothing entered git's object store: no blob of a hidden file is there for a later attempt to find.
    const objects = await git(r.root, 'cat-file', '--batch-all-objects', '--batch-check');
    for (const text of ['hidden neg\n', 'the hidden version\n']) {
      const sha = (await execa('git', ['hash-object', '--stdin'], { cwd: r.root, input: text })).stdout.trim();
      expect(objects).not.toContain(sha);
    }
    for (const bad of ['../x.js', '/etc/x.js', '.git/config', 'a/../../x.js', 'a//b.js'])
      await expect(scratch.overlay(dir, { [bad]: 'x' })).rejects.toThrow(/must be relative, inside the worktree/);
    await scratch.remove(dir);
  });
});
