import { describe, expect, it } from 'vitest';
import { FleetEmitter } from '../../../src/core/task/events.js';
import { FleetTelemetry } from '../../../src/core/telemetry/recorder.js';
import { costPerTask, TASK_STATUSES, type TaskState, type TaskStatus } from '../../../src/domain/types.js';
import { fakeTask } from '../../helpers/fake-fleet.js';
import { FakeTelemetry } from '../../helpers/fake-telemetry.js';

describe('cost per verified and per merged task', () => {
  it('divides everything spent, failed tasks included, by the verified (merged count) and by the merged', () => {
    const tasks: Array<{ status: TaskStatus; costUsd: number }> = [
      { status: 'verified', costUsd: 1 },
      { status: 'merged', costUsd: 2 },
      { status: 'failed', costUsd: 3 },
    ];
    expect(costPerTask(tasks)).toEqual({ costUsd: 6, verified: 2, merged: 1, costPerVerified: 3, costPerMerged: 6 });
    expect(costPerTask([{ status: 'failed', costUsd: 3 }])).toMatchObject({
      costPerVerified: null,
      costPerMerged: null,
    });
    expect(costPerTask([])).toMatchObject({ costUsd: 0, costPerVerified: null });
  });

  it('is two OpenTelemetry gauges over the tasks the run reported, absent while there is nothing to divide by', async () => {
    const events = new FleetEmitter();
    const telemetry = new FakeTelemetry();
    const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
    const recorder = new FleetTelemetry(telemetry, events, { counts: () => counts });
    const emit = (task: TaskState) => events.emit('task', { task, previousStatus: 'queued' });
    emit(fakeTask('T-1', { status: 'failed', costUsd: 0.3 }));
    expect(await telemetry.collect('loopfleet.cost.per_verified')).toEqual([]);
    expect(await telemetry.collect('loopfleet.cost.per_merged')).toEqual([]);
    emit(fakeTask('T-2', { status: 'running', costUsd: 0.1 }));
    emit(fakeTask('T-2', { status: 'verified', costUsd: 0.5 }));
    const value = async (name: string) => (await telemetry.collect(name)).map((p) => p.value);
    expect(await value('loopfleet.cost.per_verified')).toEqual([0.8]);
    expect(await value('loopfleet.cost.per_merged')).toEqual([]);
    emit(fakeTask('T-2', { status: 'merged', costUsd: 0.5 }));
    emit(fakeTask('T-3', { status: 'verified', costUsd: 0.8 }));
    const [perVerified] = await value('loopfleet.cost.per_verified');
    const [perMerged] = await value('loopfleet.cost.per_merged');
    expect(perVerified).toBeCloseTo(0.8, 9);
    expect(perMerged).toBeCloseTo(1.6, 9);
    recorder.close();
  });
});
