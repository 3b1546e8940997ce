import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog, openFleet, reopen, runFleet } from '../../helpers/fleet-harness.js';
import { git, makeRepo, read, writeFiles } from '../../helpers/git-repo.js';
import { readState } from '../../helpers/state-file.js';

const PASS_CHECK = 'test -f done.txt';
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups) await c();
  cleanups = [];
});

async function repo(front: string, items: string, files: Record<string, string> = {}) {
  const r = await makeRepo({ 'BACKLOG.md': backlog(front, items), 'README.md': 'hello\n', ...files });
  cleanups.push(r.cleanup);
  return r.root;
}

describe('the fleet on a real repository', () => {
  it('runs a task to verified on its own branch and worktree, leaving the checkout alone', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Write done.txt\n  Put the word done in it.');
    const { fleet, model } = await runFleet(root, ({ role }) =>
      role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {},
    );
    const t = fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.branch).toBe('loop/T-1');
    expect(model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer', 'verifier']);
    expect(model.calls[1]!.prompt).toContain('Put the word done in it.');
    expect(await git(root, 'show', 'loop/T-1:done.txt')).toBe('done');
    expect(await git(root, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(root, '.loop-worktrees', 'T-1', 'done.txt'))).toBe(true);
    expect(await readFile(join(root, '.git', 'info', 'exclude'), 'utf8')).toContain('/.loop-worktrees/');
    const state = await readState(root);
    expect(state.tasks['T-1'].status).toBe('verified');
    expect(state.tasks['T-1'].attempts[0].check.exitCode).toBe(0);
    expect(state.tasks['T-1'].attempts[0].verdict).toEqual({ pass: true, reasons: ['looks right'] });
    expect(existsSync(join(root, '.loop-worktrees', 'logs', 'T-1', '1.jsonl'))).toBe(true);
    expect(existsSync(join(root, '.loop-worktrees', 'fleet.lock'))).toBe(false);
  });
});

describe('merge, conflict, discard', () => {
  it('merges a verified branch with a merge commit, ticks the item and removes worktree and branch', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Write done.txt\n- [ ] Item without id');
    await runFleet(root, ({ role, task }) =>
      role === 'implementer' ? { edits: { 'done.txt': 'done\n', [`${task}.txt`]: task } } : {},
    );
    const backlogText = await read(root, 'BACKLOG.md');
    expect(backlogText).toContain('- [ ] T-2 Item without id');
    const h = await reopen(root);
    await h.fleet.merge('T-1');
    await h.session.close();
    expect(h.fleet.task('T-1')!.status).toBe('merged');
    expect(await git(root, 'log', '-1', '--format=%P%n%s', 'main')).toMatch(
      /^\w+ \w+\nMerge loop\/T-1: T-1 Write done.txt/,
    );
    expect(await read(root, 'done.txt')).toBe('done\n');
    expect(await read(root, 'BACKLOG.md')).toContain('- [x] T-1 Write done.txt');
    expect(existsSync(join(root, '.loop-worktrees', 'T-1'))).toBe(false);
    expect(await git(root, 'branch', '--list', 'loop/T-1')).toBe('');
  });

  it('refuses a merge into a dirty checkout and touches nothing', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Write done.txt');
    await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {}));
    await writeFiles(root, { 'README.md': 'my unsaved work\n' });
    const head = await git(root, 'rev-parse', 'main');
    const h = await reopen(root);
    await expect(h.fleet.merge('T-1')).rejects.toThrow(/refused/);
    await h.session.close();
    expect(await read(root, 'README.md')).toBe('my unsaved work\n');
    expect(await git(root, 'rev-parse', 'main')).toBe(head);
    expect(h.fleet.task('T-1')!.status).toBe('verified');
  });

  it('marks the second of two conflicting tasks conflict, leaving base exactly as it was', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One\n- [ ] T-2 Two', { 'shared.txt': 'original\n' });
    await runFleet(root, ({ role, task }) =>
      role === 'implementer' ? { edits: { 'done.txt': 'x', 'shared.txt': `changed by ${task}\n` } } : {},
    );
    const h = await reopen(root);
    await h.fleet.merge('T-1');
    const head = await git(root, 'rev-parse', 'main');
    const status = await git(root, 'status', '--porcelain');
    await h.fleet.merge('T-2');
    expect(h.fleet.task('T-2')!.status).toBe('conflict');
    expect(h.fleet.task('T-2')!.reason).toMatch(/conflicts in .*shared.txt/);
    expect(await git(root, 'rev-parse', 'main')).toBe(head);
    expect(await git(root, 'status', '--porcelain')).toBe(status);
    expect(await read(root, 'shared.txt')).toBe('changed by T-1\n');
    // retry rebases; the rebase conflicts too, so the branch is replayed onto base for a new attempt, its
    // old tip kept
    await h.fleet.retry('T-2');
    expect(h.fleet.task('T-2')).toMatchObject({
      status: 'queued',
      reason: 'replayed onto the new base with conflict markers; a new attempt resolves them',
    });
    expect(await git(root, 'show', 'refs/loopfleet/replayed/T-2:shared.txt')).toBe('changed by T-2');
    expect(await git(root, 'rev-parse', 'loop/T-2')).toBe(head);
    expect(await read(root, '.loop-worktrees/T-2/shared.txt')).toBe(
      '<<<<<<< main\nchanged by T-1\n=======\nchanged by T-2\n>>>>>>> loop/T-2\n',
    );
    await h.session.close();
  });

  it('discards a task keeping a recoverable ref', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 Write done.txt');
    await runFleet(root, ({ role }) => (role === 'implementer' ? { edits: { 'done.txt': 'done\n' } } : {}));
    const tip = await git(root, 'rev-parse', 'loop/T-1');
    const h = await reopen(root);
    await h.fleet.discard('T-1');
    await h.session.close();
    expect(h.fleet.task('T-1')!.status).toBe('discarded');
    expect(await git(root, 'rev-parse', 'refs/loopfleet/discarded/T-1')).toBe(tip);
    expect(await git(root, 'branch', '--list', 'loop/T-1')).toBe('');
    expect(existsSync(join(root, '.loop-worktrees', 'T-1'))).toBe(false);
    expect(await read(root, 'BACKLOG.md')).toContain('- [ ] T-1');
  });
});

describe('resume and locking', () => {
  it('refuses a second fleet on the same repository, naming the pid', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One');
    const first = await openFleet(root, () => ({}));
    await expect(openFleet(root, () => ({}))).rejects.toThrow(new RegExp(`pid ${process.pid}|another loopfleet`));
    await first.session.close();
  });
});

describe('retrying a conflict', () => {
  it('rebases the branch onto the new base and verifies it again without calling the implementer', async () => {
    const root = await repo(`check: ${PASS_CHECK}`, '- [ ] T-1 One\n- [ ] T-2 Two', { 'shared.txt': 'original\n' });
    await runFleet(root, ({ role, task }) =>
      role === 'implementer'
        ? { edits: { 'done.txt': 'x', 'shared.txt': `changed by ${task}\n`, [`${task}.txt`]: task } }
        : {},
    );
    const h = await openFleet(root, () => ({ text: '{"pass":true,"reasons":["still right after the rebase"]}' }));
    await h.fleet.merge('T-1');
    await h.fleet.merge('T-2');
    expect(h.fleet.task('T-2')!.status).toBe('conflict');
    // The person settles it on base: T-1's line goes back, so T-2's change applies again.
    await writeFiles(root, { 'shared.txt': 'original\n' });
    await git(root, 'commit', '-qam', 'back to the original line');
    h.fleet.start();
    await h.fleet.retry('T-2');
    await h.fleet.whenIdle();
    const t = h.fleet.task('T-2')!;
    expect(t.status).toBe('verified');
    expect(t.attempts.at(-1)!.verdict!.reasons).toEqual(['still right after the rebase']);
    expect(h.model.calls.map((c) => c.role)).toEqual(['verifier']);
    await h.fleet.merge('T-2');
    await h.session.close();
    expect(await read(root, 'shared.txt')).toBe('changed by T-2\n');
    expect(await read(root, 'T-1.txt')).toBe('T-1');
  });
});
