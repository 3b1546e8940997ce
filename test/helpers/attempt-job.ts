/** An attempt job as the coordinator makes one, for tests of the queue and the worker; `change` sets any field. */
import { defaultConfig } from '../../src/core/backlog/config.js';
import { jobIdOf, type AttemptJob } from '../../src/ports/attempt-queue.js';

export function attemptJob(taskId: string, attempt = 1, change: Partial<AttemptJob> = {}): AttemptJob {
  return {
    jobId: jobIdOf(taskId, attempt),
    taskId,
    attempt,
    remoteUrl: '/nowhere.git',
    base: 'main',
    baseCommit: 'a'.repeat(40),
    branch: `loop/${taskId}`,
    branchCommit: null,
    spec: { id: taskId, title: `task ${taskId}`, line: 1, done: false, description: '', after: [], files: [] },
    config: defaultConfig(),
    verifyOnly: false,
    previousPlan: null,
    approvedPlan: null,
    stopAfterPlan: false,
    rebaseFirst: false,
    evidence: null,
    passedEnv: [],
    remainingMs: null,
    ...change,
  };
}
