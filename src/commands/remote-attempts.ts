/**
 * What `--queue` wires: a coordinator whose attempts run on workers (RemoteExecutor over the queue's
 * coordinator side), and a worker's job handler (runJob with the worker's own pipeline on its cache).
 */
import { join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { withoutUserinfo } from '../domain/remote-url.js';
import { RemoteExecutor } from '../core/executor/remote-executor.js';
import { runJob } from '../core/executor/job-runner.js';
import type { WorkerPolicy } from '../core/executor/job-policy.js';
import { InProcessExecutor } from '../core/executor/attempt-executor.js';
import { Pipeline } from '../core/attempt/pipeline.js';
import { PortPool } from '../core/attempt/port-pool.js';
import { defaultConfig } from '../core/backlog/config.js';
import { systemClock } from '../ports/clock.js';
import type { FleetServices } from '../core/fleet/fleet.js';
import type { PipelineServices } from '../core/attempt/attempt-io.js';
import type { AttemptJob, CoordinatorQueue, JobChannel, WorkerIdentity } from '../ports/attempt-queue.js';
import type { GitPort, RemoteAuth } from '../ports/git.js';
import type { PortRange } from '../domain/types.js';
import type { Repo } from './repo.js';
import { serviceLog } from './services.js';

export interface QueueRemote {
  /** the remote's name in the coordinator's repository */
  remote: string;
  /** its URL without user information ({@link withoutUserinfo}): what workers fetch from and push to */
  remoteUrl: string;
}

/** The remote a coordinator with `--queue` shares with its workers; none by that name: exit 2, nothing started. */
export async function queueRemote(git: GitPort, name = 'origin'): Promise<QueueRemote> {
  const remoteUrl = await git.remoteUrl(name);
  if (remoteUrl === null) {
    throw new UsageError(
      `--queue: workers fetch from and push to a git remote, and this repository has no remote named ${JSON.stringify(name)} (add one: git remote add ${name} <url>)`,
    );
  }
  // A job is stored in Redis and read by every worker: the URL's own credentials stay on the coordinator.
  return { remote: name, remoteUrl: withoutUserinfo(remoteUrl) };
}

/**
 * The coordinator's services with every attempt sent to workers through `queue`. `traceparentOf`: the
 * attempt's span here (the session's telemetry), so a worker's spans join the task's trace.
 */
export function withQueue(
  services: FleetServices,
  queue: CoordinatorQueue,
  remote: QueueRemote,
  auth?: RemoteAuth,
  traceparentOf?: (taskId: string, attempt: number) => string | null,
): FleetServices {
  // The coordinator's own pipeline checks what workers say is verified: no agent of its own runs.
  const own = new Pipeline(services);
  const executor = new RemoteExecutor({
    queue,
    check: (input, made) => own.checkCommit(input, made),
    git: services.git,
    workspace: services.workspace,
    remote: remote.remote,
    remoteUrl: remote.remoteUrl,
    ...(auth === undefined ? {} : { auth }),
    ...(traceparentOf === undefined ? {} : { traceparentOf }),
    roles: services.roles,
    warn: (message) => serviceLog.target('warn', message),
  });
  return { ...services, executor };
}

export interface WorkerHandlerOptions {
  /** the worker's cache repository (see findRepo) and the services built on it */
  repo: Repo;
  services: PipelineServices;
  identity: WorkerIdentity;
  /** the worker's environment: PATH, and the values of the names a job passes (`env:`) */
  env: NodeJS.ProcessEnv;
  /** `PORT` values for the attempts this worker runs at once */
  ports?: PortRange;
  auth?: RemoteAuth;
  /** the worker's own rules over each job's word ({@link applyPolicy}) */
  policy?: WorkerPolicy;
}

export type JobHandler = (job: AttemptJob, channel: JobChannel, signal: AbortSignal) => Promise<void>;

/** The handler a WorkerQueue runs for each job: the worker's pipeline on its cache, task worktrees under it. */
export function workerHandler(options: WorkerHandlerOptions): JobHandler {
  const { repo, services } = options;
  const deps = {
    identity: options.identity,
    pipeline: new InProcessExecutor(new Pipeline(services)),
    roles: {
      own: services.roles,
      pipeline: (roles: PipelineServices['roles']) => new InProcessExecutor(new Pipeline({ ...services, roles })),
    },
    git: services.git,
    workspace: services.workspace,
    worktreeOf: (id: string) => join(repo.workDir, id),
    ports: new PortPool(options.ports ?? defaultConfig().ports),
    clock: systemClock,
    parentEnv: options.env,
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.policy === undefined ? {} : { policy: options.policy }),
  };
  return (job, channel, signal) => runJob(job, channel, signal, deps);
}
