/** What the BullMQ adapter tests share: a real redis-server per test, queues closed after it, a job. */
import { afterEach } from 'vitest';
import { BullmqCoordinatorQueue } from '../../src/adapters/queue/bullmq-coordinator.js';
import { BullmqWorkerQueue, newIdentity, type WorkerTiming } from '../../src/adapters/queue/bullmq-worker.js';
import { parseQueueUrl } from '../../src/adapters/queue/redis-url.js';
import { TEST_KEYS } from './fleet-secret.js';
import { attemptJob } from './attempt-job.js';
import type { AttemptJob, SequencedEvent, WorkerEvent } from '../../src/ports/attempt-queue.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { emptyResult } from '../../src/core/attempt/commit-check.js';

export const FAST: Partial<WorkerTiming> = { lockMs: 1_500, stalledCheckMs: 500, heartbeatMs: 500, giveUpMs: 1_000 };

export { TEST_KEYS, TEST_SECRET } from './fleet-secret.js';
const quiet = () => undefined;

export function job(taskId: string, attempt = 1): AttemptJob {
  return attemptJob(taskId, attempt, { baseCommit: '0'.repeat(40) });
}

/** a promise with its resolver, to order a test's steps on what happened rather than on time */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export const result: WorkerEvent = { kind: 'result', result: { ...emptyResult(), outcome: 'verified' } };

/** reads the job's events, acknowledging each, until the final one */
export async function drain(
  q: BullmqCoordinatorQueue,
  jobId: string,
  onEvent: (e: SequencedEvent) => void = () => undefined,
): Promise<SequencedEvent[]> {
  const seen: SequencedEvent[] = [];
  const controller = new AbortController();
  for await (const e of q.events(jobId, controller.signal)) {
    seen.push(e);
    onEvent(e);
    await q.ack(jobId, e.seq);
  }
  return seen;
}

/** Registers the cleanup of a file's tests: each test's queues closed, its redis-server stopped. */
export function queueRig() {
  let redis: RedisServer | null = null;
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await redis?.close();
    redis = null;
  });
  return {
    closers,
    async start(): Promise<RedisServer> {
      redis = await startRedis();
      return redis;
    },
    async coordinator(url: string, log: (level: 'info' | 'warn', message: string) => void = quiet) {
      const q = await BullmqCoordinatorQueue.open(parseQueueUrl(url), TEST_KEYS, log);
      closers.push(() => q.close());
      return q;
    },
    async worker(
      url: string,
      concurrency = 1,
      timing: Partial<WorkerTiming> = FAST,
      log: (level: 'info' | 'warn', message: string) => void = quiet,
    ) {
      const q = await BullmqWorkerQueue.open(parseQueueUrl(url), TEST_KEYS, newIdentity(concurrency), log, timing);
      closers.push(() => q.close(false));
      return q;
    },
  };
}
