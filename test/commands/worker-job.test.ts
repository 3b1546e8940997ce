import { describe, expect, it } from 'vitest';
import { jobForThisWorker } from '../../src/commands/worker.js';
import { attemptJob } from '../helpers/attempt-job.js';

const job = attemptJob('T-1', 1, {
  remoteUrl: '/remote.git',
  spec: { id: 'T-1', title: 'one', line: 1, done: false, description: '', after: [], files: [] },
  passedEnv: ['DATABASE_HOST', 'ANTHROPIC_API_KEY', 'GH_TOKEN', 'NODE_ENV', 'ANTHROPIC_AUTH_TOKEN'],
});

describe('a job as a worker runs it', () => {
  it('passes the variables the job names except this worker’s secrets, and says which it withheld', () => {
    const { job: ran, withheld } = jobForThisWorker(job);
    expect(ran.passedEnv).toEqual(['DATABASE_HOST', 'NODE_ENV']);
    expect(withheld).toEqual(['ANTHROPIC_API_KEY', 'GH_TOKEN', 'ANTHROPIC_AUTH_TOKEN']);
    expect(job.passedEnv).toHaveLength(5); // the queued job is left as it is
  });

  it('runs a job that says sandbox: off in its sandbox all the same', () => {
    const off = { ...job, config: { ...job.config, sandbox: 'off' as const } };
    const { job: ran, sandboxKept } = jobForThisWorker(off);
    expect(ran.config.sandbox).toBe('auto');
    expect(sandboxKept).toBe(true);
    expect(jobForThisWorker(job).sandboxKept).toBe(false);
  });
});
