/**
 * A coordinator and worker machines in one process: real repositories (the coordinator's, a bare remote,
 * one cache clone per worker), the real pipeline on each worker, the in-memory queue between them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRepo } from '../../src/commands/repo.js';
import { buildServices } from '../../src/commands/services.js';
import { defaultConfig } from '../../src/core/backlog/config.js';
import { withQueue, workerHandler, type JobHandler } from '../../src/commands/remote-attempts.js';
import type { FleetServices } from '../../src/core/fleet/fleet.js';
import type { WorkerIdentity } from '../../src/ports/attempt-queue.js';
import { WORK_DIR } from '../../src/domain/layout.js';
import { FakeModel, type FakeScript } from './fake-model.js';
import { git } from './git-repo.js';
import type { FakeAttemptQueue, FakeWorkerQueue } from './fake-attempt-queue.js';

export const TEST_ENV = { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };

async function tempDir(cleanups: Array<() => Promise<void>>, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A bare remote holding the coordinator's `main`, known to the coordinator as `origin`. */
export async function bareRemote(cleanups: Array<() => Promise<void>>, root: string): Promise<string> {
  const remote = join(await tempDir(cleanups, 'loopfleet-remote-'), 'remote.git');
  await git(root, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
  await git(root, 'remote', 'add', 'origin', remote);
  await git(root, 'push', '--quiet', 'origin', 'main');
  return remote;
}

/** The coordinator's services with its attempts sent through `queue`. */
export function remoteServices(
  queue: FakeAttemptQueue,
  remote: string,
  traceparentOf?: (taskId: string, attempt: number) => string | null,
): (s: FleetServices) => FleetServices {
  return (s) => withQueue(s, queue, { remote: 'origin', remoteUrl: remote }, undefined, traceparentOf);
}

export interface WorkerMachine {
  identity: WorkerIdentity;
  model: FakeModel;
  cache: string;
  queue: FakeWorkerQueue;
  /** takes jobs from now on */
  start(): void;
}

/** A worker's own side: its cache (a clone of the remote), its own pipeline and model, and its job handler. */
export async function workerPipeline(
  cleanups: Array<() => Promise<void>>,
  remote: string,
  script: FakeScript,
  name: string,
  concurrency = 1,
): Promise<{ identity: WorkerIdentity; model: FakeModel; cache: string; handler: JobHandler }> {
  const cache = join(await tempDir(cleanups, `loopfleet-${name}-`), 'cache');
  await git(tmpdir(), 'clone', '--quiet', remote, cache);
  const repo = await findRepo(cache);
  const model = new FakeModel(script);
  const services = {
    ...(await buildServices(repo, { path: repo.backlogPath, config: defaultConfig(), tasks: [] }, TEST_ENV)),
    model,
    cliModel: model,
  };
  await services.git.ensureExcluded(`/${WORK_DIR}/`);
  const identity: WorkerIdentity = { id: `${name}-1`, host: name, concurrency };
  return { identity, model, cache, handler: workerHandler({ repo, services, identity, env: TEST_ENV }) };
}

/** A worker machine: {@link workerPipeline} taking jobs from the in-memory queue. */
export async function workerMachine(
  cleanups: Array<() => Promise<void>>,
  queue: FakeAttemptQueue,
  remote: string,
  script: FakeScript,
  name: string,
  concurrency = 1,
): Promise<WorkerMachine> {
  const { identity, model, cache, handler } = await workerPipeline(cleanups, remote, script, name, concurrency);
  const worker = queue.worker();
  return { identity, model, cache, queue: worker, start: () => worker.process(identity, handler) };
}
