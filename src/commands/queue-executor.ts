/**
 * `--queue` on the coordinator: the fleet's attempts go to workers through BullMQ on Redis, with the git
 * remote of `remote:` (default `origin`) as the data plane (workers fetch from and push to the URL it names).
 *
 * Before anything is written: that remote must exist and Redis must answer, else exit 2 with what is missing.
 */
import { isAbsolute, resolve } from 'node:path';
import { BullmqCoordinatorQueue, type QueueLog } from '../adapters/queue/bullmq-coordinator.js';
import type { QueueAccess } from '../adapters/queue/queue-guard.js';
import type { FleetServices } from '../core/fleet/fleet.js';
import type { TelemetrySources } from './session-telemetry.js';
import { UsageError } from '../domain/errors.js';
import { queueRemote, withQueue } from './remote-attempts.js';

const CONNECT_TIMEOUT_MS = 10_000;

export interface OpenedQueue {
  services: FleetServices;
  /** one line on the workers live now, for the start of a run */
  census(): Promise<{ level: 'info' | 'warn'; message: string }>;
  /** the OpenTelemetry gauges fed from the queue; the workers record the phase spans */
  telemetry: TelemetrySources;
  close(): Promise<void>;
}

/** A URL workers can reach from any folder: a relative local path is made absolute from the repository. */
export function workerUrl(url: string, repoRoot: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/]+@[^:]+:/.test(url) || isAbsolute(url)) return url;
  return resolve(repoRoot, url);
}

/**
 * `services` with every attempt sent to workers through the queue at `address`. `traceparentOf`: the
 * attempt's span on the coordinator (SessionTelemetry.traceparentOf), carried by each job.
 */
export async function openQueue(
  address: QueueAccess,
  services: FleetServices,
  log: QueueLog,
  traceparentOf?: (taskId: string, attempt: number) => string | null,
  remoteName = 'origin',
): Promise<OpenedQueue> {
  const remote = await queueRemote(services.git, remoteName);
  let queue: BullmqCoordinatorQueue;
  try {
    queue = await BullmqCoordinatorQueue.open(address, address.keys, log, CONNECT_TIMEOUT_MS);
  } catch (error) {
    throw new UsageError(
      `--queue: cannot reach Redis at ${address.display}: ${(error as Error).message}. Start Redis (redis-server), or check the URL`,
    );
  }
  let closing: Promise<void> | null = null;
  return {
    services: withQueue(
      services,
      queue,
      { remote: remote.remote, remoteUrl: workerUrl(remote.remoteUrl, services.git.root) },
      undefined,
      traceparentOf,
    ),
    telemetry: {
      queueDepth: () => queue.depth(),
      workers: async () => (await queue.workers()).filter((w) => w.refusing === null).length,
      phaseSpans: false,
    },
    census: async () => {
      const workers = await queue.workers();
      const refusing = workers.filter((w) => w.refusing !== null);
      const taking = workers.length - refusing.length;
      if (taking === 0) {
        const why = refusing.length === 0 ? '' : ` (${refusing.length} refusing: ${refusing[0]!.refusing})`;
        return {
          level: 'warn',
          message: `no worker takes jobs from ${address.display} yet${why}: attempts wait until one does (loopfleet worker --queue ${address.display})`,
        };
      }
      const slots = workers.filter((w) => w.refusing === null).reduce((n, w) => n + w.identity.concurrency, 0);
      return {
        level: 'info',
        message: `${taking} worker(s) take jobs from ${address.display}, ${slots} attempt(s) at once${refusing.length === 0 ? '' : `; ${refusing.length} refusing`}`,
      };
    },
    close: () => (closing ??= queue.close()),
  };
}
