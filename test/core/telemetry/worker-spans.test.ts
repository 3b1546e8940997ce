import { describe, expect, it } from 'vitest';
import { openTelemetry } from '../../../src/adapters/telemetry/otel-open.js';
import { FleetEmitter } from '../../../src/core/task/events.js';
import { FleetTelemetry } from '../../../src/core/telemetry/recorder.js';
import { workerAttemptSpans } from '../../../src/core/telemetry/worker-spans.js';
import type { AttemptResult } from '../../../src/domain/attempt-result.js';
import { TASK_STATUSES, type TaskStatus } from '../../../src/domain/types.js';
import type { WorkerEvent } from '../../../src/ports/attempt-queue.js';
import { FakeTelemetry } from '../../helpers/fake-telemetry.js';
import { fakeAttempt, fakeTask } from '../../helpers/fake-fleet.js';
import { otelTestEnv } from '../../helpers/otel-env.js';

const otel = otelTestEnv();

const counts = () => Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;

function result(outcome: AttemptResult['outcome'], planted: string): AttemptResult {
  return {
    outcome,
    reason: planted,
    evidence: planted,
    plan: planted,
    setup: null,
    check: null,
    guard: [planted],
    verdict: null,
    commit: null,
    diffStat: planted,
    checks: [],
    baseline: [],
    proof: null,
  };
}

/** Everything a worker emits for one attempt, each text field carrying `planted`. */
function workerEvents(planted: string): WorkerEvent[] {
  return [
    { kind: 'claimed', worker: { id: 'box-1-900-a1', host: 'box-1', concurrency: 2 } },
    { kind: 'phase', phase: 'setup' },
    { kind: 'output', phase: 'setup', chunk: planted },
    { kind: 'phase', phase: 'explore' },
    { kind: 'agent', role: 'explorer', model: 'claude-sonnet-5-5', event: { type: 'text', text: planted } },
    { kind: 'planned', plan: planted, request: 'r1' },
    { kind: 'phase', phase: 'implement' },
    { kind: 'phase', phase: 'implement' },
    { kind: 'notice', message: planted, level: 'warn' },
    { kind: 'phase', phase: 'verify' },
    { kind: 'pushed', branch: 'loop/T-3', commit: 'abc123' },
    { kind: 'result', result: result('verified', planted) },
  ];
}

describe("a worker's spans of an attempt", () => {
  it("join the coordinator's attempt span across processes' SDKs through the job's traceparent, and carry no event text", async () => {
    const r = await otel.receiver({ endpoint: true });
    // two SDK instances: the coordinator's and the worker's; the traceparent string is all that passes between them
    const coordinator = await openTelemetry(process.env, { warn: () => undefined });
    const worker = await openTelemetry(process.env, { warn: () => undefined, instanceId: 'box-1-900-a1' });
    const events = new FleetEmitter();
    const recorder = new FleetTelemetry(coordinator, events, { counts, phaseSpans: false });
    const running = fakeTask('T-3', { status: 'running', attempt: 1, phase: 'setup', attempts: [fakeAttempt(1)] });
    events.emit('task', { task: running, previousStatus: 'queued' });
    const traceparent = recorder.attemptTraceparent('T-3', 1);
    expect(traceparent).not.toBeNull();

    const planted = 'PLANTED-b71f';
    const spans = workerAttemptSpans(worker, { taskId: 'T-3', attempt: 1, traceparent: traceparent! }, 'box-1-900-a1');
    for (const event of workerEvents(planted)) spans.observe(event);
    spans.end();
    await worker.shutdown();
    recorder.attemptOnWorker('T-3', 1, 'box-1-900-a1');
    events.emit('task', {
      task: {
        ...running,
        status: 'verified',
        phase: null,
        attempts: [fakeAttempt(1, { outcome: 'verified', endedAt: new Date().toISOString() })],
      },
      previousStatus: 'running',
    });
    recorder.close();
    await coordinator.shutdown();

    const all = r.spans();
    const attempt = all.find((s) => s.name === 'attempt 1')!;
    const task = all.find((s) => s.name === 'task T-3')!;
    expect(attempt.parentSpanId).toBe(task.spanId);
    expect(attempt.attributes['loopfleet.worker.id']).toBe('box-1-900-a1');
    const phases = all.filter((s) => s.name.startsWith('phase '));
    expect(phases.map((p) => p.name)).toEqual(['phase setup', 'phase explore', 'phase implement', 'phase verify']);
    for (const p of phases) {
      expect(p.traceId).toBe(task.traceId);
      expect(p.parentSpanId).toBe(attempt.spanId);
      expect(p.resource['service.instance.id']).toBe('box-1-900-a1');
      expect(p.attributes).toMatchObject({
        'loopfleet.task.id': 'T-3',
        'loopfleet.attempt': 1,
        'loopfleet.worker.id': 'box-1-900-a1',
      });
    }
    expect(phases.map((p) => p.status)).toEqual([1, 1, 1, 1]);
    expect(phases.at(-1)!.attributes['loopfleet.attempt.outcome']).toBe('verified');
    expect(r.allText()).not.toContain(planted);
  });

  it('an attempt cut short ends its phase as an error; a failed one too; nothing is recorded after the end', () => {
    const t = new FakeTelemetry();
    const cut = workerAttemptSpans(
      t,
      { taskId: 'T-1', attempt: 2, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      'w-1',
    );
    cut.observe({ kind: 'phase', phase: 'implement' });
    cut.end();
    cut.end();
    cut.observe({ kind: 'phase', phase: 'verify' });
    expect(t.spans.map((s) => [s.name, s.parent, s.status, s.ends])).toEqual([
      ['phase implement', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'error', 1],
    ]);

    const failed = workerAttemptSpans(t, { taskId: 'T-1', attempt: 3 }, 'w-1');
    failed.observe({ kind: 'phase', phase: 'setup' });
    failed.observe({ kind: 'failed', error: { kind: 'error', message: 'setup: npm ci exited 1: SECRET' } });
    failed.end();
    expect(t.spans.at(-1)).toMatchObject({ name: 'phase setup', parent: null, status: 'error', ends: 1 });
    expect(JSON.stringify(t.spans)).not.toContain('SECRET');
  });
});
