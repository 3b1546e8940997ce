import { describe, expect, it } from 'vitest';
import { RefusedError } from '../../../src/domain/errors.js';
import {
  allowedCommands,
  canRun,
  commandRefusal,
  statusWhenTicked,
  TASK_COMMANDS,
} from '../../../src/domain/task-rules.js';
import { TASK_STATUSES, type TaskStatus } from '../../../src/domain/types.js';
import { fakeEngine, runToIdle, type FakeEngine } from '../../helpers/fake-engine.js';
import { FakeGit } from '../../helpers/fake-git.js';

/** T-1 verified on its branch, T-2 failed at its attempts gate; the fleet idle, as the TUI leaves it. */
async function finished(): Promise<FakeEngine> {
  let e!: FakeEngine;
  e = await fakeEngine('check: the-check', '- [ ] T-1 One\n- [ ] T-2 Two\n  attempts: 1', {
    script: ({ role, task }) => (role === 'implementer' ? { edits: { [`${task}.txt`]: `${task}\n` } } : {}),
    run: (_c, o) => ({ exitCode: e.git.files(o.cwd).has('T-1.txt') ? 0 : 1, output: 'checked\n' }),
  });
  e.fleet.start();
  await e.fleet.whenIdle();
  expect(e.fleet.task('T-1')!.status).toBe('verified');
  expect(e.fleet.task('T-2')!.status).toBe('failed');
  e.seen.length = 0;
  return e;
}

const taskEvents = (e: FakeEngine) =>
  e.seen
    .filter((s) => s.name === 'task')
    .map((s) => {
      const p = s.payload as { task: { id: string; status: string }; previousStatus: string | null };
      return `${p.task.id}:${p.previousStatus}->${p.task.status}`;
    });

describe('the command table', () => {
  it('is the one the TUI and the engine read: merge verified; discard verified, failed, conflict; retry failed, conflict, discarded; approve a plan', () => {
    const table = Object.fromEntries(TASK_COMMANDS.map((c) => [c, TASK_STATUSES.filter((s) => canRun(c, s))]));
    expect(table).toEqual({
      merge: ['verified'],
      discard: ['awaiting-approval', 'verified', 'failed', 'conflict'],
      retry: ['discarded', 'failed', 'conflict'],
      approve: ['awaiting-approval'],
    });
    expect(allowedCommands('conflict')).toEqual(['discard', 'retry']);
    expect(allowedCommands('running')).toEqual([]);
    expect(commandRefusal('retry', 'T-3', 'verified')).toBe(
      'T-3 is verified: only failed, conflict or discarded tasks can be retried',
    );
  });

  it('says done means merged, except while running', () => {
    const cases: Array<[boolean, TaskStatus | undefined, TaskStatus]> = [
      [true, undefined, 'merged'],
      [false, undefined, 'queued'],
      [true, 'failed', 'merged'],
      [true, 'running', 'running'],
      [false, 'failed', 'failed'],
    ];
    for (const [done, status, expected] of cases) expect(statusWhenTicked(done, status)).toBe(expected);
  });
});

describe('fleet actions by status', () => {
  it('merges a verified task: merge commit on base, worktree and branch removed, item ticked, one event', async () => {
    const e = await finished();
    await e.fleet.merge('T-1');
    expect(e.fleet.task('T-1')).toMatchObject({ status: 'merged', reason: null, phase: null });
    expect(e.git.show('main', 'T-1.txt')).toBe('T-1\n');
    expect(await e.git.branchExists('loop/T-1')).toBe(false);
    expect(e.git.hasWorktree('/repo/.loop-worktrees/T-1')).toBe(false);
    expect(e.ticked).toEqual(['T-1']);
    expect(taskEvents(e)).toEqual(['T-1:verified->merged']);
    expect(e.fleet.ranThisRun.has('T-1')).toBe(true);
  });

  it('refuses to merge a task that is not verified, touching nothing', async () => {
    const e = await finished();
    const calls = e.git.calls.length;
    await expect(e.fleet.merge('T-2')).rejects.toThrow(
      new RefusedError('T-2 is failed: only verified tasks can be merged'),
    );
    expect(e.git.calls.length).toBe(calls);
    expect(taskEvents(e)).toEqual([]);
  });

  it('refuses a merge into a dirty checkout and keeps the task verified', async () => {
    const e = await finished();
    e.git.dirty = ['README.md'];
    await expect(e.fleet.merge('T-1')).rejects.toThrow(/merge of T-1 refused: uncommitted changes in README.md/);
    expect(e.fleet.task('T-1')!.status).toBe('verified');
  });

  it('marks a merge conflict, then a retry rebases and verifies again without the implementer', async () => {
    const e = await finished();
    e.git.mergeConflicts.add('loop/T-1');
    await e.fleet.merge('T-1');
    expect(e.fleet.task('T-1')).toMatchObject({ status: 'conflict' });
    expect(e.fleet.task('T-1')!.reason).toMatch(/conflicts in shared.txt; main is untouched/);
    const calls = e.model.calls.length;
    await e.fleet.retry('T-1');
    await e.fleet.whenIdle();
    await e.fleet.stop();
    expect(e.fleet.task('T-1')!.status).toBe('verified');
    expect(e.model.calls.slice(calls).map((c) => c.role)).toEqual(['verifier']);
    expect(taskEvents(e)).toContain('T-1:conflict->queued');
  });

  it('a conflict whose rebase conflicts is replayed onto base with markers, and a new attempt resolves them', async () => {
    const seenByImplementer: Array<{ attempt: number; shared: string | undefined; prompt: string }> = [];
    let e!: FakeEngine;
    e = await fakeEngine('check: the-check', '- [ ] T-1 One', {
      script: ({ role, attempt, request }) => {
        if (role !== 'implementer') return {};
        seenByImplementer.push({
          attempt,
          shared: e.git.files(request.workdir).get('shared.txt'),
          prompt: request.prompt,
        });
        return { edits: { 'shared.txt': attempt === 1 ? 'task line\n' : 'base line\ntask line\n' } };
      },
      run: (_c, o) => ({
        exitCode: (e.git.files(o.cwd).get('shared.txt') ?? '').includes('<<<<<<<') ? 1 : 0,
        output: 'checked\n',
      }),
      git: new FakeGit('/repo', { 'README.md': 'hello\n', 'shared.txt': 'original\n' }),
    });
    e.fleet.start();
    await e.fleet.whenIdle();
    const tip = await e.git.revParse('refs/heads/loop/T-1');
    e.git.commitOn('main', { 'shared.txt': 'base line\n' });
    e.git.mergeConflicts.add('loop/T-1');
    e.git.rebaseConflicts.add('loop/T-1');
    await e.fleet.merge('T-1');
    expect(e.fleet.task('T-1')!.status).toBe('conflict');
    expect(e.fleet.task('T-1')!.conflicts).toEqual([{ with: 'main', files: ['shared.txt'], hunks: [] }]);

    await e.fleet.retry('T-1');
    // the branch as it was is kept; the worktree holds the change on base, with markers where it conflicts
    expect(await e.git.revParse('refs/loopfleet/replayed/T-1')).toBe(tip);
    expect(e.fleet.task('T-1')).toMatchObject({ verifyOnly: false, conflicts: [] });
    await e.fleet.whenIdle();
    await e.fleet.stop();
    expect(e.fleet.task('T-1')!.status).toBe('verified');
    const second = seenByImplementer.at(-1)!;
    expect(second.attempt).toBe(2);
    expect(second.shared).toBe('<<<<<<< main\nbase line\n=======\ntask line\n>>>>>>> loop/T-1\n');
    expect(second.prompt).toContain('Conflicts in: shared.txt');
    expect(second.prompt).toContain('refs/loopfleet/replayed/T-1');
    expect(e.git.show('loop/T-1', 'shared.txt')).toBe('base line\ntask line\n');
    expect(await e.git.isMerged('main', 'loop/T-1')).toBe(true);
    expect(taskEvents(e)).toContain('T-1:conflict->queued');
    // discarding it now names both refs: the resolved branch, and the change as it was before the replay
    await e.fleet.discard('T-1');
    expect(e.fleet.task('T-1')!.reason).toBe(
      'discarded; recover with: git branch loop/T-1 refs/loopfleet/discarded/T-1; before its conflict was replayed: refs/loopfleet/replayed/T-1',
    );
  });

  it('the merge queue replays a branch whose rebase conflicts and sends it back; a replay git refuses sends back the hunks to read', async () => {
    let e!: FakeEngine;
    e = await fakeEngine('check: the-check', '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three', {
      script: ({ role, task }) => (role === 'implementer' ? { edits: { 'shared.txt': `${task}\n` } } : {}),
      run: () => ({ exitCode: 0, output: 'checked\n' }),
      git: new FakeGit('/repo', { 'README.md': 'hello\n', 'shared.txt': 'original\n' }),
    });
    e.fleet.start();
    await e.fleet.whenIdle();
    for (const b of ['loop/T-2', 'loop/T-3']) e.git.rebaseConflicts.add(b);
    e.git.mergeConflicts.add('loop/T-3');
    e.git.replayRefusals.add('loop/T-3');
    const result = await e.fleet.mergeAll();
    expect(result.merged).toEqual(['T-1']);
    expect(result.sentBack.map((s) => s.id)).toEqual(['T-2', 'T-3']);
    // the fleet runs: the sent-back tasks start their next attempt at once, told the evidence
    await e.fleet.whenIdle();
    const told = (id: string) => e.model.calls.filter((c) => c.task === id && c.role === 'implementer').at(-1)!.prompt;
    expect(told('T-2')).toContain('Conflicts in: shared.txt');
    expect(told('T-2')).toContain('<<<<<<< main\nT-1\n=======\nT-2\n>>>>>>> loop/T-2');
    expect(told('T-3')).toContain('Conflicts in: shared.txt.');
    expect(told('T-3')).toContain('The branch could not be replayed onto main');
    expect(
      e.seen.some(
        (s) =>
          s.name === 'log' && String((s.payload as { message: string }).message).startsWith('cannot replay loop/T-3'),
      ),
    ).toBe(true);
    await e.fleet.stop();
  });

  it('discards verified, failed and conflict tasks keeping a recoverable ref; refuses the rest', async () => {
    const e = await finished();
    const tip = await e.git.revParse('refs/heads/loop/T-2');
    await e.fleet.discard('T-2');
    expect(e.fleet.task('T-2')).toMatchObject({
      status: 'discarded',
      branch: null,
      reason: 'discarded; recover with: git branch loop/T-2 refs/loopfleet/discarded/T-2',
    });
    expect(await e.git.revParse('refs/loopfleet/discarded/T-2')).toBe(tip);
    expect(await e.git.branchExists('loop/T-2')).toBe(false);
    await expect(e.fleet.discard('T-2')).rejects.toThrow(
      'T-2 is discarded: only verified, failed, conflict or awaiting-approval tasks can be discarded',
    );
    await e.fleet.merge('T-1');
    await expect(e.fleet.discard('T-1')).rejects.toThrow(
      'T-1 is merged: only verified, failed, conflict or awaiting-approval tasks can be discarded',
    );
  });

  it('retries failed and discarded tasks with a fresh budget; refuses verified, merged and queued ones', async () => {
    const e = await finished();
    await expect(e.fleet.retry('T-1')).rejects.toThrow(
      'T-1 is verified: only failed, conflict or discarded tasks can be retried',
    );
    e.fleet.pause(); // so the retried task stays queued
    await e.fleet.retry('T-2');
    expect(e.fleet.task('T-2')).toMatchObject({ status: 'queued', gate: null, reason: null });
    expect(taskEvents(e)).toEqual(['T-2:failed->queued']);
    expect(e.fleet.task('T-2')!.budget.fromAttempt).toBe(1);
    await expect(e.fleet.retry('T-2')).rejects.toThrow(
      'T-2 is queued: only failed, conflict or discarded tasks can be retried',
    );
    await expect(e.fleet.retry('T-9')).rejects.toThrow('no task T-9 in this fleet');
  });

  it('sends each status change to notify, in order', async () => {
    const e = await fakeEngine('check: "true"\nconcurrency: 1', '- [ ] T-1 One', {
      notify: true,
      script: ({ role }) => (role === 'implementer' ? { edits: { 'a.txt': 'a' } } : {}),
    });
    await runToIdle(e);
    expect(e.notified.map((n) => n.status ?? n.event)).toEqual(['running', 'verified', 'idle']);
    expect(e.notified[1]).toMatchObject({
      event: 'status',
      id: 'T-1',
      status: 'verified',
      previousStatus: 'running',
      branch: 'loop/T-1',
    });
  });
});

describe('a merge that the backlog watcher overtakes', () => {
  it('merges once when the [x] the merge commit carries is seen before the merge has finished', async () => {
    let e!: FakeEngine;
    class TickSeenEarly extends FakeGit {
      override async merge(...args: Parameters<FakeGit['merge']>) {
        const result = await super.merge(...args);
        // The checkout's BACKLOG.md now has the tick: the watcher hands the fleet a backlog with T-1 done.
        e.fleet.applyBacklog({
          ...e.backlog,
          tasks: e.backlog.tasks.map((t) => (t.id === 'T-1' ? { ...t, done: true } : t)),
        });
        return result;
      }
    }
    e = await fakeEngine('check: the-check', '- [ ] T-1 One', {
      git: new TickSeenEarly('/repo'),
      script: ({ role }) => (role === 'implementer' ? { edits: { 'one.txt': '1\n' } } : {}),
    });
    e.fleet.start();
    await e.fleet.whenIdle();
    expect(e.fleet.task('T-1')!.status).toBe('verified');
    await e.fleet.merge('T-1');
    expect(e.fleet.task('T-1')!.status).toBe('merged');
    expect(taskEvents(e).filter((t) => t.endsWith('->merged'))).toEqual(['T-1:verified->merged']);
  });
});
