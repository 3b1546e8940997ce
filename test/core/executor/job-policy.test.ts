import { describe, expect, it } from 'vitest';
import { applyPolicy, redactUrls, withoutUserinfo, type WorkerPolicy } from '../../../src/core/executor/job-policy.js';
import { attemptJob } from '../../helpers/attempt-job.js';

const policy: WorkerPolicy = {
  remotes: ['https://worker:own-token@git.example.com/org/repo.git'],
  env: ['DATABASE_HOST', 'NODE_ENV', 'OTEL_EXPORTER_OTLP_HEADERS', 'DATABASE_URL', 'GH_TOKEN'],
  hostSetup: false,
};
const job = attemptJob('T-1', 1, {
  remoteUrl: 'https://coordinator:their-token@git.example.com/org/repo.git',
  passedEnv: [
    'DATABASE_HOST',
    'ANTHROPIC_API_KEY',
    'GH_TOKEN',
    'NODE_ENV',
    'OTEL_EXPORTER_OTLP_HEADERS',
    'DATABASE_URL',
    'LOOPFLEET_QUEUE_SECRET',
    'SENTRY_DSN',
  ],
  setupOnHost: true,
});

function applied(change: Partial<typeof job> = {}, p: WorkerPolicy = policy) {
  const out = applyPolicy({ ...job, ...change }, p);
  if (!out.ok) throw new Error(out.why);
  return out;
}

describe('a job as a worker runs it: the worker’s rules over the job’s word', () => {
  it('passes only the names the worker allows, never telemetry, model, forge, database or queue secrets', () => {
    const { job: ran, withheld } = applied();
    expect(ran.passedEnv).toEqual(['DATABASE_HOST', 'NODE_ENV']);
    expect(withheld).toEqual([
      'ANTHROPIC_API_KEY',
      'GH_TOKEN',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'DATABASE_URL',
      'LOOPFLEET_QUEUE_SECRET',
      'SENTRY_DSN',
    ]);
    expect(job.passedEnv).toHaveLength(8); // the queued job is left as it is
  });

  it('runs a job that says sandbox: off in its sandbox all the same', () => {
    const off = { ...job, config: { ...job.config, sandbox: 'off' as const } };
    const { job: ran, sandboxKept } = applied(off);
    expect(ran.config.sandbox).toBe('auto');
    expect(sandboxKept).toBe(true);
    expect(applied().sandboxKept).toBe(false);
  });

  it('refuses a job that names another branch than loop/<task>, or a task id of another form', () => {
    for (const branch of ['main', 'refs/heads/main', 'loop/T-2', 'loop/T-1/../main'])
      expect(applyPolicy({ ...job, branch }, policy)).toMatchObject({
        ok: false,
        why: expect.stringMatching(/branch/),
      });
    expect(applyPolicy({ ...job, taskId: 'main', branch: 'loop/main' }, policy)).toMatchObject({ ok: false });
    expect(applyPolicy({ ...job, jobId: 'T-2:1' }, policy)).toMatchObject({ ok: false });
  });

  it('uses the worker’s own spelling of its remote, compared without userinfo, and refuses any other', () => {
    expect(applied().job.remoteUrl).toBe(policy.remotes[0]);
    const other = applyPolicy({ ...job, remoteUrl: 'https://git.example.com/evil/repo.git' }, policy);
    expect(other).toMatchObject({ ok: false, why: expect.stringMatching(/not one this worker was started for/) });
    const scp = applyPolicy(
      { ...job, remoteUrl: 'attacker@git.example.com:org/repo.git' },
      {
        ...policy,
        remotes: ['git@git.example.com:org/repo.git'],
      },
    );
    expect(scp.ok).toBe(true);
  });

  it('runs setup on the host only when the worker allows it and the sealed job vouches for base', () => {
    expect(applied().hostSetup).toBe(false);
    expect(applied({}, { ...policy, hostSetup: true }).hostSetup).toBe(true);
    expect(applied({ setupOnHost: false }, { ...policy, hostSetup: true }).job.setupOnHost).toBe(false);
  });

  it('strips credentials from every URL it reports', () => {
    expect(withoutUserinfo('https://u:p@host/x.git')).toBe('https://host/x.git');
    expect(redactUrls('fatal: could not read https://u:secret@host/x.git and ssh://git@h/y')).toBe(
      'fatal: could not read https://…@host/x.git and ssh://…@h/y',
    );
  });
});
