import { afterEach, expect, test, vi } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { fakeTasks } from '../helpers/fake-fleet.js';
import { rowOf, setup, waitFor } from '../helpers/ui-render.js';

const calls = vi.hoisted(() => ({ formatUsd: 0 }));

vi.mock('../../src/ui/format.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/ui/format.js')>();
  return {
    ...actual,
    formatUsd: (x: number) => {
      calls.formatUsd++;
      return actual.formatUsd(x);
    },
  };
});

afterEach(cleanup);

test('a task event re-renders only that task’s row', async () => {
  // Nothing running, so no row's elapsed time ticks during the test.
  const tasks = fakeTasks(1000).map((t) =>
    t.status === 'running' ? { ...t, status: 'verified' as const, phase: null } : t,
  );
  const t = await setup({ tasks, rows: 40, state: 'paused' });
  const spentRows = t.lines().filter((l) => l.includes('$')).length;
  expect(spentRows).toBeGreaterThan(15);
  calls.formatUsd = 0;
  t.fleet.update('T-4', { costUsd: 1.99, usage: { input: 5, output: 0, cacheWrite: 0, cacheRead: 0 } });
  await waitFor(() => expect(rowOf(t.frame(), 'T-4')).toContain('$1.99'));
  // the changed row, plus the fleet bar's total
  expect(calls.formatUsd).toBeLessThanOrEqual(4);
});
