/**
 * The coordinator's side of the attempt queue on BullMQ: one BullMQ job per attempt (its BullMQ id made
 * from the attempt's job id, so adding it twice is a no-op), events and control messages on the job's two
 * streams ({@link jobKeys}), workers from their heartbeats ({@link liveWorkers}).
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type {
  AttemptJob,
  ControlMessage,
  CoordinatorQueue,
  SequencedEvent,
  WireError,
  WorkerInfo,
} from '../../ports/attempt-queue.js';
import { bullJobId, QUEUE_NAME } from './bullmq-names.js';
import { connect, connectionOptions, keyPrefix } from './redis-connection.js';
import { liveWorkers } from './redis-heartbeat.js';
import { aborted, ackEvent, jobKeys, readEvents, sendControl, settled } from './redis-streams.js';
import type { QueueAddress } from './redis-url.js';

/** BullMQ states of a job that no worker holds */
const UNCLAIMED = new Set(['waiting', 'delayed', 'prioritized', 'paused', 'waiting-children']);

export interface QueueLog {
  (level: 'info' | 'warn', message: string): void;
}

export class BullmqCoordinatorQueue implements CoordinatorQueue {
  readonly #redis: Redis;
  readonly #queue: Queue;
  readonly #prefix: string;
  readonly #readers = new Set<Redis>();

  private constructor(redis: Redis, queue: Queue, prefix: string) {
    this.#redis = redis;
    this.#queue = queue;
    this.#prefix = prefix;
  }

  /** Connects (Redis must answer within `connectTimeoutMs`, else it rejects naming the address). */
  static async open(address: QueueAddress, log: QueueLog, connectTimeoutMs = 10_000): Promise<BullmqCoordinatorQueue> {
    const redis = await connect(address, connectTimeoutMs, errorReporter(log, address));
    const prefix = keyPrefix(address);
    const queue = new Queue(QUEUE_NAME, { connection: connectionOptions(address), prefix });
    queue.on('error', errorReporter(log, address));
    await queue.waitUntilReady();
    return new BullmqCoordinatorQueue(redis, queue, prefix);
  }

  async enqueue(job: AttemptJob): Promise<void> {
    // Kept when finished (no removeOnComplete): a job that exists in any state makes a second add a no-op.
    await this.#queue.add('attempt', job, { jobId: bullJobId(job.jobId), attempts: 1 });
  }

  events(jobId: string, signal: AbortSignal): AsyncIterable<SequencedEvent> {
    const reader = this.#redis.duplicate();
    // Its outages are the main connection's too, which reports them; the read resumes after the reconnect.
    reader.on('error', () => undefined);
    this.#readers.add(reader);
    const readers = this.#readers;
    const keys = jobKeys(this.#prefix, jobId);
    const queue = this.#queue;
    const exists = async () => (await queue.getJob(bullJobId(jobId))) !== undefined;
    return {
      async *[Symbol.asyncIterator]() {
        try {
          yield* readEvents(reader, keys, signal, exists);
        } finally {
          readers.delete(reader);
          reader.disconnect();
        }
      },
    };
  }

  async ack(jobId: string, seq: number): Promise<void> {
    await ackEvent(this.#redis, jobKeys(this.#prefix, jobId), seq);
  }

  async send(jobId: string, message: ControlMessage): Promise<void> {
    await sendControl(this.#redis, jobKeys(this.#prefix, jobId), message);
  }

  async cancel(jobId: string, error: WireError): Promise<void> {
    const job = await this.#queue.getJob(bullJobId(jobId));
    if (job !== undefined && UNCLAIMED.has(await job.getState())) {
      const removed = await job.remove().then(
        () => true,
        // A worker took it between getState and remove (remove refuses a locked job): abort it instead.
        () => false,
      );
      if (removed) {
        const keys = jobKeys(this.#prefix, jobId);
        await this.#redis.del(keys.events, keys.control);
        return;
      }
    }
    await this.send(jobId, { kind: 'abort', error });
  }

  async status(jobId: string): Promise<'live' | 'ended'> {
    const job = await this.#queue.getJob(bullJobId(jobId));
    const state = job === undefined ? 'gone' : await job.getState();
    if (state === 'gone' || state === 'failed' || state === 'unknown') return 'ended';
    const keys = jobKeys(this.#prefix, jobId);
    if (await aborted(this.#redis, keys)) return 'ended';
    const hasEvents = (await this.#redis.exists(keys.events)) === 1;
    // Finished, its events expired: nothing is left to follow.
    if (state === 'completed' && !hasEvents) return 'ended';
    // A finished job whose result this coordinator never applied is followed for that result.
    if (hasEvents) {
      try {
        if (await settled(this.#redis, keys)) return 'ended';
      } catch (error) {
        // No consumer group yet: nothing was ever read from it.
        if (!(error as Error).message.startsWith('NOGROUP')) throw error;
      }
    }
    return 'live';
  }

  async depth(): Promise<number> {
    return this.#queue.getJobCountByTypes('waiting', 'prioritized', 'delayed');
  }

  workers(): Promise<WorkerInfo[]> {
    return liveWorkers(this.#redis, this.#prefix);
  }

  async close(): Promise<void> {
    for (const reader of this.#readers) reader.disconnect();
    this.#readers.clear();
    await this.#queue.close();
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

/** Reports a connection's errors once per outage (ioredis repeats them on every reconnect attempt). */
export function errorReporter(log: QueueLog, address: QueueAddress): (error: Error) => void {
  let last = '';
  return (error) => {
    if (error.message === last) return;
    last = error.message;
    log('warn', `Redis at ${address.display}: ${error.message}; retrying`);
  };
}
