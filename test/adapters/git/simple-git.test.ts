import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { RefusedError } from '../../../src/domain/errors.js';
import { GitCommandError } from '../../../src/adapters/git/exec.js';
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

/** git as the person would run it, in `cwd` */
async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('git', args, { cwd, env: { ...process.env, ...IDENTITY } });
  return stdout;
}

async function write(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

/** A repository on `main` with one commit: a.txt, b.txt. */
async function makeRepo(): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'lf-git-'));
  temps.push(root);
  await git(root, 'init', '-q', '-b', 'main');
  await write(path.join(root, 'a.txt'), 'a1\na2\na3\n');
  await write(path.join(root, 'b.txt'), 'b\n');
  await git(root, 'add', '-A');
  await git(root, 'commit', '-qm', 'init');
  return root;
}

/** Everything a merge must leave alone: HEAD, refs, index, status and the bytes of every file. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name === '.git' || entry.name === '.loop-worktrees') continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else
        files[path.relative(root, full)] = createHash('sha256')
          .update(await readFile(full))
          .digest('hex');
    }
  };
  await walk(root);
  const index = createHash('sha256')
    .update(await readFile(path.join(root, '.git', 'index')))
    .digest('hex');
  return {
    ...files,
    HEAD: await git(root, 'rev-parse', 'HEAD'),
    refs: await git(root, 'for-each-ref'),
    status: await git(root, 'status', '--porcelain', '--untracked-files=all'),
    index,
  };
}

describe('SimpleGitAdapter', () => {
  let root: string;
  let adapter: SimpleGitAdapter;
  let wt: string;

  beforeEach(async () => {
    root = await makeRepo();
    adapter = new SimpleGitAdapter(root);
    wt = path.join(adapter.root, '.loop-worktrees', 'T-1');
  });

  /** the task branches, read with git itself */
  async function loopBranches(): Promise<string[]> {
    const out = await git(root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/loop/');
    return out
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => line.trim());
  }

  /** a task worktree with one commit changing `file` */
  async function taskCommit(id: string, file: string, content: string): Promise<string> {
    const dir = path.join(adapter.root, '.loop-worktrees', id);
    await adapter.addWorktree(dir, `loop/${id}`, 'main');
    await write(path.join(dir, file), content);
    const commit = (await adapter.commitSnapshot(dir, `${id}: change ${file}`, [])).commit;
    expect(commit).not.toBeNull();
    return dir;
  }

  it('reads branches, refs and commits', async () => {
    expect(await adapter.currentBranch()).toBe('main');
    expect(await adapter.branchExists('main')).toBe(true);
    expect(await adapter.branchExists('nope')).toBe(false);
    expect(await adapter.revParse('main')).toBe((await git(root, 'rev-parse', 'HEAD')).trim());
    expect(await adapter.revParse('nope')).toBeNull();
    expect(await adapter.hasCommits()).toBe(true);
    await git(root, 'checkout', '-q', '--detach');
    expect(await adapter.currentBranch()).toBeNull();

    const empty = await mkdtemp(path.join(os.tmpdir(), 'lf-empty-'));
    temps.push(empty);
    await git(empty, 'init', '-q');
    expect(await new SimpleGitAdapter(empty).hasCommits()).toBe(false);
  });

  it('reports failures with the command and git stderr', async () => {
    const error = await adapter.addWorktree(wt, 'loop/T-1', 'no-such-base').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitCommandError);
    expect((error as Error).message).toContain('git worktree add');
    expect((error as Error).message).toMatch(/invalid reference|not a valid|no-such-base/);
  });

  it('lists only tracked changes as dirty', async () => {
    await write(path.join(root, 'untracked.txt'), 'x');
    expect(await adapter.dirtyFiles()).toEqual([]);
    await write(path.join(root, 'a.txt'), 'changed\n');
    expect(await adapter.dirtyFiles()).toEqual([' M a.txt']);
  });

  it('adds a worktree on a new branch, resumes it, refuses folders it does not know', async () => {
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    expect(await readFile(path.join(wt, 'a.txt'), 'utf8')).toBe('a1\na2\na3\n');
    expect(await adapter.branchExists('loop/T-1')).toBe(true);

    // resume after a crash: same call, nothing lost
    await write(path.join(wt, 'work.txt'), 'in progress');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    expect(await readFile(path.join(wt, 'work.txt'), 'utf8')).toBe('in progress');

    // the folder was deleted by hand but the branch is there: checked out again as is
    const commit = (await adapter.commitSnapshot(wt, 'T-1: work', [])).commit;
    await rm(wt, { recursive: true, force: true });
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    expect(await git(wt, 'rev-parse', 'HEAD')).toBe(`${commit}\n`);
    expect(await readFile(path.join(wt, 'work.txt'), 'utf8')).toBe('in progress');

    // an unknown folder in the way is refused and kept
    const stray = path.join(adapter.root, '.loop-worktrees', 'T-2');
    await write(path.join(stray, 'mine.txt'), 'keep me');
    await expect(adapter.addWorktree(stray, 'loop/T-2', 'main')).rejects.toThrow(RefusedError);
    expect(await readFile(path.join(stray, 'mine.txt'), 'utf8')).toBe('keep me');
  });

  it('adds a detached throw-away worktree, replacing its own previous one', async () => {
    const dir = path.join(adapter.root, '.loop-worktrees', '.audit');
    await adapter.addWorktreeDetached(dir, 'main');
    expect((await git(dir, 'rev-parse', 'HEAD')).trim()).toBe((await git(root, 'rev-parse', 'main')).trim());
    await write(path.join(dir, 'scratch.txt'), 'x');
    await adapter.addWorktreeDetached(dir, 'main');
    expect(existsSync(path.join(dir, 'scratch.txt'))).toBe(false);
    expect((await adapter.listWorktrees()).find((w) => w.path === dir)?.branch).toBeNull();
    const stray = path.join(adapter.root, '.loop-worktrees', 'stray');
    await write(path.join(stray, 'mine.txt'), 'keep');
    await expect(adapter.addWorktreeDetached(stray, 'main')).rejects.toThrow(RefusedError);
    expect(await readFile(path.join(stray, 'mine.txt'), 'utf8')).toBe('keep');
  });

  it('refuses worktrees outside <root>/.loop-worktrees/', async () => {
    const outside = await mkdtemp(path.join(os.tmpdir(), 'lf-out-'));
    temps.push(outside);
    await expect(adapter.addWorktree(path.join(outside, 'T-1'), 'loop/T-1', 'main')).rejects.toThrow(RefusedError);
    await expect(adapter.addWorktree(path.join(adapter.root, 'T-1'), 'loop/T-1', 'main')).rejects.toThrow(RefusedError);
    await expect(
      adapter.addWorktree(path.join(adapter.root, '.loop-worktrees', '..', 'T-1'), 'loop/T-1', 'main'),
    ).rejects.toThrow(RefusedError);
    await expect(
      adapter.addWorktree(path.join(adapter.root, '.loop-worktrees', 'a', 'b'), 'loop/T-1', 'main'),
    ).rejects.toThrow(RefusedError);
    expect(await adapter.branchExists('loop/T-1')).toBe(false);
  });

  it('commits everything but the excluded paths, with its own identity', async () => {
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    await write(path.join(wt, 'a.txt'), 'a1\nchanged\na3\n');
    await write(path.join(wt, 'src/new.ts'), 'export {};\n');
    await write(path.join(wt, '.env'), 'SECRET=1\n');
    await write(path.join(wt, 'config/local.json'), '{}');
    await git(wt, 'add', '-f', '.env'); // staged by hand: must still stay out
    await rm(path.join(wt, 'b.txt'));

    const commit = (await adapter.commitSnapshot(wt, 'T-1: change things', ['.env', 'config/local.json'])).commit;
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    expect((await git(wt, 'rev-parse', 'HEAD')).trim()).toBe(commit);
    const files = (await git(wt, 'show', '--name-status', '--format=', 'HEAD')).trim().split('\n').sort();
    expect(files).toEqual(['D\tb.txt', 'M\ta.txt', 'A\tsrc/new.ts'].sort());
    expect((await git(wt, 'log', '-1', '--format=%an <%ae>|%cn <%ce>|%s')).trim()).toBe(
      'loopfleet <loopfleet@localhost>|loopfleet <loopfleet@localhost>|T-1: change things',
    );
    expect(existsSync(path.join(wt, '.env'))).toBe(true);

    expect((await adapter.commitSnapshot(wt, 'T-1: nothing', ['.env', 'config/local.json'])).commit).toBeNull();
  });

  it('commits where the user has no git identity at all', async () => {
    const saved = { ...process.env };
    const home = await mkdtemp(path.join(os.tmpdir(), 'lf-home-'));
    temps.push(home);
    for (const key of Object.keys(process.env)) if (key.startsWith('GIT_')) delete process.env[key];
    Object.assign(process.env, { HOME: home, XDG_CONFIG_HOME: home, GIT_CONFIG_NOSYSTEM: '1' });
    try {
      const bare = new SimpleGitAdapter(root); // reads the environment when built
      await bare.addWorktree(wt, 'loop/T-1', 'main');
      await write(path.join(wt, 'c.txt'), 'c\n');
      const commit = (await bare.commitSnapshot(wt, 'T-1: no identity', [])).commit;
      expect(commit).toMatch(/^[0-9a-f]{40}$/);
      const merged = await bare.merge('loop/T-1', 'main', 'Merge T-1');
      expect(merged.kind).toBe('merged');
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });

  it('diffs a task branch against its base', async () => {
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    await write(path.join(wt, 'a.txt'), 'a1\nA2\na3\nadded\n');
    await write(path.join(wt, 'img.bin'), Buffer.from([0, 1, 2, 0, 255]).toString('latin1'));
    await git(wt, 'mv', 'b.txt', 'moved.txt');
    await adapter.commitSnapshot(wt, 'T-1: edit', []);
    // base moves on: base...HEAD still shows only the task's changes
    await write(path.join(root, 'other.txt'), 'x\n');
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'other');

    const diff = await adapter.diff(wt, 'main');
    expect(diff).toContain('+A2');
    expect(diff).not.toContain('other.txt');
    const numstat = await adapter.diffNumstat(wt, 'main');
    expect(numstat).toEqual(
      expect.arrayContaining([
        { path: 'a.txt', added: 2, deleted: 1 },
        { path: 'b.txt', added: 0, deleted: 1 },
        { path: 'moved.txt', added: 1, deleted: 0 },
        { path: 'img.bin', added: 0, deleted: 0 },
      ]),
    );
    expect(numstat).toHaveLength(4);

    // The one-process summary says the same as the exact NUL-separated numstat.
    const summary = await adapter.diffSummary(wt, 'main');
    expect(summary.numstat).toEqual(numstat);
    // without rename detection: a move shows as a deletion and an addition, so no path hides behind a rename
    expect(summary.patch).toContain('+A2');
    expect(summary.patch).toContain('deleted file mode');
    expect(summary.patch).not.toContain('other.txt');
    expect(summary.patch.startsWith('diff --git a/a.txt b/a.txt')).toBe(true);
    expect(summary.stat).toMatch(/a\.txt +\| +3 /);
    expect(summary.stat).toMatch(/4 files changed/);
  });

  it('reads exotic file names exactly in the diff summary, for the guard checks', async () => {
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    await write(path.join(wt, 'tab\there.txt'), 'x\n');
    await write(path.join(wt, 'ünïcode.txt'), 'y\n');
    await adapter.commitSnapshot(wt, 'T-1: names', []);
    const summary = await adapter.diffSummary(wt, 'main');
    expect(summary.numstat.map((n) => n.path).sort()).toEqual(['tab\there.txt', 'ünïcode.txt']);
  });

  it('merges with a merge commit of two parents and the message', async () => {
    await taskCommit('T-1', 'c.txt', 'c\n');
    const baseBefore = (await git(root, 'rev-parse', 'main')).trim();
    const branchHead = (await git(root, 'rev-parse', 'loop/T-1')).trim();

    const result = await adapter.merge('loop/T-1', 'main', 'Merge T-1: add c');
    expect(result.kind).toBe('merged');
    const commit = result.kind === 'merged' ? result.commit : '';
    expect((await git(root, 'rev-parse', 'main')).trim()).toBe(commit);
    expect((await git(root, 'log', '-1', '--format=%P|%s', commit)).trim()).toBe(
      `${baseBefore} ${branchHead}|Merge T-1: add c`,
    );
    // the user's checkout follows: the file is there, nothing is dirty
    expect(await readFile(path.join(root, 'c.txt'), 'utf8')).toBe('c\n');
    expect(await git(root, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(await adapter.isMerged('loop/T-1', 'main')).toBe(true);
  });

  it('refuses to merge into a checkout with uncommitted tracked changes, touching nothing', async () => {
    await taskCommit('T-1', 'c.txt', 'c\n');
    await write(path.join(root, 'a.txt'), 'my uncommitted work\n');
    await git(root, 'add', 'a.txt');
    await write(path.join(root, 'b.txt'), 'more work\n');
    const before = await snapshot(root);

    const result = await adapter.merge('loop/T-1', 'main', 'Merge T-1');
    expect(result.kind).toBe('refused');
    expect(result.kind === 'refused' && result.reason).toMatch(/a\.txt.*b\.txt/);
    expect(await snapshot(root)).toEqual(before);
  });

  it('reports a conflict and leaves base, index and working tree byte-identical', async () => {
    await taskCommit('T-1', 'a.txt', 'a1\ntask\na3\n');
    await write(path.join(root, 'a.txt'), 'a1\nmain\na3\n');
    await git(root, 'commit', '-qam', 'main edit');
    await write(path.join(root, 'untracked.txt'), 'u');
    const before = await snapshot(root);

    const result = await adapter.merge('loop/T-1', 'main', 'Merge T-1');
    expect(result).toEqual({ kind: 'conflict', files: ['a.txt'] });
    expect(await snapshot(root)).toEqual(before);
  });

  it('moves base with a compare-and-swap when it is not checked out', async () => {
    await taskCommit('T-1', 'c.txt', 'c\n');
    await git(root, 'checkout', '-q', '-b', 'elsewhere');
    await write(path.join(root, 'a.txt'), 'dirty but on another branch\n');
    const before = await snapshot(root);

    const result = await adapter.merge('loop/T-1', 'main', 'Merge T-1');
    expect(result.kind).toBe('merged');
    expect((await git(root, 'rev-parse', 'main')).trim()).toBe(result.kind === 'merged' ? result.commit : '');
    expect(await snapshot(root)).toEqual({ ...before, refs: await git(root, 'for-each-ref') });
    expect(existsSync(path.join(root, 'c.txt'))).toBe(false);
  });

  it('refuses when base is checked out in another worktree', async () => {
    await taskCommit('T-1', 'c.txt', 'c\n');
    await git(root, 'checkout', '-q', '-b', 'elsewhere');
    const other = await mkdtemp(path.join(os.tmpdir(), 'lf-other-'));
    temps.push(other);
    await git(root, 'worktree', 'add', '-q', path.join(other, 'wt'), 'main');
    const result = await adapter.merge('loop/T-1', 'main', 'Merge T-1');
    expect(result.kind).toBe('refused');
    expect(result.kind === 'refused' && result.reason).toContain(path.join(other, 'wt'));
  });

  it('refuses when the merge would overwrite an untracked or ignored file', async () => {
    await taskCommit('T-1', 'notes.txt', 'from the task\n');
    await write(path.join(root, 'notes.txt'), 'my own notes\n');
    const before = await snapshot(root);
    const result = await adapter.merge('loop/T-1', 'main', 'Merge T-1');
    expect(result.kind).toBe('refused');
    expect(result.kind === 'refused' && result.reason).toContain('notes.txt');
    expect(await snapshot(root)).toEqual(before);
    expect(await readFile(path.join(root, 'notes.txt'), 'utf8')).toBe('my own notes\n');

    await taskCommit('T-2', '.env', 'TASK=1\n');
    await write(path.join(root, '.git', 'info', 'exclude'), '.env\n');
    await write(path.join(root, '.env'), 'MINE=1\n');
    const ignored = await adapter.merge('loop/T-2', 'main', 'Merge T-2');
    expect(ignored.kind).toBe('refused');
    expect(await readFile(path.join(root, '.env'), 'utf8')).toBe('MINE=1\n');
  });

  it('rebases a task branch, and aborts a conflicting rebase leaving the branch unchanged', async () => {
    const dir = await taskCommit('T-1', 'c.txt', 'c\n');
    await write(path.join(root, 'd.txt'), 'd\n');
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'base moves');
    expect(await adapter.rebase(dir, 'main')).toBe(true);
    expect(await adapter.isMerged('main', 'loop/T-1')).toBe(true);
    expect(existsSync(path.join(dir, 'd.txt'))).toBe(true);

    await write(path.join(dir, 'a.txt'), 'task\n');
    await adapter.commitSnapshot(dir, 'T-1: a', []);
    await write(path.join(root, 'a.txt'), 'main\n');
    await git(root, 'commit', '-qam', 'main a');
    const head = (await git(dir, 'rev-parse', 'HEAD')).trim();
    expect(await adapter.rebase(dir, 'main')).toBe(false);
    expect((await git(dir, 'rev-parse', 'HEAD')).trim()).toBe(head);
    expect(await git(dir, 'status', '--porcelain')).toBe('');
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('task\n');
  });

  it('replays a conflicting branch onto base as uncommitted work with markers, keeping the old tip', async () => {
    const dir = await taskCommit('T-1', 'a.txt', 'a1\ntask\na3\n');
    await write(path.join(dir, 'new.txt'), 'added by the task\n');
    await rm(path.join(dir, 'b.txt'));
    await adapter.commitSnapshot(dir, 'T-1: more', []);
    const tip = (await git(dir, 'rev-parse', 'HEAD')).trim();
    await write(path.join(root, 'a.txt'), 'a1\nmain\na3\n');
    await git(root, 'commit', '-qam', 'main changes a2');
    const main = (await git(root, 'rev-parse', 'main')).trim();
    const before = await snapshot(root);

    const replay = await adapter.replayOnto(dir, 'main', 'refs/loopfleet/replayed/T-1');
    expect(replay.files).toEqual(['a.txt']);
    expect(replay.hunks['a.txt']).toEqual(['<<<<<<< main\nmain\n=======\ntask\n>>>>>>> loop/T-1']);
    // the branch is on base; the old tip is kept; the change is in the working tree, uncommitted
    expect((await git(dir, 'rev-parse', 'HEAD')).trim()).toBe(main);
    expect((await git(root, 'rev-parse', 'refs/loopfleet/replayed/T-1')).trim()).toBe(tip);
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe(
      'a1\n<<<<<<< main\nmain\n=======\ntask\n>>>>>>> loop/T-1\na3\n',
    );
    expect(await readFile(path.join(dir, 'new.txt'), 'utf8')).toBe('added by the task\n');
    expect(existsSync(path.join(dir, 'b.txt'))).toBe(false);
    expect(await git(dir, 'diff', '--cached', '--name-only')).toBe('');
    expect(
      (await git(dir, 'status', '--porcelain'))
        .split('\n')
        .filter((l) => l !== '')
        .sort(),
    ).toEqual([' D b.txt', ' M a.txt', '?? new.txt']);
    // no rebase, merge or cherry-pick state is left, and the person's checkout is untouched
    const admin = (await git(dir, 'rev-parse', '--absolute-git-dir')).trim();
    for (const f of ['rebase-merge', 'rebase-apply', 'MERGE_HEAD', 'CHERRY_PICK_HEAD'])
      expect(existsSync(path.join(admin, f)), f).toBe(false);
    const after = await snapshot(root);
    expect({ ...after, refs: '' }).toEqual({ ...before, refs: '' });
  });

  it('changes nothing when the replay cannot be checked out without overwriting an untracked file', async () => {
    const dir = await taskCommit('T-1', 'a.txt', 'a1\ntask\na3\n');
    await write(path.join(dir, 'c.txt'), 'the task adds c\n');
    await adapter.commitSnapshot(dir, 'T-1: c', []);
    const tip = (await git(dir, 'rev-parse', 'HEAD')).trim();
    await write(path.join(root, 'a.txt'), 'a1\nmain\na3\n');
    await git(root, 'commit', '-qam', 'main changes a2');
    // base adds d.txt, which the worktree holds untracked: checking out the merged tree would overwrite it
    await write(path.join(root, 'd.txt'), 'base d\n');
    await git(root, 'add', 'd.txt');
    await git(root, 'commit', '-qm', 'main adds d');
    await write(path.join(dir, 'd.txt'), 'untracked in the worktree\n');

    await expect(adapter.replayOnto(dir, 'main', 'refs/loopfleet/replayed/T-1')).rejects.toThrow(RefusedError);
    expect((await git(dir, 'rev-parse', 'HEAD')).trim()).toBe(tip);
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('a1\ntask\na3\n');
    expect(await readFile(path.join(dir, 'd.txt'), 'utf8')).toBe('untracked in the worktree\n');
    expect((await git(root, 'rev-parse', 'refs/loopfleet/replayed/T-1')).trim()).toBe(tip);
  });

  it('refuses to rebase a worktree with uncommitted changes, touching nothing', async () => {
    const dir = await taskCommit('T-1', 'c.txt', 'c\n');
    await write(path.join(root, 'd.txt'), 'd\n');
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'base moves');
    const head = (await git(dir, 'rev-parse', 'HEAD')).trim();
    await write(path.join(dir, 'a.txt'), 'being resolved\n');
    await expect(adapter.rebase(dir, 'main')).rejects.toThrow(RefusedError);
    expect((await git(dir, 'rev-parse', 'HEAD')).trim()).toBe(head);
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('being resolved\n');
    expect(await git(root, 'stash', 'list')).toBe('');
  });

  it('does not abort a rebase it did not start', async () => {
    const dir = await taskCommit('T-1', 'c.txt', 'c\n');
    const main = (await git(root, 'rev-parse', 'main')).trim();
    const admin = (await git(dir, 'rev-parse', '--absolute-git-dir')).trim();
    // state written by a command run in the worktree, aimed at another branch
    await write(path.join(admin, 'rebase-merge', 'head-name'), 'refs/heads/main\n');
    await write(path.join(admin, 'rebase-merge', 'orig-head'), `${(await git(dir, 'rev-parse', 'HEAD')).trim()}\n`);
    await expect(adapter.rebase(dir, 'main')).rejects.toThrow(RefusedError);
    expect((await git(root, 'rev-parse', 'main')).trim()).toBe(main);
  });

  it('commits a one-parent snapshot even when merge state was left in the worktree', async () => {
    const dir = await taskCommit('T-1', 'c.txt', 'c\n');
    const admin = (await git(dir, 'rev-parse', '--absolute-git-dir')).trim();
    const main = (await git(root, 'rev-parse', 'main')).trim();
    await write(path.join(admin, 'MERGE_HEAD'), `${main}\n`);
    await write(path.join(admin, 'MERGE_MSG'), 'not this message\n');
    await write(path.join(dir, 'd.txt'), 'd\n');
    const commit = (await adapter.commitSnapshot(dir, 'T-1: d', [])).commit;
    expect((await git(dir, 'log', '-1', '--format=%P|%s', commit ?? '')).trim().split('|')).toEqual([
      (await git(dir, 'rev-parse', 'HEAD~1')).trim(),
      'T-1: d',
    ]);
  });

  it('resets a task worktree hard, and never works in the user checkout', async () => {
    const dir = await taskCommit('T-1', 'c.txt', 'c\n');
    const base = (await git(root, 'rev-parse', 'main')).trim();
    await adapter.resetHard(dir, base);
    expect((await git(dir, 'rev-parse', 'HEAD')).trim()).toBe(base);
    expect(existsSync(path.join(dir, 'c.txt'))).toBe(false);
    await expect(adapter.resetHard(adapter.root, base)).rejects.toThrow(RefusedError);
    await expect(adapter.commitSnapshot(adapter.root, 'no', [])).rejects.toThrow(RefusedError);
  });

  it('keeps a discarded branch reachable through a ref, and deletes branches safely', async () => {
    const dir = await taskCommit('T-1', 'c.txt', 'c\n');
    const head = (await git(root, 'rev-parse', 'loop/T-1')).trim();
    await adapter.updateRef('refs/loopfleet/discarded/T-1', head);
    await adapter.removeWorktree(dir, true);
    expect(existsSync(dir)).toBe(false);

    await expect(adapter.deleteBranch('loop/T-1', false)).rejects.toThrow(RefusedError);
    expect(await adapter.branchExists('loop/T-1')).toBe(true);
    await adapter.deleteBranch('loop/T-1', true);
    expect(await adapter.branchExists('loop/T-1')).toBe(false);
    expect(await adapter.revParse('refs/loopfleet/discarded/T-1')).toBe(head);

    // merged branches go without force
    await taskCommit('T-2', 'd.txt', 'd\n');
    await adapter.merge('loop/T-2', 'main', 'Merge T-2');
    await adapter.removeWorktree(path.join(adapter.root, '.loop-worktrees', 'T-2'), false);
    await adapter.deleteBranch('loop/T-2', false);
    expect(await loopBranches()).toEqual([]);
  });

  it('lists worktrees, marks deleted ones prunable, prunes them', async () => {
    await taskCommit('T-1', 'c.txt', 'c\n');
    const dir2 = path.join(adapter.root, '.loop-worktrees', 'T-2');
    await adapter.addWorktree(dir2, 'loop/T-2', 'main');
    await rm(dir2, { recursive: true, force: true });

    const list = await adapter.listWorktrees();
    expect(list.map((w) => [w.path, w.branch, w.prunable])).toEqual([
      [adapter.root, 'main', false],
      [wt, 'loop/T-1', false],
      [dir2, 'loop/T-2', true],
    ]);
    expect(list[1]?.head).toMatch(/^[0-9a-f]{40}$/);
    expect(await loopBranches()).toEqual(['loop/T-1', 'loop/T-2']);

    await adapter.pruneWorktrees();
    expect((await adapter.listWorktrees()).map((w) => w.branch)).toEqual(['main', 'loop/T-1']);
    // removing a worktree that is already gone is not an error
    await adapter.removeWorktree(dir2, false);
  });

  it('adds an exclude pattern once', async () => {
    const exclude = path.join(root, '.git', 'info', 'exclude');
    await rm(path.join(root, '.git', 'info'), { recursive: true, force: true });
    await Promise.all([adapter.ensureExcluded('/.loop-worktrees/'), adapter.ensureExcluded('/.loop-worktrees/')]);
    await adapter.ensureExcluded('/.loop-worktrees/');
    expect(await readFile(exclude, 'utf8')).toBe('/.loop-worktrees/\n');
    await adapter.addWorktree(wt, 'loop/T-1', 'main');
    expect(await git(root, 'status', '--porcelain')).toBe('');
    expect((await stat(wt)).isDirectory()).toBe(true);
  });
});
