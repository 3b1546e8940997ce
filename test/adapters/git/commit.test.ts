import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';

const exec = promisify(execFile);
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Person',
  GIT_AUTHOR_EMAIL: 'p@example.com',
  GIT_COMMITTER_NAME: 'Person',
  GIT_COMMITTER_EMAIL: 'p@example.com',
};
const temps: string[] = [];
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await exec('git', args, { cwd, env: { ...process.env, ...IDENTITY } })).stdout;
}

async function write(file: string, content: string | Buffer): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

/** A repository with a task worktree on loop/T-1; returns the adapter and the worktree path. */
async function setup() {
  const root = await mkdtemp(path.join(os.tmpdir(), 'lf-commit-'));
  temps.push(root);
  await git(root, 'init', '-q', '-b', 'main');
  await write(path.join(root, 'test/x.test.js'), 'assert.equal(1, 1);\n');
  await write(path.join(root, 'src/a.js'), 'export const a = 1;\n');
  await write(path.join(root, '.gitignore'), 'dist/\n.env\n');
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'init');
  const adapter = new SimpleGitAdapter(root);
  const wt = path.join(adapter.root, '.loop-worktrees', 'T-1');
  await adapter.addWorktree(wt, 'loop/T-1', 'main');
  return { adapter, wt };
}

describe('snapshot commits', () => {
  it('commit a file hidden with assume-unchanged or skip-worktree as it is on disk', async () => {
    const { adapter, wt } = await setup();
    await git(wt, 'update-index', '--assume-unchanged', 'test/x.test.js');
    await git(wt, 'update-index', '--skip-worktree', 'src/a.js');
    await write(path.join(wt, 'test/x.test.js'), '// nothing\n');
    await write(path.join(wt, 'src/a.js'), 'export const a = 2;\n');
    const { commit, differs } = await adapter.commitSnapshot(wt, 'T-1: snapshot', []);
    expect(differs).toEqual([]);
    expect(await git(wt, 'show', `${commit}:test/x.test.js`)).toBe('// nothing\n');
    expect(await git(wt, 'show', `${commit}:src/a.js`)).toBe('export const a = 2;\n');
    expect(await git(wt, 'ls-files', '-v')).not.toMatch(/^[a-zS] /m);
  });

  it('never stage a nested repository, report it, and never run its fsmonitor', async () => {
    const { adapter, wt } = await setup();
    const canary = path.join(os.tmpdir(), `lf-fsmonitor-${process.pid}-${Date.now()}`);
    const sub = path.join(wt, 'sub');
    await mkdir(sub);
    await git(sub, 'init', '-q');
    await write(path.join(sub, 'f'), 'x\n');
    await git(sub, 'add', 'f');
    await git(sub, 'commit', '-qm', 'nested');
    await git(sub, 'config', 'core.fsmonitor', `touch ${canary}; echo`);
    await write(path.join(sub, 'f'), 'changed\n');
    await git(wt, 'init', '-q', 'empty'); // a nested repository without a commit: `git add -A` would fail on it
    await write(path.join(wt, 'src/b.js'), 'export const b = 1;\n');
    const { commit, differs } = await adapter.commitSnapshot(wt, 'T-1: snapshot', []);
    expect(differs.sort()).toEqual([
      'empty/ (a nested git repository: loopfleet never commits one)',
      'sub/ (a nested git repository: loopfleet never commits one)',
    ]);
    expect(await git(wt, 'ls-tree', '-r', '--name-only', commit!)).toBe(
      '.gitignore\nsrc/a.js\nsrc/b.js\ntest/x.test.js\n',
    );
    expect(existsSync(canary)).toBe(false);
  });

  it('leave ignored and excluded files out, and report nothing for them; nothing new is no commit', async () => {
    const { adapter, wt } = await setup();
    await write(path.join(wt, 'dist/out.js'), 'built\n');
    await write(path.join(wt, '.env'), 'SECRET=1\n');
    await write(path.join(wt, 'copied.cfg'), 'from the checkout\n');
    expect(await adapter.commitSnapshot(wt, 'T-1: nothing', ['copied.cfg'])).toEqual({
      commit: null,
      differs: [],
      ignored: ['.env', 'dist/'],
    });
  });
});

describe('diff entries and blobs', () => {
  it('give modes, sizes and binary-ness, and read a file at a commit with a size bound', async () => {
    const { adapter, wt } = await setup();
    await write(path.join(wt, 'blob.bin'), Buffer.alloc(3000, 0));
    await write(path.join(wt, 'src/a.js'), 'export const a = 22;\n');
    await rm(path.join(wt, 'test/x.test.js'));
    const { commit } = await adapter.commitSnapshot(wt, 'T-1: change', []);
    const entries = await adapter.diffEntries(wt, 'main');
    expect(entries.map(({ path: p, status, newMode, size, binary }) => ({ p, status, newMode, size, binary }))).toEqual(
      [
        { p: 'blob.bin', status: 'A', newMode: '100644', size: 3000, binary: true },
        { p: 'src/a.js', status: 'M', newMode: '100644', size: 21, binary: false },
        { p: 'test/x.test.js', status: 'D', newMode: '000000', size: 20, binary: false },
      ],
    );
    expect(await adapter.readBlob(`main:test/x.test.js`, 100)).toEqual({ size: 20, text: 'assert.equal(1, 1);\n' });
    expect(await adapter.readBlob(`${commit}:blob.bin`, 100)).toEqual({ size: 3000, text: null });
    expect(await adapter.readBlob(`${commit}:test/x.test.js`, 100)).toBeNull();
    expect(await adapter.readBlob(entries[1]!.newSha, 100)).toEqual({ size: 21, text: 'export const a = 22;\n' });
  });
});
