import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { fakeTask } from '../helpers/fake-fleet.js';
import { rowOf, setup } from '../helpers/ui-render.js';

afterEach(() => cleanup());

describe('which worker runs a task', () => {
  test('a running attempt on a worker is labelled with the worker; a task run here, or no longer running, is not', async () => {
    const onWorker = fakeTask('T-1', { status: 'running', phase: 'implement', attempt: 1, worker: 'host-a-42' });
    const here = fakeTask('T-2', { status: 'running', phase: 'implement', attempt: 1 });
    const ranThere = fakeTask('T-3', { status: 'verified', attempt: 1, worker: 'host-b-7' });
    const hostile = fakeTask('T-4', {
      status: 'running',
      phase: 'verify',
      attempt: 1,
      worker: 'evil\u001b]52;c;SGVsbG8=\u0007',
    });
    const t = await setup({ tasks: [onWorker, here, ranThere, hostile], columns: 140 });
    const frame = t.frame();
    expect(rowOf(frame, 'T-1')).toMatch(/Task T-1 +@host-a-42/);
    expect(rowOf(frame, 'T-2')).not.toContain('@');
    expect(rowOf(frame, 'T-3')).not.toContain('@host-b-7');
    expect(rowOf(frame, 'T-4')).toContain('@evil');
    expect(frame).not.toContain('\u001b]52');
  });

  test('a worker flagged on the task (its claim of verified failed the coordinator check) is marked ⚑ while it runs it', async () => {
    const flag = {
      worker: 'host-a-42',
      attempt: 1,
      reason: 'worker claimed verified; coordinator check failed: check `sh test.sh` exited 1',
    };
    const again = fakeTask('T-1', {
      status: 'running',
      phase: 'setup',
      attempt: 2,
      worker: 'host-a-42',
      workerFlag: flag,
    });
    const other = fakeTask('T-2', {
      status: 'running',
      phase: 'setup',
      attempt: 2,
      worker: 'host-b-7',
      workerFlag: flag,
    });
    const t = await setup({ tasks: [again, other], columns: 140 });
    const frame = t.frame();
    expect(rowOf(frame, 'T-1')).toMatch(/@host-a-42 ⚑/);
    expect(rowOf(frame, 'T-2')).toMatch(/@host-b-7/);
    expect(rowOf(frame, 'T-2')).not.toContain('⚑');
  });
});
