import { describe, expect, it } from 'vitest';
import { FleetEmitter } from '../../../src/core/task/events.js';
import { FleetTelemetry, recordFleet } from '../../../src/core/telemetry/recorder.js';
import {
  TASK_STATUSES,
  type AttemptRecord,
  type Phase,
  type TaskState,
  type TaskStatus,
} from '../../../src/domain/types.js';
import { noopTelemetry } from '../../../src/ports/telemetry.js';
import { fakeAttempt, fakeTask } from '../../helpers/fake-fleet.js';
import { FakeTelemetry } from '../../helpers/fake-telemetry.js';

/** Drives the recorder with task snapshots, as the fleet emits them; the clock is a counter, so times are exact. */
class Drive {
  readonly events = new FleetEmitter();
  readonly telemetry = new FakeTelemetry();
  readonly recorder: FleetTelemetry;
  time = 1000;
  counts: Record<TaskStatus, number> = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<
    TaskStatus,
    number
  >;
  #tasks = new Map<string, TaskState>();

  constructor(options: { phaseSpans?: boolean; queueDepth?: () => Promise<number>; workers?: () => number } = {}) {
    this.recorder = new FleetTelemetry(this.telemetry, this.events, {
      counts: () => this.counts,
      clock: { now: () => this.time++ },
      ...options,
    });
  }

  task(id: string, patch: Partial<TaskState>, attempt?: Partial<AttemptRecord>): TaskState {
    const before = this.#tasks.get(id) ?? fakeTask(id);
    let attempts = patch.attempts ?? before.attempts;
    if (attempt !== undefined) {
      const n = patch.attempt ?? before.attempt;
      const old = attempts.find((a) => a.n === n);
      attempts =
        old === undefined
          ? [...attempts, fakeAttempt(n, attempt)]
          : attempts.map((a) => (a.n === n ? { ...a, ...attempt } : a));
    }
    const next = { ...before, ...patch, attempts };
    this.#tasks.set(id, next);
    this.events.emit('task', { task: next, previousStatus: before.status });
    return next;
  }

  phase(id: string, phase: Phase): void {
    this.task(id, { phase });
  }

  endAttempt(id: string, outcome: AttemptRecord['outcome'], extra: Partial<AttemptRecord> = {}): void {
    const record = this.#tasks.get(id)!.attempts.at(-1)!;
    this.task(id, {}, { outcome, endedAt: new Date(Date.parse(record.startedAt) + 3500).toISOString(), ...extra });
  }
}

const usage = { input: 10, output: 2, cacheWrite: 1, cacheRead: 5 };

describe('the fleet recorder', () => {
  it("makes a task span, attempt spans under it and phase spans under those, each within its parent, with the attempt's figures", () => {
    const d = new Drive();
    d.task('T-1', { status: 'running', attempt: 1, phase: 'setup' }, { outcome: 'running' });
    d.phase('T-1', 'explore');
    d.phase('T-1', 'implement');
    d.phase('T-1', 'verify');
    d.endAttempt('T-1', 'check-failed', { usageByRole: { implementer: usage, explorer: usage }, costUsd: 0.25 });
    d.task('T-1', { attempt: 2, phase: 'setup' }, { outcome: 'running' });
    d.phase('T-1', 'verify');
    d.endAttempt('T-1', 'verified', { costUsd: 0.5 });
    d.task('T-1', { status: 'verified', phase: null, usage, costUsd: 0.75 });
    d.task('T-1', { status: 'merged' });

    const t = d.telemetry;
    const [task] = t.named('task T-1');
    expect(t.named('task T-1')).toHaveLength(1);
    expect(task).toMatchObject({
      parent: null,
      status: 'ok',
      ends: 1,
      attributes: {
        'loopfleet.task.id': 'T-1',
        'loopfleet.task.status': 'verified',
        'loopfleet.attempt': 2,
        'loopfleet.cost_usd': 0.75,
        'loopfleet.tokens': 18,
      },
    });
    const [a1] = t.named('attempt 1');
    const [a2] = t.named('attempt 2');
    expect(a1).toMatchObject({
      parent: task!.id,
      status: 'error',
      attributes: {
        'loopfleet.attempt': 1,
        'loopfleet.attempt.outcome': 'check-failed',
        'loopfleet.tokens': 36,
        'loopfleet.tokens.input': 20,
        'loopfleet.tokens.cache_read': 10,
        'loopfleet.cost_usd': 0.25,
      },
    });
    expect(a2).toMatchObject({
      parent: task!.id,
      status: 'ok',
      attributes: { 'loopfleet.attempt.outcome': 'verified', 'loopfleet.tokens': 0 },
    });
    expect(t.spans.filter((s) => s.parent === a1!.id).map((s) => s.name)).toEqual([
      'phase setup',
      'phase explore',
      'phase implement',
      'phase verify',
    ]);
    expect(t.spans.filter((s) => s.parent === a2!.id).map((s) => s.name)).toEqual(['phase setup', 'phase verify']);
    // the failed attempt's last phase is the error; the ones before it ended ok
    expect(t.spans.filter((s) => s.parent === a1!.id).map((s) => s.status)).toEqual(['ok', 'ok', 'ok', 'error']);
    for (const s of t.spans) {
      expect(s.ended && s.ends === 1, s.name).toBe(true);
      const parent = t.spans.find((p) => p.id === s.parent);
      if (parent !== undefined)
        expect(s.startMs! >= parent.startMs! && s.endMs! <= parent.endMs!, `${s.name} within ${parent.name}`).toBe(
          true,
        );
    }
    expect(t.sum('loopfleet.attempts')).toBe(2);
    expect(t.sum('loopfleet.attempts', { 'loopfleet.attempt.outcome': 'check-failed' })).toBe(1);
    expect(t.histograms.get('loopfleet.attempt.duration')!.map((h) => h.value)).toEqual([3.5, 3.5]);
  });

  it('counts tokens by kind, role and model, and cost, from usage reports', () => {
    const d = new Drive();
    const fleet = { usage, costUsd: 1, elapsedMs: 0, startedAt: null };
    d.events.emit('usage', {
      id: 'T-1',
      role: 'explorer',
      model: 'claude-opus-5',
      delta: usage,
      costUsd: 0.5,
      task: usage,
      taskCostUsd: 0.5,
      fleet,
    });
    d.events.emit('usage', {
      id: 'T-2',
      role: 'implementer',
      model: 'claude-opus-5',
      delta: { ...usage, cacheWrite: 0 },
      costUsd: 0.25,
      task: usage,
      taskCostUsd: 0.25,
      fleet,
    });
    const t = d.telemetry;
    expect(t.sum('loopfleet.tokens', { 'loopfleet.token.kind': 'input' })).toBe(20);
    expect(t.sum('loopfleet.tokens', { 'loopfleet.token.kind': 'cache_write' })).toBe(1);
    expect(t.sum('loopfleet.tokens', { 'loopfleet.role': 'implementer' })).toBe(17);
    expect(t.sum('loopfleet.tokens', { 'loopfleet.model': 'claude-opus-5' })).toBe(35);
    // a kind with no tokens adds no point
    expect(t.counters.get('loopfleet.tokens')!.some((a) => a.value === 0)).toBe(false);
    expect(t.sum('loopfleet.cost')).toBe(0.75);
    expect(t.sum('loopfleet.cost', { 'loopfleet.role': 'explorer' })).toBe(0.5);
  });

  it('reads tasks by status and, by default, the local queue and one worker at each collection; a coordinator gives its own', async () => {
    const d = new Drive();
    d.counts = { ...d.counts, queued: 4, running: 2, verified: 1 };
    const tasks = await d.telemetry.collect('loopfleet.tasks');
    expect(tasks).toHaveLength(TASK_STATUSES.length);
    expect(tasks.filter((o) => o.value > 0).map((o) => [o.attributes?.['loopfleet.task.status'], o.value])).toEqual([
      ['queued', 4],
      ['running', 2],
      ['verified', 1],
    ]);
    expect(await d.telemetry.collect('loopfleet.queue.depth')).toEqual([{ value: 4, attributes: {} }]);
    expect(await d.telemetry.collect('loopfleet.workers')).toEqual([{ value: 1, attributes: {} }]);
    const c = new Drive({ queueDepth: async () => 12, workers: () => 3 });
    expect(await c.telemetry.collect('loopfleet.queue.depth')).toEqual([{ value: 12, attributes: {} }]);
    expect(await c.telemetry.collect('loopfleet.workers')).toEqual([{ value: 3, attributes: {} }]);
  });

  it('closing mid-attempt ends every span: the attempt as interrupted, not counted as finished', () => {
    const d = new Drive();
    d.task('T-1', { status: 'running', attempt: 1, phase: 'implement' }, { outcome: 'running' });
    d.recorder.close();
    const t = d.telemetry;
    expect(t.spans.map((s) => [s.name, s.ended])).toEqual([
      ['task T-1', true],
      ['attempt 1', true],
      ['phase implement', true],
    ]);
    expect(t.named('attempt 1')[0]).toMatchObject({
      status: 'error',
      attributes: { 'loopfleet.attempt.outcome': 'interrupted' },
    });
    expect(t.named('task T-1')[0]!.attributes['loopfleet.task.status']).toBe('running');
    expect(t.sum('loopfleet.attempts')).toBe(0);
    // after close, events are not heard
    d.task('T-2', { status: 'running', attempt: 1, phase: 'setup' }, { outcome: 'running' });
    expect(t.named('task T-2')).toEqual([]);
  });

  it('a plan awaiting approval keeps its attempt open; the approved implementation continues it', () => {
    const d = new Drive();
    d.task('T-1', { status: 'running', attempt: 1, phase: 'explore' }, { outcome: 'running' });
    d.task('T-1', { status: 'awaiting-approval', phase: null });
    expect(d.telemetry.named('phase explore')[0]!.ended).toBe(true);
    expect(d.telemetry.named('attempt 1')[0]!.ended).toBe(false);
    d.task('T-1', { status: 'running', phase: 'implement' });
    d.endAttempt('T-1', 'verified');
    d.task('T-1', { status: 'verified', phase: null });
    const attempt = d.telemetry.named('attempt 1');
    expect(attempt).toHaveLength(1);
    expect(d.telemetry.named('phase implement')[0]!.parent).toBe(attempt[0]!.id);
  });

  it('a failed task names its gate; a task that runs again after settling starts a new trace', () => {
    const d = new Drive();
    d.task('T-1', { status: 'running', attempt: 1, phase: 'verify' }, { outcome: 'running' });
    d.endAttempt('T-1', 'gate');
    d.task('T-1', { status: 'failed', gate: 'cost', reason: 'cost gate: $2.10 of $2 — check output said SECRET' });
    expect(d.telemetry.named('task T-1')[0]).toMatchObject({
      status: 'error',
      attributes: { 'loopfleet.gate': 'cost', 'loopfleet.task.status': 'failed' },
    });
    expect(JSON.stringify(d.telemetry.spans)).not.toContain('SECRET');
    d.task('T-1', { status: 'running', attempt: 1, gate: null, attempts: [], phase: 'setup' }, { outcome: 'running' });
    expect(d.telemetry.named('task T-1')).toHaveLength(2);
    expect(d.telemetry.named('task T-1')[1]!.parent).toBeNull();
  });

  it("gives a running attempt's traceparent for its job, takes the worker that claimed it, and records no phases when workers do", () => {
    const d = new Drive({ phaseSpans: false });
    d.task('T-1', { status: 'running', attempt: 1, phase: 'setup' }, { outcome: 'running' });
    const traceparent = d.recorder.attemptTraceparent('T-1', 1);
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(d.recorder.attemptTraceparent('T-1', 2)).toBeNull();
    expect(d.recorder.attemptTraceparent('T-9', 1)).toBeNull();
    d.recorder.attemptOnWorker('T-1', 1, 'build-box-2-4411-9f2c');
    d.recorder.attemptOnWorker('T-1', 1, 'bad id; rm -rf /');
    d.phase('T-1', 'implement');
    d.endAttempt('T-1', 'verified');
    expect(d.recorder.attemptTraceparent('T-1', 1)).toBeNull();
    expect(d.telemetry.spans.map((s) => s.name)).toEqual(['task T-1', 'attempt 1']);
    expect(d.telemetry.named('attempt 1')[0]!.attributes['loopfleet.worker.id']).toBe('build-box-2-4411-9f2c');
  });

  it('takes the worker from the task record when the queue puts it there', () => {
    const d = new Drive();
    d.task('T-1', { status: 'running', attempt: 1, phase: 'setup' }, { outcome: 'running' });
    d.task('T-1', { worker: 'box-3-12-ff' } as Partial<TaskState>);
    d.endAttempt('T-1', 'verified');
    expect(d.telemetry.named('attempt 1')[0]!.attributes['loopfleet.worker.id']).toBe('box-3-12-ff');
  });

  it('is nothing at all on the no-op: no listener is added', () => {
    const events = new FleetEmitter();
    expect(recordFleet(noopTelemetry, events, { counts: () => ({}) as Record<TaskStatus, number> })).toBeNull();
    expect(events.listenerCount('task') + events.listenerCount('usage')).toBe(0);
  });
});
