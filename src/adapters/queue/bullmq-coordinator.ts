/**
 * The coordinator's side of the attempt queue on BullMQ: one BullMQ job per attempt (its BullMQ id made
 * from the attempt's job id, so adding it twice is a no-op), events and control messages on the job's two
 * streams ({@link jobKeys}), workers from their heartbeats ({@link liveWorkers}).
 *
 * Invariant: every job and control message it writes is sealed with the fleet's keys ({@link sealJob},
 * {@link sealControl}); every event it yields passed the job's {@link EventGate}, and every event or
 * heartbeat it drops is named in the log.
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
import {
  ackEvent,
  controlEntries,
  eventsAfter,
  eventsBefore,
  jobKeys,
  readEvents,
  sendControl,
  settled,
} from './redis-streams.js';
import type { QueueAddress } from './redis-url.js';
import type { FleetKeys } from './fleet-secret.js';
import { EventGate, openControl, sealControl, sealJob } from './sealed-messages.js';

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
  readonly #keys: FleetKeys;
  readonly #log: QueueLog;
  /** heartbeat keys skipped and named already: each is said once */
  readonly #skipped = new Set<string>();

  private constructor(redis: Redis, queue: Queue, prefix: string, keys: FleetKeys, log: QueueLog) {
    this.#redis = redis;
    this.#queue = queue;
    this.#prefix = prefix;
    this.#keys = keys;
    this.#log = log;
  }

  /** Connects (Redis must answer within `connectTimeoutMs`, else it rejects naming the address). */
  static async open(
    address: QueueAddress,
    keys: FleetKeys,
    log: QueueLog,
    connectTimeoutMs = 10_000,
  ): Promise<BullmqCoordinatorQueue> {
    const redis = await connect(address, connectTimeoutMs, errorReporter(log, address));
    const prefix = keyPrefix(address);
    const queue = new Queue(QUEUE_NAME, { connection: connectionOptions(address), prefix });
    queue.on('error', errorReporter(log, address));
    await queue.waitUntilReady();
    return new BullmqCoordinatorQueue(redis, queue, prefix, keys, log);
  }

  async enqueue(job: AttemptJob): Promise<void> {
    // Kept when finished (no removeOnComplete): a job that exists in any state makes a second add a no-op.
    await this.#queue.add('attempt', sealJob(this.#keys, job), { jobId: bullJobId(job.jobId), attempts: 1 });
  }

  events(jobId: string, signal: AbortSignal): AsyncIterable<SequencedEvent> {
    const reader = this.#redis.duplicate();
    // Its outages are the main connection's too, which reports them; the read resumes after the reconnect.
    reader.on('error', () => undefined);
    this.#readers.add(reader);
    const readers = this.#readers;
    const keys = jobKeys(this.#prefix, jobId);
    const queue = this.#queue;
    const ended = async (): Promise<string | null> => {
      const job = await queue.getJob(bullJobId(jobId));
      if (job === undefined)
        return `job ${jobId} is no longer in Redis (restarted without its data?): the attempt is lost`;
      if ((await job.getState()) !== 'failed') return null;
      return `job ${jobId} failed in the queue without an outcome the coordinator accepts: ${job.failedReason ?? 'no reason given'}`;
    };
    const redis = this.#redis;
    const gate = new EventGate({
      keys: this.#keys,
      jobId,
      lockToken: () => redis.get(`${this.#prefix}:${QUEUE_NAME}:${bullJobId(jobId)}:lock`),
      history: (seq) => eventsBefore(redis, keys, seq),
      after: (seq) => eventsAfter(redis, keys, seq),
    });
    const log = this.#log;
    const dropped = (seq: number, why: string) => log('warn', `job ${jobId}: event ${seq} dropped: ${why}`);
    return {
      async *[Symbol.asyncIterator]() {
        try {
          yield* readEvents(reader, keys, signal, ended, gate.check, dropped);
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
    await sendControl(this.#redis, jobKeys(this.#prefix, jobId), sealControl(this.#keys, jobId, message));
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
    const control = await controlEntries(this.#redis, keys);
    if (control.some((m) => openControl(this.#keys, jobId, m)?.kind === 'abort')) return 'ended';
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
    return liveWorkers(this.#redis, this.#prefix, this.#keys, (key, why) => {
      if (this.#skipped.has(key)) return;
      this.#skipped.add(key);
      this.#log('warn', `heartbeat ${key} skipped: ${why}`);
    });
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
