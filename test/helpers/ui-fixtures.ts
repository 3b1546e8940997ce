import { fakeAttempt, fakeTask } from './fake-fleet.js';
import type { TaskState } from '../../src/domain/types.js';

/** One task in each status, in backlog order. */
export function mixedTasks(): TaskState[] {
  return [
    fakeTask('T-1', { title: 'Upgrade lodash to v5', status: 'running', phase: 'implement', attempt: 1 }),
    fakeTask('T-2', { title: 'Migrate the enzyme tests', status: 'queued' }),
    fakeTask('T-3', {
      title: 'Remove the unused newCheckout flag',
      status: 'verified',
      attempt: 2,
      usage: { input: 120_000, output: 8_000, cacheWrite: 0, cacheRead: 0 },
      costUsd: 0.42,
      attempts: [
        fakeAttempt(1, {
          outcome: 'check-failed',
          reason: 'npm test exited 1',
          costUsd: 0.2,
          usageByRole: { implementer: { input: 50_000, output: 2_000, cacheWrite: 0, cacheRead: 0 } },
        }),
        fakeAttempt(2, {
          outcome: 'verified',
          plan: 'Delete src/flags/newCheckout.ts\nRemove its three call sites',
          check: {
            command: 'npm test',
            exitCode: 0,
            timedOut: false,
            outputTail: 'Tests: 42 passed, 42 total',
            durationMs: 12_000,
          },
          verdict: { pass: true, reasons: ['The flag and its call sites are gone', 'No behaviour change'] },
          costUsd: 0.22,
        }),
      ],
    }),
    fakeTask('T-4', {
      title: 'Speed up CI',
      status: 'failed',
      attempt: 3,
      reason: 'token gate: 510k tokens used, limit 500k',
    }),
    fakeTask('T-5', {
      title: 'Rename the config module',
      status: 'conflict',
      attempt: 1,
      reason: 'merge conflict in src/config.ts',
    }),
    fakeTask('T-6', { title: 'Add a changelog', status: 'merged', attempt: 1 }),
    fakeTask('T-7', { title: 'Try a new bundler', status: 'discarded', attempt: 1 }),
  ];
}
