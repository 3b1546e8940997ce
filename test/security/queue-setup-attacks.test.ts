/**
 * A worker's own limits against what a signed job asks: setup outside the sandbox only when the coordinator
 * vouched for base and the worker allows host setup; environment names only from the worker's `--env`,
 * never telemetry settings or database URLs; no branch but `loop/<task>`. Real redis-server, real git
 * (a bare remote, the worker's cache), the real pipeline and bubblewrap on the worker.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRepo } from '../../src/commands/repo.js';
import { workerHandler } from '../../src/commands/remote-attempts.js';
import { buildServices } from '../../src/commands/services.js';
import { defaultConfig } from '../../src/core/backlog/config.js';
import type { WorkerPolicy } from '../../src/core/executor/job-policy.js';
import { baseRef } from '../../src/core/executor/remote-branches.js';
import { WORK_DIR } from '../../src/domain/layout.js';
import type { SequencedEvent } from '../../src/ports/attempt-queue.js';
import { attemptJob } from '../helpers/attempt-job.js';
import { drain, queueRig } from '../helpers/bullmq-support.js';
import { FakeModel } from '../helpers/fake-model.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { TEST_ENV } from '../helpers/remote-harness.js';

const rig = queueRig();
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Setup writes the environment it got into the worktree and a canary in /tmp, then fails (no agent runs). */
const SETUP = 'env > env.txt; touch "$CANARY_DIR/$LOOPFLEET_TASK_ID"; exit 7';

async function world() {
  const canaries = await mkdtemp(join(tmpdir(), 'loopfleet-canary-'));
  cleanups.push(() => rm(canaries, { recursive: true, force: true }));
  const repo = await makeRepo({ 'README.md': 'hello\n' });
  cleanups.push(repo.cleanup);
  const remote = join(await mkdtemp(join(tmpdir(), 'loopfleet-remote-')), 'remote.git');
  cleanups.push(() => rm(join(remote, '..'), { recursive: true, force: true }));
  await git(repo.root, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
  await git(repo.root, 'remote', 'add', 'origin', remote);
  await git(repo.root, 'push', '--quiet', 'origin', 'main');
  const base = await git(repo.root, 'rev-parse', 'main');
  await git(repo.root, 'push', '--quiet', 'origin', `${base}:${baseRef(base)}`);
  const cache = join(await mkdtemp(join(tmpdir(), 'loopfleet-worker-')), 'cache');
  cleanups.push(() => rm(join(cache, '..'), { recursive: true, force: true }));
  await git(tmpdir(), 'clone', '--quiet', remote, cache);
  return { canaries, remote, base, cache };
}

async function worker(w: Awaited<ReturnType<typeof world>>, redisUrl: string, policy: WorkerPolicy) {
  const repo = await findRepo(w.cache);
  const model = new FakeModel(() => ({}));
  const env = {
    ...TEST_ENV,
    CANARY_DIR: w.canaries,
    MY_SETTING: 'passed',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer otel-secret',
    DATABASE_URL: 'postgres://app:db-secret@db/app',
  };
  const services = {
    ...(await buildServices(repo, { path: repo.backlogPath, config: defaultConfig(), tasks: [] }, env)),
    model,
    cliModel: model,
  };
  await services.git.ensureExcluded(`/${WORK_DIR}/`);
  const queue = await rig.worker(redisUrl);
  const { identity } = queue;
  queue.process(identity, workerHandler({ repo, services, identity, env, policy }));
  return { worktree: (id: string) => join(repo.workDir, id) };
}

function job(w: Awaited<ReturnType<typeof world>>, taskId: string, setupOnHost: boolean) {
  return attemptJob(taskId, 1, {
    remoteUrl: w.remote,
    baseCommit: w.base,
    config: { ...defaultConfig(), setup: SETUP, env: ['MY_SETTING', 'OTEL_EXPORTER_OTLP_HEADERS', 'DATABASE_URL'] },
    passedEnv: ['MY_SETTING', 'OTEL_EXPORTER_OTLP_HEADERS', 'DATABASE_URL'],
    setupOnHost,
  });
}

const outputOf = (events: SequencedEvent[]) =>
  events
    .flatMap((e) => (e.event.kind === 'output' || e.event.kind === 'notice' ? [JSON.stringify(e.event)] : []))
    .join('\n');

describe('a worker’s setup and environment, whatever a signed job asks', () => {
  it('agent code landed on base before a worker’s setup: the job does not vouch for base, so setup runs in the sandbox; only a vouched job on a worker that allows it runs on the host', {
    timeout: 120_000,
  }, async () => {
    const redis = await rig.start();
    const w = await world();
    const everything = ['MY_SETTING', 'OTEL_EXPORTER_OTLP_HEADERS', 'DATABASE_URL'];
    const machine = await worker(w, redis.url, { remotes: [w.remote], env: everything, hostSetup: true });
    const c = await rig.coordinator(redis.url);

    // After a landing the coordinator's SetupTrust says base is not the person's: setupOnHost false.
    await c.enqueue(job(w, 'T-1', false));
    const landed = await drain(c, 'T-1:1');
    expect(landed.at(-1)!.event).toMatchObject({ kind: 'result', result: { outcome: 'setup-failed' } });
    expect(outputOf(landed)).toMatch(/runs in the sandbox: this worker has not been told/);
    expect(existsSync(join(w.canaries, 'T-1'))).toBe(false);

    // The same job vouched for: on the host (the canary proves this test can see a host run).
    await c.enqueue(job(w, 'T-2', true));
    const vouched = await drain(c, 'T-2:1');
    expect(vouched.at(-1)!.event).toMatchObject({ kind: 'result', result: { outcome: 'setup-failed' } });
    expect(existsSync(join(w.canaries, 'T-2'))).toBe(true);

    // Neither run got a telemetry header or a database URL, though the job listed them and --env allowed them.
    for (const id of ['T-1', 'T-2']) {
      const env = await readFile(join(machine.worktree(id), 'env.txt'), 'utf8');
      expect(env).toMatch(/^MY_SETTING=passed$/m);
      expect(env).not.toMatch(/OTEL_EXPORTER_OTLP_HEADERS|otel-secret|DATABASE_URL|db-secret|LOOPFLEET_QUEUE_SECRET/);
    }
    expect(outputOf(landed)).toMatch(/does not pass OTEL_EXPORTER_OTLP_HEADERS, DATABASE_URL to job T-1:1/);
  });

  it('a worker without --allow-host-setup runs even a vouched job’s setup in its sandbox', {
    timeout: 120_000,
  }, async () => {
    const redis = await rig.start();
    const w = await world();
    await worker(w, redis.url, { remotes: [w.remote], env: ['MY_SETTING'], hostSetup: false });
    const c = await rig.coordinator(redis.url);
    await c.enqueue(job(w, 'T-3', true));
    const events = await drain(c, 'T-3:1');
    expect(outputOf(events)).toMatch(/runs in the sandbox/);
    expect(existsSync(join(w.canaries, 'T-3'))).toBe(false);
  });

  it('a signed job naming main as its branch is refused and nothing is pushed', { timeout: 120_000 }, async () => {
    const redis = await rig.start();
    const w = await world();
    await worker(w, redis.url, { remotes: [w.remote], env: [], hostSetup: false });
    const c = await rig.coordinator(redis.url);
    const before = await git(w.cache, 'ls-remote', w.remote);
    await c.enqueue({ ...job(w, 'T-4', false), branch: 'main' });
    const events = await drain(c, 'T-4:1');
    expect(events.map((e) => e.event.kind)).toEqual(['claimed', 'failed']);
    expect(events[1]!.event).toMatchObject({
      error: { kind: 'refused', message: expect.stringMatching(/names branch "main"; a worker pushes only loop\/T-4/) },
    });
    expect(await git(w.cache, 'ls-remote', w.remote)).toBe(before);
  });
});
