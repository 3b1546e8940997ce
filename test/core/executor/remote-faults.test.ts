import { afterEach, describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { RemoteBranches } from '../../../src/core/executor/remote-branches.js';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';
import { FsWorkspace } from '../../../src/adapters/workspace/fs-workspace.js';
import type { WorkerEvent } from '../../../src/ports/attempt-queue.js';
import { attemptJob } from '../../helpers/attempt-job.js';
import type { FakeScript } from '../../helpers/fake-model.js';
import { backlog, backlogRepo, openFleet } from '../../helpers/fleet-harness.js';
import { git } from '../../helpers/git-repo.js';
import { FakeAttemptQueue } from '../../helpers/fake-attempt-queue.js';
import { bareRemote, remoteServices, workerMachine } from '../../helpers/remote-harness.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const WORDS: Record<string, string> = { 'T-1': 'one', 'T-2': 'two', 'T-3': 'three', 'T-4': 'four' };
const writeOwnFile: FakeScript = ({ role, task }) =>
  role === 'implementer' ? { edits: { [`${WORDS[task]}.txt`]: `${task}\n` } } : {};

/** Settles when the call's signal aborts: a model call that runs until the coordinator stops it. */
function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

function deferred(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { promise, fire };
}

function logsOf(h: { fleet: { events: { on(e: 'log', f: (p: { message: string }) => void): unknown } } }): string[] {
  const logs: string[] = [];
  h.fleet.events.on('log', ({ message }) => logs.push(message));
  return logs;
}

describe('remote attempts under faults', () => {
  it('books a redelivered event once: acknowledgements lost, usage and the worker counted as if each came once', {
    timeout: 90_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'check: "true"\nreview: false\nconcurrency: 2',
      '- [ ] T-1 One\n- [ ] T-2 Two',
    );
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const lost = (kind: WorkerEvent['kind']) =>
      kind === 'claimed' || kind === 'agent' || kind === 'pushed' || kind === 'planned';
    queue.loseAcks((_, d) => lost(d.event.kind));
    const w = await workerMachine(cleanups, queue, remote, writeOwnFile, 'host-a', 2);
    w.start();
    const h = await openFleet(root, writeOwnFile, { services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    const logs = logsOf(h);
    h.fleet.start();
    await h.fleet.whenIdle();

    for (const id of ['T-1', 'T-2']) {
      const t = h.fleet.task(id)!;
      expect(t.attempts.map((a) => [a.outcome, a.reason])).toEqual([['verified', null]]);
      expect(t.usage).toEqual({ input: 200, output: 40, cacheWrite: 0, cacheRead: 0 });
      const record = queue.job(`${id}:1`)!;
      const redelivered = record.events.filter((e) => lost(e.event.kind)).map((e) => `${id}:1#${e.seq}`);
      expect(redelivered.length).toBeGreaterThanOrEqual(5);
      for (const key of redelivered) expect(queue.delivered.filter((d) => d === key)).toHaveLength(2);
      // every event acknowledged, each exactly once in the end
      expect(queue.acks.filter((a) => a.startsWith(`${id}:1#`)).sort()).toEqual(
        record.events.map((e) => `${id}:1#${e.seq}`).sort(),
      );
    }
    expect(h.fleet.summary().totals.usage).toEqual({ input: 400, output: 80, cacheWrite: 0, cacheRead: 0 });
    expect(logs.filter((l) => l.includes('restarts on worker'))).toEqual([]);
  });

  it('a fleet gate tripped by usage from one worker aborts every running remote attempt and cancels the queued one', {
    timeout: 90_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'check: "true"\nreview: false\nconcurrency: 4\ngates:\n  fleet_tokens: 800',
      '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three\n- [ ] T-4 Four',
    );
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const implementing: string[] = [];
    // Three attempts run on the worker at once; the third implementer's usage takes the fleet over its gate
    // while the other two are inside their calls. The fourth job waits: the worker has three slots.
    const script: FakeScript = ({ role, task, request }) => {
      if (role !== 'implementer') return {};
      implementing.push(task);
      if (implementing.length === 3) return { usage: { input: 1000, output: 0, cacheWrite: 0, cacheRead: 0 } };
      return { until: untilAborted(request.signal) };
    };
    const w = await workerMachine(cleanups, queue, remote, script, 'host-a', 3);
    w.start();
    const h = await openFleet(root, script, { services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();
    await queue.until(() => w.queue.running.size === 0);

    expect(h.fleet.stoppedBy).toBe('fleet_tokens');
    expect(h.fleet.tasks().map((t) => t.status)).toEqual(['queued', 'queued', 'queued', 'queued']);
    for (const t of h.fleet.tasks())
      expect(t.attempts.map((a) => [a.outcome, a.outcome === 'interrupted' ? null : a.reason])).toEqual([
        ['interrupted', null],
      ]);
    expect(implementing).toHaveLength(3);
    const cancelled = new Map(queue.cancelled.map((c) => [c.jobId, c]));
    expect([...cancelled.keys()].sort()).toEqual(['T-1:1', 'T-2:1', 'T-3:1', 'T-4:1']);
    const waiting = [...cancelled.values()].filter((c) => c.state === 'waiting');
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.error).toMatchObject({ kind: 'gate', detail: { gate: 'fleet_tokens', scope: 'fleet' } });
    expect(queue.job(waiting[0]!.jobId)!.taken).toBe(0);
    expect(await queue.depth()).toBe(0);
    // the two attempts stopped inside their model calls ended on the worker with the coordinator's gate
    for (const task of implementing.slice(0, 2)) {
      expect(queue.job(`${task}:1`)!.events.at(-1)!.event).toMatchObject({
        kind: 'failed',
        error: { kind: 'gate', detail: { gate: 'fleet_tokens' } },
      });
    }
  });

  it('a worker that dies mid-attempt hands its job back: the attempt restarts on another worker, its spending kept, one attempt charged', {
    timeout: 90_000,
  }, async () => {
    const root = await backlogRepo(cleanups, 'check: "true"\nreview: false', '- [ ] T-1 One');
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const aImplementing = deferred();
    const a = await workerMachine(
      cleanups,
      queue,
      remote,
      ({ role, request }) => {
        if (role !== 'implementer') return {};
        aImplementing.fire();
        return { until: untilAborted(request.signal) };
      },
      'host-a',
    );
    const b = await workerMachine(cleanups, queue, remote, writeOwnFile, 'host-b');
    a.start();
    const h = await openFleet(root, writeOwnFile, { services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    const logs = logsOf(h);
    h.fleet.start();
    await aImplementing.promise;
    // The explorer's usage on host-a is booked (its event acknowledged) before host-a dies.
    await queue.until(() => h.fleet.task('T-1')!.usage.input === 100);
    expect(h.fleet.task('T-1')!.worker).toBe(a.identity.id);
    await a.queue.close(false);
    b.start();
    await h.fleet.whenIdle();

    const t = h.fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.attempt).toBe(1);
    expect(t.attempts.map((x) => [x.n, x.outcome])).toEqual([[1, 'verified']]);
    expect(t.worker).toBe(b.identity.id);
    // host-a's explorer, then host-b's explorer and implementer
    expect(t.usage).toEqual({ input: 300, output: 60, cacheWrite: 0, cacheRead: 0 });
    expect(queue.enqueued).toEqual(['T-1:1']);
    expect(queue.job('T-1:1')!.taken).toBe(2);
    expect(
      logs.filter((l) => l.includes('restarts on worker host-b-1: worker host-a-1 stopped running it')),
    ).toHaveLength(1);
    expect(await git(remote, 'rev-parse', 'loop/T-1')).toBe(await git(root, 'rev-parse', 'loop/T-1'));
    expect(a.model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer']);
    expect(b.model.calls.map((c) => c.role)).toEqual(['explorer', 'implementer']);
  });

  it('a push whose lease went stale is reported as failed, never forced over the branch another worker pushed', {
    timeout: 60_000,
  }, async () => {
    const text = backlog('check: "true"\nreview: false', '- [ ] T-1 One');
    const root = await backlogRepo(cleanups, 'check: "true"\nreview: false', '- [ ] T-1 One');
    const remote = await bareRemote(cleanups, root);
    const other = await git(root, 'commit-tree', '-m', 'pushed by another worker', 'main^{tree}', '-p', 'main');
    const queue = new FakeAttemptQueue();
    // While this attempt implements, another worker pushes loop/T-1: this job's lease (no branch) is stale.
    const w = await workerMachine(
      cleanups,
      queue,
      remote,
      (call) => {
        if (call.role !== 'implementer') return {};
        return { ...writeOwnFile(call), until: git(root, 'push', '--quiet', remote, `${other}:refs/heads/loop/T-1`) };
      },
      'host-a',
    );
    w.start();
    const coordinatorGit = new SimpleGitAdapter(root);
    const published = await new RemoteBranches({
      git: coordinatorGit,
      workspace: new FsWorkspace(`${root}/.loop-worktrees`),
      remote: 'origin',
    }).publish('main', 'loop/T-1');
    const parsed = parseBacklog(text, `${root}/BACKLOG.md`).backlog;
    const job = attemptJob('T-1', 1, {
      remoteUrl: remote,
      baseCommit: published.baseCommit,
      branchCommit: published.branchCommit,
      spec: parsed.tasks[0]!,
      config: parsed.config,
    });
    expect(published.branchCommit).toBeNull();
    await queue.enqueue(job);
    const events: WorkerEvent[] = [];
    for await (const { seq, event } of queue.events('T-1:1', new AbortController().signal)) {
      events.push(event);
      if (event.kind === 'planned')
        await queue.send('T-1:1', { kind: 'plan-answer', request: event.request, blocker: null });
      await queue.ack('T-1:1', seq);
    }

    expect(events.map((e) => e.kind)).not.toContain('pushed');
    expect(events.at(-1)).toMatchObject({ kind: 'failed', error: { kind: 'error' } });
    expect((events.at(-1) as { error: { message: string } }).error.message).toMatch(
      /^loop\/T-1 was not pushed: the remote refused the lease .*another worker pushed it/,
    );
    expect(await git(remote, 'rev-parse', 'loop/T-1')).toBe(other);
  });

  it('an attempt interrupted by a fleet stop runs again as a job of its own, the interrupted job cancelled', {
    timeout: 90_000,
  }, async () => {
    const root = await backlogRepo(cleanups, 'check: "true"\nreview: false', '- [ ] T-1 One');
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const implementing = deferred();
    let calls = 0;
    const w = await workerMachine(
      cleanups,
      queue,
      remote,
      (call) => {
        if (call.role !== 'implementer') return {};
        calls++;
        if (calls > 1) return writeOwnFile(call);
        implementing.fire();
        return { until: untilAborted(call.request.signal) };
      },
      'host-a',
    );
    w.start();
    const first = await openFleet(root, writeOwnFile, { services: remoteServices(queue, remote) });
    first.fleet.start();
    await implementing.promise;
    await first.session.close();
    expect(first.fleet.task('T-1')!.attempts.map((a) => [a.n, a.outcome])).toEqual([[1, 'interrupted']]);
    expect(queue.cancelled.map((c) => [c.jobId, c.state, c.error.kind])).toEqual([['T-1:1', 'active', 'stop']]);

    const second = await openFleet(root, writeOwnFile, { services: remoteServices(queue, remote) });
    cleanups.push(() => second.session.close());
    second.fleet.start();
    await second.fleet.whenIdle();
    const t = second.fleet.task('T-1')!;
    expect(t.status).toBe('verified');
    expect(t.attempts.map((a) => [a.n, a.outcome])).toEqual([
      [-1, 'interrupted'],
      [1, 'verified'],
    ]);
    expect(queue.enqueued).toEqual(['T-1:1', 'T-1:1.1']);
    expect(queue.job('T-1:1')!.events.at(-1)!.event.kind).toBe('failed');
    // the rerun made sure the job it replaces runs nowhere any more (it had ended: nothing to do)
    expect(queue.cancelled.map((c) => [c.jobId, c.state])).toEqual([
      ['T-1:1', 'active'],
      ['T-1:1', 'done'],
    ]);
  });

  it("a worker's malformed event fails the attempt, naming the job and what was wrong, and nothing of it is applied", {
    timeout: 60_000,
  }, async () => {
    const root = await backlogRepo(cleanups, 'check: "true"\nreview: false\ngates:\n  attempts: 2', '- [ ] T-1 One');
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const hostile = queue.worker();
    hostile.process({ id: 'hostile', host: 'hostile', concurrency: 1 }, async (_, channel) => {
      await channel.emit({
        kind: 'claimed',
        worker: { id: 'evil\u001b]52;c;SGVsbG8=\u0007', host: 'x', concurrency: 1 },
      });
      await channel.emit({
        kind: 'agent',
        role: 'implementer',
        model: 'm',
        event: { type: 'usage', model: 'm', usage: { input: 1e9, output: 0, cacheWrite: 0, cacheRead: 0 } },
      });
    });
    const h = await openFleet(root, writeOwnFile, { services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();

    const t = h.fleet.task('T-1')!;
    expect(t.status).toBe('failed');
    expect(t.attempts.map((a) => [a.outcome, a.reason])).toEqual(
      [1, 2].map((n) => [
        'error',
        `job T-1:${n}: event 1 from the worker is malformed: worker id is not 1–120 printable characters`,
      ]),
    );
    expect(t.worker).toBeUndefined();
    expect(t.usage.input).toBe(0);
    expect(queue.enqueued).toEqual(['T-1:1', 'T-1:2']);
  });

  it("a task's own gate tripped by its worker's usage fails that task, aborting its attempt on the worker; the others go on", {
    timeout: 90_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'check: "true"\nreview: false\nconcurrency: 2\ngates:\n  tokens: 500',
      '- [ ] T-1 One\n- [ ] T-2 Two',
    );
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const script: FakeScript = (call) => {
      if (call.role !== 'implementer') return {};
      if (call.task === 'T-2') return writeOwnFile(call);
      // T-1's implementer alone takes it over its own gate, whatever its worker does next
      return { usage: { input: 1000, output: 0, cacheWrite: 0, cacheRead: 0 } };
    };
    const w = await workerMachine(cleanups, queue, remote, script, 'host-a', 2);
    w.start();
    const h = await openFleet(root, script, { services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();
    await queue.until(() => w.queue.running.size === 0);

    const one = h.fleet.task('T-1')!;
    expect(one.status).toBe('failed');
    expect(one.gate).toBe('tokens');
    expect(h.fleet.task('T-2')!.status).toBe('verified');
    expect(h.fleet.stoppedBy).toBeNull();
    expect(queue.cancelled.map((c) => [c.jobId, c.state, c.error.kind, c.error.detail])).toEqual([
      ['T-1:1', 'active', 'gate', { gate: 'tokens', scope: 'task' }],
    ]);
    expect(queue.job('T-1:1')!.messages.at(-1)).toMatchObject({
      kind: 'abort',
      error: { kind: 'gate', detail: { gate: 'tokens', scope: 'task' } },
    });
  });
});
