import { describe, expect, it } from 'vitest';
import { TaskLifecycle } from '../../../src/core/task/lifecycle.js';
import { IllegalTransitionError, allowedFrom, type TaskChange } from '../../../src/core/task/transitions.js';
import {
  TASK_STATUSES,
  type ConflictDetail,
  type TaskSpec,
  type TaskState,
  type TaskStatus,
} from '../../../src/domain/types.js';

const gates = { attempts: 3, tokens: null, timeMs: null, costUsd: null };
const spec = (over: Partial<TaskSpec> = {}): TaskSpec => ({
  id: 'T-1',
  title: 'One',
  line: 5,
  done: false,
  description: '',
  after: [],
  files: [],
  ...over,
});

function setup() {
  const records: Record<string, TaskState> = {};
  const saves: boolean[] = [];
  const life = new TaskLifecycle(records, { now: () => 1_000 }, (_id, flush) => saves.push(flush));
  const changes: TaskChange[] = [];
  life.listen((c) => changes.push(c));
  life.ensure(spec(), gates);
  changes.length = 0;
  saves.length = 0;
  return { life, records, changes, saves };
}

/** Drive T-1 into `status` through legal transitions. */
function into(life: TaskLifecycle, status: TaskStatus): void {
  const path: Record<TaskStatus, Array<(l: TaskLifecycle) => void>> = {
    queued: [],
    running: [(l) => l.startAttempt('T-1', 1, 'loop/T-1')],
    'awaiting-approval': [(l) => l.startAttempt('T-1', 1, 'loop/T-1'), (l) => l.awaitApproval('T-1')],
    verified: [(l) => l.startAttempt('T-1', 1, 'loop/T-1'), (l) => l.verify('T-1')],
    failed: [(l) => l.fail('T-1', { gate: 'attempts', reason: 'x' })],
    merged: [(l) => l.startAttempt('T-1', 1, 'loop/T-1'), (l) => l.verify('T-1'), (l) => l.merge('T-1', null)],
    discarded: [(l) => l.fail('T-1', { gate: null, reason: 'x' }), (l) => l.discard('T-1', 'discarded')],
    conflict: [
      (l) => l.startAttempt('T-1', 1, 'loop/T-1'),
      (l) => l.verify('T-1'),
      (l) => l.conflict('T-1', 'conflicts'),
    ],
  };
  for (const step of path[status]) step(life);
}

const TRANSITIONS: Array<{
  name: string;
  to: TaskStatus;
  from: readonly TaskStatus[];
  run: (l: TaskLifecycle) => void;
}> = [
  {
    name: 'startAttempt',
    to: 'running',
    from: allowedFrom('startAttempt'),
    run: (l) => l.startAttempt('T-1', 2, 'loop/T-1'),
  },
  { name: 'setPhase', to: 'running', from: allowedFrom('setPhase'), run: (l) => l.setPhase('T-1', 'explore') },
  {
    name: 'finishAttempt',
    to: 'running',
    from: allowedFrom('finishAttempt'),
    run: (l) => l.finishAttempt('T-1', { n: 1, record: { outcome: 'check-failed' } }),
  },
  { name: 'verify', to: 'verified', from: allowedFrom('verify'), run: (l) => l.verify('T-1') },
  {
    name: 'fail',
    to: 'failed',
    from: allowedFrom('fail'),
    run: (l) => l.fail('T-1', { gate: 'tokens', reason: 'token gate' }),
  },
  {
    name: 'awaitApproval',
    to: 'awaiting-approval',
    from: allowedFrom('awaitApproval'),
    run: (l) => l.awaitApproval('T-1', 'plan ready'),
  },
  {
    name: 'requeue interrupted',
    to: 'queued',
    from: allowedFrom('requeueInterrupted'),
    run: (l) => l.requeue('T-1', { kind: 'interrupted', reason: 'quit' }),
  },
  {
    name: 'requeue crashed',
    to: 'queued',
    from: allowedFrom('requeueCrashed'),
    run: (l) => l.requeue('T-1', { kind: 'crashed' }),
  },
  {
    name: 'requeue retry',
    to: 'queued',
    from: allowedFrom('requeueRetry'),
    run: (l) => l.requeue('T-1', { kind: 'retry' }),
  },
  {
    name: 'requeue rebased',
    to: 'queued',
    from: allowedFrom('requeueRebased'),
    run: (l) => l.requeue('T-1', { kind: 'rebased' }),
  },
  { name: 'merge', to: 'merged', from: allowedFrom('merge'), run: (l) => l.merge('T-1', null) },
  { name: 'discard', to: 'discarded', from: allowedFrom('discard'), run: (l) => l.discard('T-1', 'discarded') },
  {
    name: 'conflict',
    to: 'conflict',
    from: allowedFrom('conflict'),
    run: (l) => l.conflict('T-1', 'conflicts in a.txt'),
  },
];

describe('the task lifecycle', () => {
  for (const t of TRANSITIONS) {
    for (const status of TASK_STATUSES) {
      const legal = t.from.includes(status);
      it(`${t.name} from ${status} ${legal ? `goes to ${t.to} with one task event` : 'throws and changes nothing'}`, () => {
        const { life, records, changes, saves } = setup();
        into(life, status);
        changes.length = 0;
        saves.length = 0;
        const before = structuredClone(records['T-1']!);
        if (!legal) {
          expect(() => t.run(life)).toThrow(IllegalTransitionError);
          expect(() => t.run(life)).toThrow(`task T-1 is ${status}: `);
          expect(records['T-1']).toEqual(before);
          expect(changes).toHaveLength(0);
          return;
        }
        t.run(life);
        expect(records['T-1']!.status).toBe(t.to);
        expect(changes).toHaveLength(1);
        expect(changes[0]!.previousStatus).toBe(status);
        expect(changes[0]!.task).toEqual(records['T-1']);
        // a copy: the subscriber never holds the lifecycle's own record
        expect(changes[0]!.task).not.toBe(records['T-1']);
        // a status change is saved at once
        if (status !== t.to) expect(saves).toContain(true);
      });
    }
  }

  it('startAttempt records a new attempt and replaces an interrupted one of the same number, keeping it', () => {
    const { life, records } = setup();
    life.startAttempt('T-1', 1, 'loop/T-1');
    life.requeue('T-1', { kind: 'crashed' });
    expect(records['T-1']!.attempts[0]!.outcome).toBe('interrupted');
    expect(records['T-1']!.reason).toBe('resumed after an interrupted run');
    life.startAttempt('T-1', 1, 'loop/T-1');
    expect(records['T-1']!.attempts.map((a) => [a.n, a.outcome])).toEqual([
      [-1, 'interrupted'],
      [1, 'running'],
    ]);
    expect(records['T-1']).toMatchObject({
      status: 'running',
      phase: 'setup',
      attempt: 1,
      branch: 'loop/T-1',
      reason: null,
    });
  });

  it('a retry and a rebase start a fresh budget; a rebase verifies only', () => {
    const { life, records } = setup();
    life.startAttempt('T-1', 1, 'loop/T-1');
    life.book('T-1', 'implementer', { input: 10, output: 5, cacheWrite: 0, cacheRead: 0 }, 0.5, null);
    life.recordTime('T-1', 4000);
    life.fail('T-1', { gate: 'cost', reason: 'cost gate' });
    life.requeue('T-1', { kind: 'retry' });
    expect(records['T-1']!.budget).toEqual({
      fromAttempt: 1,
      usage: { input: 10, output: 5, cacheWrite: 0, cacheRead: 0 },
      costUsd: 0.5,
      elapsedMs: 4000,
    });
    expect(records['T-1']).toMatchObject({ gate: null, reason: null, verifyOnly: false });
    life.startAttempt('T-1', 2, 'loop/T-1');
    life.verify('T-1');
    life.conflict('T-1', 'conflicts');
    life.requeue('T-1', { kind: 'rebased' });
    expect(records['T-1']).toMatchObject({
      status: 'queued',
      verifyOnly: true,
      reason: 'rebased onto the new base; verifying again',
    });
    expect(records['T-1']!.budget.fromAttempt).toBe(2);
  });

  it('the transition that ends an attempt writes the attempt record in the same single event', () => {
    const { life, records, changes } = setup();
    life.startAttempt('T-1', 1, 'loop/T-1');
    changes.length = 0;
    life.verify('T-1', { n: 1, record: { outcome: 'verified', commit: 'abc' } });
    expect(changes).toHaveLength(1);
    expect(changes[0]!.task.attempts[0]).toMatchObject({ outcome: 'verified', commit: 'abc' });
    expect(records['T-1']!.phase).toBeNull();
  });

  it('ensure creates queued or merged records and refreshes title and gates with one event', () => {
    const { life, records, changes } = setup();
    life.ensure(spec({ id: 'T-2', done: true }), gates);
    expect(records['T-2']!.status).toBe('merged');
    expect(changes.map((c) => c.previousStatus)).toEqual([null]);
    changes.length = 0;
    life.ensure(spec({ title: 'Renamed' }), { ...gates, attempts: 5 });
    expect(records['T-1']).toMatchObject({ title: 'Renamed', maxAttempts: 5 });
    expect(changes).toHaveLength(1);
    changes.length = 0;
    life.ensure(spec({ title: 'Renamed' }), { ...gates, attempts: 5 });
    expect(changes).toHaveLength(0);
  });

  it("records a recurring task's interval, and follows BACKLOG.md when it changes or goes, with one event each", () => {
    const { life, records, changes } = setup();
    life.ensure(spec({ id: 'T-2', everyMs: 1_800_000 }), gates);
    expect(records['T-2']!.everyMs).toBe(1_800_000);
    expect(records['T-1']).not.toHaveProperty('everyMs');
    changes.length = 0;
    life.ensure(spec({ id: 'T-2', everyMs: 3_600_000 }), gates);
    expect(records['T-2']!.everyMs).toBe(3_600_000);
    life.ensure(spec({ id: 'T-2' }), gates);
    expect(records['T-2']).not.toHaveProperty('everyMs');
    expect(changes).toHaveLength(2);
    life.ensure(spec({ id: 'T-2' }), gates);
    expect(changes).toHaveLength(2);
  });

  it('an item ticked [x] merges the task through the merge transition, except while it runs', () => {
    const { life, records, changes } = setup();
    life.startAttempt('T-1', 1, 'loop/T-1');
    changes.length = 0;
    life.ensure(spec({ done: true }), gates);
    expect(records['T-1']!.status).toBe('running');
    expect(changes).toHaveLength(0);
    life.fail('T-1', { gate: null, reason: 'x' });
    changes.length = 0;
    life.ensure(spec({ done: true }), gates);
    expect(records['T-1']!.status).toBe('merged');
    expect(changes.map((c) => `${c.previousStatus}->${c.task.status}`)).toEqual(['failed->merged']);
  });

  it('bookkeeping writes usage to the task and its attempt without a task event', () => {
    const { life, records, changes } = setup();
    life.startAttempt('T-1', 1, 'loop/T-1');
    changes.length = 0;
    life.book('T-1', 'explorer', { input: 100, output: 20, cacheWrite: 0, cacheRead: 0 }, 0.25, 'mystery-model');
    life.book('T-1', 'explorer', { input: 1, output: 0, cacheWrite: 0, cacheRead: 0 }, 0.25, 'mystery-model');
    life.recordTime('T-1', 1234);
    const t = records['T-1']!;
    expect(t.usage).toEqual({ input: 101, output: 20, cacheWrite: 0, cacheRead: 0 });
    expect(t.costUsd).toBe(0.5);
    expect(t.unpricedModels).toEqual(['mystery-model']);
    expect(t.attempts[0]!.usageByRole.explorer).toEqual({ input: 101, output: 20, cacheWrite: 0, cacheRead: 0 });
    expect(t.attempts[0]!.costUsd).toBe(0.5);
    expect(t.elapsedMs).toBe(1234);
    expect(changes).toHaveLength(0);
  });

  it('a forecast records the names and the details, and tells subscribers only when they change', () => {
    const { life, records, changes } = setup();
    into(life, 'verified');
    changes.length = 0;
    const withT5: ConflictDetail = {
      with: 'T-5',
      files: ['src/calc.js'],
      hunks: [{ file: 'src/calc.js', hunk: '<<<<<<< a\nx\n=======\ny\n>>>>>>> b' }],
    };
    const withBase: ConflictDetail = { with: 'main', files: ['README.md'], hunks: [] };
    life.forecast('T-1', [withBase, withT5]);
    expect(records['T-1']).toMatchObject({
      status: 'verified',
      conflictsWith: ['main', 'T-5'],
      conflicts: [withBase, withT5],
    });
    expect(changes).toHaveLength(1);
    life.forecast('T-1', structuredClone([withBase, withT5]));
    expect(changes).toHaveLength(1);
    // the same names with other files is news
    life.forecast('T-1', [withBase, { ...withT5, files: ['src/calc.js', 'src/other.js'] }]);
    expect(changes).toHaveLength(2);
    expect(records['T-1']!.conflicts![1]!.files).toEqual(['src/calc.js', 'src/other.js']);
    // and other hunks too
    life.forecast('T-1', [withBase, { ...withT5, files: ['src/calc.js', 'src/other.js'], hunks: [] }]);
    expect(changes).toHaveLength(3);
    life.forecast('T-1', []);
    expect(records['T-1']).toMatchObject({ conflictsWith: [], conflicts: [] });
    expect(changes).toHaveLength(4);
    life.forecast('T-1', []);
    expect(changes).toHaveLength(4);
  });

  it('a task sent back or requeued forgets its conflicts', () => {
    const detail: ConflictDetail = {
      with: 'main',
      files: ['a.txt'],
      hunks: [{ file: 'a.txt', hunk: '<<<<<<< a\n=======\n>>>>>>> b' }],
    };
    const sent = setup();
    into(sent.life, 'verified');
    sent.life.forecast('T-1', [detail]);
    sent.life.sendBack('T-1', 'check failed on the new base', 'output');
    expect(sent.records['T-1']).toMatchObject({ status: 'queued', conflictsWith: [], conflicts: [] });

    const rebased = setup();
    into(rebased.life, 'conflict');
    rebased.life.conflict('T-1', 'conflicts in a.txt', [detail]);
    expect(rebased.records['T-1']!.conflicts).toEqual([detail]);
    rebased.life.requeue('T-1', { kind: 'rebased' });
    expect(rebased.records['T-1']).toMatchObject({ status: 'queued', conflicts: [] });

    const retried = setup();
    into(retried.life, 'conflict');
    retried.life.conflict('T-1', 'conflicts in a.txt', [detail]);
    retried.life.discard('T-1', 'discarded');
    retried.life.requeue('T-1', { kind: 'retry' });
    expect(retried.records['T-1']).toMatchObject({ status: 'queued', conflicts: [] });
  });

  it('throws a clear error for a task it does not know', () => {
    const { life } = setup();
    expect(() => life.verify('T-9')).toThrow('no state for task T-9');
  });
});
