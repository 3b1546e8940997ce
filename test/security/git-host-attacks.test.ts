/**
 * git run by loopfleet on the host over agent-written trees executes nothing a tree wrote: each attack
 * below plants a program that appends to a host canary (in a folder outside the repository), runs the
 * git operation loopfleet runs, and requires the canary to stay empty.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { scanGitConfig } from '../../src/adapters/git/config-scan.js';
import { neutraliseConfig } from '../../src/adapters/git/exec.js';
import { GitScratchTrees } from '../../src/adapters/git/scratch-trees.js';
import { SimpleGitAdapter } from '../../src/adapters/git/simple-git.js';
import { watchReadOnly } from '../../src/adapters/git/worktree-snapshot.js';

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
afterEach(() => neutraliseConfig([]));

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await exec('git', args, { cwd, env: { ...process.env, ...IDENTITY } })).stdout;
}

async function write(file: string, content: string, mode?: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  if (mode !== undefined) await chmod(file, mode);
}

async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** A host file outside every repository, and a shell script that appends `name` to it. */
async function canary(): Promise<{ file: string; script: (name: string) => string; read: () => Promise<string> }> {
  const file = path.join(await temp('lf-canary-'), 'canary');
  await writeFile(file, '');
  return {
    file,
    script: (name) => `#!/bin/sh\necho ${name} >> '${file}'\ncat\n`,
    read: () => readFile(file, 'utf8'),
  };
}

async function repo(files: Record<string, [string, number?]>): Promise<{ root: string; adapter: SimpleGitAdapter }> {
  const root = await temp('lf-hostgit-');
  await git(root, 'init', '-q', '-b', 'main');
  for (const [name, [content, mode]] of Object.entries(files)) await write(path.join(root, name), content, mode);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'init');
  const adapter = new SimpleGitAdapter(root);
  return { root: adapter.root, adapter };
}

const HOOKS = [
  'post-index-change',
  'reference-transaction',
  'post-checkout',
  'pre-rebase',
  'post-rewrite',
  'pre-commit',
  'post-commit',
  'post-merge',
];

describe('hooks of a husky-style core.hooksPath in the tree', () => {
  it('run for none of loopfleet’s git commands', async () => {
    const c = await canary();
    const files: Record<string, [string, number?]> = { 'a.js': ['a = 1\n'] };
    for (const hook of HOOKS) files[`.husky/${hook}`] = [c.script(hook), 0o755];
    const { root, adapter } = await repo(files);
    await git(root, 'config', 'core.hooksPath', '.husky');

    // worktree add (its reset --hard: post-checkout, reference-transaction)
    const wt = path.join(root, '.loop-worktrees', 'T-1');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    // the snapshot commit's read-tree / add -A (post-index-change), commit (pre-commit, reference-transaction)
    await write(path.join(wt, 'a.js'), 'a = 2\n');
    const snap = await adapter.commitSnapshot(wt, 'T-1', []);
    expect(snap.commit).not.toBeNull();
    // a conflicting rebase and its --abort (pre-rebase, post-checkout, reference-transaction)
    await write(path.join(root, 'a.js'), 'a = 3\n');
    await git(root, '-c', 'core.hooksPath=/dev/null', 'commit', '-qam', 'base moves');
    expect(await adapter.rebase(wt, 'main')).toBe(false);
    // update-ref (reference-transaction), reset --hard (post-checkout)
    await adapter.updateRef('refs/loopfleet/kept/T-1', snap.commit!);
    await adapter.resetHard(wt, snap.commit!);
    // the read-only watcher's private-index read-tree / add -A / checkout-index (post-index-change)
    const watcher = await watchReadOnly(wt, 'the reviewer');
    await write(path.join(wt, 'b.js'), 'b\n');
    await expect(watcher.verify()).rejects.toThrow(/changed the worktree/);
    // a scratch (prove) worktree: worktree add, checkout <commit> -- paths
    const scratch = new GitScratchTrees(adapter);
    const dir = await scratch.create('prove-T-1', 'main');
    await write(path.join(dir, 'a.js'), 'changed\n');
    await scratch.restore(dir, snap.commit!, ['a.js']);
    await scratch.remove(dir);
    // after a merge: worktree remove, branch -D (reference-transaction)
    await adapter.removeWorktree(wt, true);
    await adapter.deleteBranch('loop/T-1', true);

    expect(await c.read()).toBe('');
  });
});

describe('a nested repository an agent made in its worktree', () => {
  async function nestedSetup() {
    const c = await canary();
    const { root, adapter } = await repo({ 'a.js': ['a = 1\n'] });
    const wt = path.join(root, '.loop-worktrees', 'T-1');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    return { c, root, adapter, wt };
  }

  /** what a check does inside the sandbox: `git init evil`, an fsmonitor there, a gitlink in the index */
  async function plant(wt: string, c: Awaited<ReturnType<typeof canary>>): Promise<void> {
    const evil = path.join(wt, 'evil');
    await mkdir(evil);
    await git(evil, 'init', '-q');
    await write(path.join(evil, 'f'), 'x\n');
    await git(evil, 'add', 'f');
    await git(evil, '-c', 'core.hooksPath=/dev/null', 'commit', '-qm', 'e');
    await write(path.join(evil, 'fsmonitor.sh'), c.script('nested-fsmonitor'), 0o755);
    await git(evil, 'config', 'core.fsmonitor', path.join(evil, 'fsmonitor.sh'));
    const sha = (await git(evil, 'rev-parse', 'HEAD')).trim();
    await git(wt, 'update-index', '--add', '--cacheinfo', `160000,${sha},evil`);
  }

  it('is not entered by the merge queue’s rebase check, which refuses the worktree', async () => {
    const { c, adapter, wt } = await nestedSetup();
    await plant(wt, c);
    await expect(adapter.rebase(wt, 'main')).rejects.toThrow(/uncommitted changes/);
    expect(await c.read()).toBe('');
  });

  it('is not entered by the read-only watcher, which reports and resets the change', async () => {
    const { c, wt } = await nestedSetup();
    const watcher = await watchReadOnly(wt, 'the reviewer');
    await plant(wt, c);
    await expect(watcher.verify()).rejects.toThrow(/evil/);
    expect(existsSync(path.join(wt, 'evil'))).toBe(false);
    expect(await c.read()).toBe('');
  });

  // Held before this change too (git-commit.ts leaves nested repositories out); kept as a regression test.
  it('is neither entered nor committed by the snapshot commit', async () => {
    const { c, adapter, wt } = await nestedSetup();
    await plant(wt, c);
    const snap = await adapter.commitSnapshot(wt, 'T-1', []);
    expect(await git(wt, 'ls-tree', '-r', 'HEAD')).not.toMatch(/160000/);
    expect(snap.differs.join(' ')).toMatch(/evil/);
    expect(await c.read()).toBe('');
  });

  it('is not entered when it fills a submodule folder base already has', async () => {
    const c = await canary();
    const { root, adapter } = await repo({ 'a.js': ['a = 1\n'] });
    const sha = (await git(root, 'rev-parse', 'HEAD')).trim();
    await git(root, 'update-index', '--add', '--cacheinfo', `160000,${sha},sub`);
    await git(root, '-c', 'core.hooksPath=/dev/null', 'commit', '-qm', 'a submodule');
    const wt = path.join(root, '.loop-worktrees', 'T-1');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    const watcher = await watchReadOnly(wt, 'the reviewer');
    // the agent fills the submodule folder with a repository of its own whose fsmonitor is a script
    const sub = path.join(wt, 'sub');
    await mkdir(sub, { recursive: true });
    await git(sub, 'init', '-q');
    await write(path.join(sub, 'fsmonitor.sh'), c.script('submodule-fsmonitor'), 0o755);
    await write(path.join(sub, 'f'), 'x\n');
    await git(sub, 'add', 'f');
    await git(sub, '-c', 'core.hooksPath=/dev/null', 'commit', '-qm', 's');
    await git(sub, 'config', 'core.fsmonitor', path.join(sub, 'fsmonitor.sh'));
    await write(path.join(sub, 'f'), 'dirty\n');
    await expect(watcher.verify()).rejects.toThrow(/sub/);
    // Refused or carried out, either is an answer here; what must not happen is git entering `sub`.
    await adapter.rebase(wt, 'main').catch((error: Error) => error);
    await adapter.commitSnapshot(wt, 'T-1', []);
    expect(await c.read()).toBe('');
  });
});

describe('a gitlink committed on a task branch', () => {
  it('is listed in the diff the guard reads (hardening hides submodules only from work-tree reads)', async () => {
    const { root, adapter } = await repo({ 'a.js': ['a = 1\n'] });
    const wt = path.join(root, '.loop-worktrees', 'T-1');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    const sha = (await git(root, 'rev-parse', 'HEAD')).trim();
    await git(wt, 'update-index', '--add', '--cacheinfo', `160000,${sha},evil`);
    await git(wt, '-c', 'core.hooksPath=/dev/null', 'commit', '-qm', 'gitlink');
    const entries = await adapter.diffEntries(wt, 'main');
    expect(entries.map((e) => [e.path, e.newMode])).toEqual([['evil', '160000']]);
    expect(await adapter.diff(wt, 'main')).toContain('Subproject commit');
  });
});

describe('the person’s own config naming programs that resolve into a worktree', () => {
  it('is found, said once, and git runs without it (relative fsmonitor, clean filter, merge driver, in-tree include)', async () => {
    const c = await canary();
    const { root, adapter } = await repo({
      'a.m': ['base\n'],
      // a team config kept in the repository, included by the person's .git/config
      '.gitconfig': ['[filter "team"]\n\tclean = sh ./team-clean.sh\n'],
    });
    await git(root, 'config', 'core.fsmonitor', './fsmonitor.sh');
    await git(root, 'config', 'filter.lf.clean', './clean.sh');
    await git(root, 'config', 'filter.lf.required', 'true');
    await git(root, 'config', 'merge.m.driver', './merge.sh %O %A %B');
    await git(root, 'config', 'include.path', '../.gitconfig');
    await git(root, 'config', 'diff.t.textconv', `${root}/tc.sh`);

    const scan = await scanGitConfig(root);
    const said = scan.warnings.join('\n');
    for (const key of ['core.fsmonitor', 'filter.lf.clean', 'merge.m.driver', 'filter.team.clean', 'diff.t.textconv'])
      expect(said).toContain(key);
    expect(said).toMatch(/\.gitconfig, a file in the working tree/);
    expect(scan.warnings).toHaveLength(5);
    neutraliseConfig(scan.overrides);

    const wt = path.join(root, '.loop-worktrees', 'T-1');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    // the agent's copies of the person's scripts, and attributes that select them
    for (const name of ['fsmonitor.sh', 'clean.sh', 'merge.sh', 'team-clean.sh', 'tc.sh'])
      await write(path.join(wt, name), c.script(name), 0o755);
    await write(path.join(wt, '.gitattributes'), '*.txt filter=lf\n*.dat filter=team\n*.m merge=m diff=t\n');
    await write(path.join(wt, 'x.txt'), 'x\n');
    await write(path.join(wt, 'y.dat'), 'y\n');
    await write(path.join(wt, 'a.m'), 'task\n');
    const snap = await adapter.commitSnapshot(wt, 'T-1', []);
    expect(snap.commit).not.toBeNull();
    await adapter.diffSummary(wt, 'main');
    // base changes a.m too: the rebase merges it with the driver the attributes name
    await write(path.join(root, 'a.m'), 'base 2\n');
    await git(root, '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', 'commit', '-qam', 'base moves');
    expect(await adapter.rebase(wt, 'main')).toBe(false);

    expect(await c.read()).toBe('');
  });

  it('says nothing for programs outside the repository', async () => {
    const { root } = await repo({ 'a.js': ['a\n'] });
    await git(root, 'config', 'filter.lfs.clean', 'git-lfs clean -- %f');
    await git(root, 'config', 'merge.ours.driver', '/usr/bin/true');
    expect(await scanGitConfig(root)).toEqual({ overrides: [], warnings: [] });
  });
});
