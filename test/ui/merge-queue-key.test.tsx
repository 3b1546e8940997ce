import { afterEach, describe, expect, test } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { fakeTask } from '../helpers/fake-fleet.js';
import { rowOf, setup, waitFor } from '../helpers/ui-render.js';

afterEach(cleanup);

const threeVerified = () => [
  fakeTask('T-1', { title: 'One', status: 'verified', conflictsWith: ['T-3'] }),
  fakeTask('T-2', { title: 'Two', status: 'running', phase: 'implement', attempt: 1 }),
  fakeTask('T-3', { title: 'Three', status: 'verified', conflictsWith: ['T-1'] }),
  fakeTask('T-4', { title: 'Four', status: 'verified' }),
];

describe('the merge queue key and predicted conflicts', () => {
  test('marks verified rows that are predicted to conflict, naming with what', async () => {
    const t = await setup({ tasks: threeVerified() });
    expect(rowOf(t.frame(), 'T-1')).toContain('⚠ conflicts with T-3');
    expect(rowOf(t.frame(), 'T-3')).toContain('⚠ conflicts with T-1');
    expect(rowOf(t.frame(), 'T-4')).not.toContain('⚠');
  });

  test('M asks once, listing the order; y runs the queue', async () => {
    const t = await setup({ tasks: threeVerified(), base: 'main' });
    await t.press('M');
    expect(t.frame()).toContain('Merge queue onto main: T-1, T-3, T-4');
    expect(t.fleet.calls).toEqual([]);
    await t.press('y');
    await waitFor(() => expect(t.fleet.calls).toEqual([{ command: 'mergeAll' }]));
    await waitFor(() => expect(t.frame()).toContain('Merge queue: 3 merged'));
    await waitFor(() => expect(rowOf(t.frame(), 'T-4')).toContain('✓ merged'));
  });

  test('n cancels it, and with nothing verified M says so', async () => {
    const t = await setup({ tasks: threeVerified() });
    await t.press('M', 'n');
    expect(t.fleet.calls).toEqual([]);
    expect(t.frame()).toContain('Merge queue cancelled');
    const none = await setup({ tasks: [fakeTask('T-1', { title: 'One', status: 'queued' })] });
    await none.press('M');
    expect(none.frame()).toContain('Nothing to merge: no task is verified');
  });
});
