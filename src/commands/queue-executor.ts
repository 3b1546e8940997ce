/**
 * `--queue` on the coordinator: the fleet's attempts go to workers through BullMQ on Redis, with the git
 * remote `origin` as the data plane (workers fetch from and push to the URL it names).
 *
 * Before anything is written: Redis must answer and `origin` must exist, else exit 2 with what is missing.
 */
import { isAbsolute, resolve } from 'node:path';
import { BullmqCoordinatorQueue } from '../adapters/bullmq-coordinator.js';
import type { QueueAddress } from '../adapters/redis-url.js';
import { RemoteExecutor } from '../core/executor/remote-executor.js';
import type { FleetServices } from '../core/fleet.js';
import { UsageError } from '../domain/errors.js';
import type { AttemptExecutor } from '../core/executor/attempt-executor.js';

export const QUEUE_REMOTE = 'origin';
const CONNECT_TIMEOUT_MS = 10_000;

export interface OpenedRemote {
  executor: AttemptExecutor;
  queue: BullmqCoordinatorQueue;
  close(): Promise<void>;
}

/** A URL workers can reach from any folder: a relative local path is made absolute from the repository. */
function workerUrl(url: string, repoRoot: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/]+@[^:]+:/.test(url) || isAbsolute(url)) return url;
  return resolve(repoRoot, url);
}

export async function openRemoteExecutor(address: QueueAddress, services: FleetServices, log: (level: 'info' | 'warn', message: string) => void): Promise<OpenedRemote> {
  const url = await services.git.remoteUrl(QUEUE_REMOTE);
  if (url === null) {
    throw new UsageError(`--queue: the repository has no git remote '${QUEUE_REMOTE}': workers fetch the base and push task branches through it (git remote add ${QUEUE_REMOTE} URL)`);
  }
  let queue: BullmqCoordinatorQueue;
  try {
    queue = await BullmqCoordinatorQueue.open(address, log, CONNECT_TIMEOUT_MS);
  } catch (error) {
    throw new UsageError(`--queue: cannot reach Redis at ${address.display}: ${(error as Error).message}. Start Redis (redis-server), or check the URL`);
  }
  const executor = new RemoteExecutor({
    queue,
    remoteUrl: workerUrl(url, services.git.root),
    remote: QUEUE_REMOTE,
    git: services.git,
    workspace: services.workspace,
    warn: (message) => log('warn', message),
  });
  let closing: Promise<void> | null = null;
  return { executor, queue, close: () => (closing ??= queue.close()) };
}
