import { afterEach, describe, expect, it } from 'vitest';
import { findRepo } from '../../../src/commands/repo.js';
import { statusRows } from '../../../src/commands/status.js';
import { backlogRepo, openFleet } from '../../helpers/fleet-harness.js';
import { git } from '../../helpers/git-repo.js';
import { FakeAttemptQueue } from '../../helpers/fake-attempt-queue.js';
import { bareRemote, remoteServices, workerMachine } from '../../helpers/remote-harness.js';
import type { FakeScript, FakeTurn } from '../../helpers/fake-model.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const WORDS: Record<string, string> = { 'T-1': 'one', 'T-2': 'two', 'T-3': 'three', 'T-4': 'four' };
function deferred(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { promise, fire };
}

const PLAN = (what: string) => `1. Add ${what} to calc.js\n\n\`\`\`files\ncalc.js\n\`\`\``;

const writeOwnFile: FakeScript = ({ role, task }) =>
  role === 'implementer' ? { edits: { [`${WORDS[task]}.txt`]: `${task}\n` } } : {};

describe('attempts that run on workers', () => {
  it('lands every task verified through two workers, each branch fetched back into the coordinator and merged there', {
    timeout: 120_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'check: test -f one.txt -o -f two.txt -o -f three.txt\nreview: false\nconcurrency: 3',
      '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three',
    );
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const a = await workerMachine(cleanups, queue, remote, writeOwnFile, 'host-a');
    const b = await workerMachine(cleanups, queue, remote, writeOwnFile, 'host-b', 2);
    a.start();
    b.start();
    const traced = (taskId: string, attempt: number) =>
      `00-${'1'.repeat(31)}${taskId.slice(-1)}-${'2'.repeat(15)}${attempt}-01`;
    const h = await openFleet(root, writeOwnFile, { services: remoteServices(queue, remote, traced) });
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();

    const tasks = h.fleet.tasks();
    // each job carries the trace context of its attempt's span on the coordinator
    for (const t of tasks) expect(queue.job(`${t.id}:1`)!.job.traceparent).toBe(traced(t.id, 1));
    expect(tasks.map((t) => t.status)).toEqual(['verified', 'verified', 'verified']);
    expect(tasks.map((t) => t.attempts.map((x) => [x.outcome, x.reason]))).toEqual(
      tasks.map(() => [['verified', null]]),
    );
    // Nothing ran here: the coordinator's model was never called, the workers' were.
    expect(h.model.calls).toHaveLength(0);
    expect(a.model.calls.length + b.model.calls.length).toBe(6);
    expect(new Set(tasks.map((t) => t.worker))).toEqual(new Set([a.identity.id, b.identity.id]));
    for (const t of tasks) {
      expect([a.identity.id, b.identity.id]).toContain(t.worker);
      expect(t.attempts.map((x) => [x.outcome, x.reason])).toEqual([['verified', null]]);
      expect(t.usage).toEqual({ input: 200, output: 40, cacheWrite: 0, cacheRead: 0 });
      const local = await git(root, 'rev-parse', `loop/${t.id}`);
      expect(await git(remote, 'rev-parse', `loop/${t.id}`)).toBe(local);
      expect(t.attempts[0]!.commit).toBe(local);
      // the coordinator's worktree of the task is at the pushed commit, so its diff is the worker's change
      expect(await h.fleet.diff(t.id)).toContain(`+++ b/${WORDS[t.id]}.txt`);
    }
    expect(queue.enqueued.sort()).toEqual(['T-1:1', 'T-2:1', 'T-3:1']);

    const workers = new Map(tasks.map((t) => [t.id, t.worker]));
    const merged = await h.fleet.mergeAll();
    expect(merged.merged).toEqual(['T-1', 'T-2', 'T-3']);
    await h.session.close();
    // status --json says which worker ran each task
    const rows = await statusRows(await findRepo(root));
    expect(rows.map((r) => [r.id, r.status, r.worker])).toEqual(
      ['T-1', 'T-2', 'T-3'].map((id) => [id, 'merged', workers.get(id)]),
    );
    expect((await git(root, 'ls-tree', '--name-only', 'main')).split('\n')).toEqual(
      expect.arrayContaining(['one.txt', 'two.txt', 'three.txt']),
    );
  });

  it("a worker's plan that overlaps a running task's waits, answered by the coordinator, then implements on the base that has the other's change", {
    timeout: 120_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'check: "true"\nreview: false\nconcurrency: 2',
      '- [ ] T-1 One\n- [ ] T-2 Two',
      { 'calc.js': 'base\n' },
    );
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const oneImplementing = deferred();
    const twoWaiting = deferred();
    const seenByTwo: string[] = [];
    const script: FakeScript = ({ role, task, request }) => {
      if (role === 'explorer')
        return task === 'T-1' ? { text: PLAN('one') } : { text: PLAN('two'), until: oneImplementing.promise };
      if (role !== 'implementer') return {};
      const now = readFileSync(join(request.workdir, 'calc.js'), 'utf8');
      if (task === 'T-2') seenByTwo.push(now);
      const edits = { 'calc.js': `${now}${task === 'T-1' ? 'one' : 'two'}\n` };
      if (task !== 'T-1') return { edits };
      oneImplementing.fire();
      return { edits, until: twoWaiting.promise };
    };
    const w = await workerMachine(cleanups, queue, remote, script, 'host-a', 2);
    w.start();
    const h = await openFleet(root, script, { autoMerge: true, services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    h.fleet.events.on('task', ({ task }) => {
      if (task.id === 'T-2' && task.waitingFor != null) twoWaiting.fire();
    });
    h.fleet.start();
    await h.fleet.whenIdle();

    expect(h.fleet.task('T-1')!.status).toBe('merged');
    const two = h.fleet.task('T-2')!;
    expect(two.status).toBe('merged');
    expect(
      two.attempts.some((a) => a.outcome === 'interrupted' && /waiting: overlaps T-1 on calc.js/.test(a.reason ?? '')),
    ).toBe(true);
    expect(two.attempts.filter((a) => a.n > 0).map((a) => a.outcome)).toEqual(['verified']);
    expect(w.model.calls.filter((c) => c.task === 'T-2').map((c) => c.role)).toEqual(['explorer', 'implementer']);
    expect(seenByTwo).toEqual(['base\none\n']);
    expect(await git(root, 'show', 'main:calc.js')).toBe('base\none\ntwo');
    // the plan was answered over the queue: T-2's first job carries the question and its answer
    const first = queue.job('T-2:1')!;
    const asked = first.events.find((e) => e.event.kind === 'planned')!.event as { request: string };
    expect(first.messages).toContainEqual({
      kind: 'plan-answer',
      request: asked.request,
      blocker: { id: 'T-1', files: ['calc.js'] },
    });
  });

  it('a later attempt on another worker builds on the branch the first attempt pushed, as a local one builds on its worktree', {
    timeout: 120_000,
  }, async () => {
    const root = await backlogRepo(cleanups, 'check: test -f done.txt\nreview: false', '- [ ] T-1 One');
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const foundByTwo: boolean[] = [];
    let a: Awaited<ReturnType<typeof workerMachine>> | null = null;
    const script: FakeScript = ({ role, attempt, request }): FakeTurn => {
      if (role !== 'implementer') return {};
      if (attempt === 1) {
        // host-a takes no job after this one: the next attempt runs on host-b
        void a!.queue.setRefusing('taking no more jobs');
        return { edits: { 'first.txt': 'attempt 1\n' } };
      }
      foundByTwo.push(existsSync(join(request.workdir, 'first.txt')));
      return { edits: { 'done.txt': 'attempt 2\n' } };
    };
    a = await workerMachine(cleanups, queue, remote, script, 'host-a');
    const b = await workerMachine(cleanups, queue, remote, script, 'host-b');
    a.start();
    b.start();
    const h = await openFleet(root, script, { services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();

    const t = h.fleet.task('T-1')!;
    expect(t.attempts.map((x) => x.outcome)).toEqual(['check-failed', 'verified']);
    expect(queue.job('T-1:1')!.events[0]!.event).toMatchObject({ kind: 'claimed', worker: { id: 'host-a-1' } });
    expect(queue.job('T-1:2')!.events[0]!.event).toMatchObject({ kind: 'claimed', worker: { id: 'host-b-1' } });
    // attempt 2's job named attempt 1's commit, and host-b started from it
    expect(queue.job('T-1:2')!.job.branchCommit).toBe(t.attempts[0]!.commit);
    expect(foundByTwo).toEqual([true]);
    expect(await git(root, 'rev-parse', 'loop/T-1~1')).toBe(t.attempts[0]!.commit);
    expect((await git(root, 'ls-tree', '--name-only', 'loop/T-1')).split('\n')).toEqual(
      expect.arrayContaining(['first.txt', 'done.txt']),
    );
  });
});
