/**
 * A worker's side of the attempt queue on BullMQ.
 *
 * Invariants:
 * - a BullMQ job completes when its handler returns, or once its final event (`result` or `failed`) is in
 *   its stream; a handler that throws without one, or whose job this worker gave up, hands the job back;
 * - a job this worker gave up (close without drain) is sealed: nothing more is written for it from here;
 * - the lock is renewed while the handler runs; a worker that dies stops renewing, and another worker's
 *   stalled check puts the job back after the lock expired (up to `maxStalledCount` times);
 * - the handler gets only a job whose seal holds ({@link openJob}); any other is refused, said, and ended
 *   with a sealed `failed` event, its content never run; every event is sealed with this worker's id and the
 *   job's lock token, and control messages pass the job's {@link ControlGate} (the others are named and dropped).
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { UnrecoverableError, Worker, WaitingError, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { AttemptJob, JobChannel, WorkerIdentity, WorkerQueue } from '../../ports/attempt-queue.js';
import { attemptJobId, QUEUE_NAME } from './bullmq-names.js';
import type { FleetKeys } from './fleet-secret.js';
import { openJob } from './sealed-messages.js';
import { StreamJobChannel, type Writer } from './stream-job-channel.js';
import { errorReporter, type QueueLog } from './bullmq-coordinator.js';
import { connect, connectionOptions, keyPrefix } from './redis-connection.js';
import { beat, forget, HEARTBEAT_MS } from './redis-heartbeat.js';
import { jobKeys, lastSeq } from './redis-streams.js';
import type { QueueAddress } from './redis-url.js';

export interface WorkerTiming {
  /** how long a job's lock lasts without renewal: a dead worker's job is taken by another after it */
  lockMs: number;
  /** how often this worker looks for stalled jobs (of any worker) */
  stalledCheckMs: number;
  heartbeatMs: number;
  /** how often a job may stall before BullMQ fails it */
  maxStalledCount: number;
  /** how many times a job may start on workers before this one reports it failed instead of handing it back */
  maxStarts: number;
  /** close without draining waits this long for aborted handlers to end, then returns (their locks lapse with the process) */
  giveUpMs: number;
}

/** How long a finished job and its streams stay in Redis (a week: longer than any run that may ask for them again). */
export const RETAIN_MS = 7 * 24 * 3600 * 1000;

export const DEFAULT_TIMING: WorkerTiming = {
  lockMs: 30_000,
  stalledCheckMs: 15_000,
  heartbeatMs: HEARTBEAT_MS,
  maxStalledCount: 3,
  maxStarts: 5,
  giveUpMs: 10_000,
};

export function newIdentity(concurrency: number): WorkerIdentity {
  const host = hostname();
  return { id: `${host}-${process.pid}-${randomBytes(3).toString('hex')}`, host, concurrency };
}

type Handler = (job: AttemptJob, channel: JobChannel, signal: AbortSignal) => Promise<void>;

interface Running {
  controller: AbortController;
  channel: StreamJobChannel | null;
  /** the job's lock is no longer this worker's: nothing of the job may be touched from here */
  lost: boolean;
}

export class BullmqWorkerQueue implements WorkerQueue {
  readonly #address: QueueAddress;
  readonly #redis: Redis;
  readonly #prefix: string;
  #identity: WorkerIdentity | null;
  readonly #timing: WorkerTiming;
  readonly #log: QueueLog;
  readonly #keys: FleetKeys;
  readonly #running = new Map<string, Running>();
  #worker: Worker | null = null;
  #refusing: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #closing: Promise<void> | null = null;
  #closed = false;

  /**
   * A worker side on `address`; commands wait until Redis answers (see `open` to wait for it first).
   * `identity`, when known, starts the heartbeat now; else `process` gives it.
   */
  constructor(
    address: QueueAddress,
    keys: FleetKeys,
    log: QueueLog,
    timing: Partial<WorkerTiming> = {},
    identity: WorkerIdentity | null = null,
    redis?: Redis,
  ) {
    this.#address = address;
    this.#keys = keys;
    this.#prefix = keyPrefix(address);
    this.#timing = { ...DEFAULT_TIMING, ...timing };
    this.#log = log;
    if (redis === undefined) {
      redis = new Redis(connectionOptions(address));
      redis.on('error', errorReporter(log, address));
    }
    this.#redis = redis;
    this.#identity = null;
    if (identity !== null) this.#identify(identity);
  }

  /** Connects (Redis must answer within `connectTimeoutMs`, else it rejects naming the error) and starts the heartbeat. */
  static async open(
    address: QueueAddress,
    keys: FleetKeys,
    identity: WorkerIdentity,
    log: QueueLog,
    timing: Partial<WorkerTiming> = {},
    connectTimeoutMs = 10_000,
  ): Promise<BullmqWorkerQueue> {
    const redis = await connect(address, connectTimeoutMs, errorReporter(log, address));
    const queue = new BullmqWorkerQueue(address, keys, log, timing, identity, redis);
    await queue.#beat();
    return queue;
  }

  get identity(): WorkerIdentity {
    if (this.#identity === null) throw new Error('this worker has no identity before process()');
    return this.#identity;
  }

  #identify(identity: WorkerIdentity): void {
    if (this.#identity !== null) {
      if (this.#identity.id !== identity.id)
        throw new Error(`process() got identity ${identity.id}, the queue was opened for ${this.#identity.id}`);
      return;
    }
    this.#identity = identity;
    this.#timer = setInterval(() => void this.#beat(), this.#timing.heartbeatMs);
    this.#timer.unref();
  }

  async #beat(): Promise<void> {
    if (this.#closed || this.#identity === null) return;
    await beat(
      this.#redis,
      this.#prefix,
      this.#keys,
      { identity: this.#identity, running: [...this.#running.keys()], refusing: this.#refusing },
      this.#timing.heartbeatMs,
    ).catch(
      // An outage: the next beat after the reconnect writes it again; the hash expires meanwhile, as it should.
      () => undefined,
    );
  }

  async setRefusing(reason: string | null): Promise<void> {
    this.#refusing = reason;
    // Taking no more jobs; those that run go on (pausing without waiting: a handler may be the caller).
    if (reason !== null) await this.#worker?.pause(true);
    await this.#beat();
  }

  /** Takes jobs; a worker that refuses (setRefusing) takes none, and says so in its heartbeat. */
  process(identity: WorkerIdentity, handler: Handler): void {
    this.#identify(identity);
    if (this.#worker !== null) throw new Error('process() was called already');
    void this.#beat();
    if (this.#refusing !== null) return;
    const worker = new Worker(QUEUE_NAME, (job, token, signal) => this.#run(job, token, signal, handler), {
      connection: connectionOptions(this.#address),
      prefix: this.#prefix,
      name: identity.id,
      concurrency: identity.concurrency,
      lockDuration: this.#timing.lockMs,
      stalledInterval: this.#timing.stalledCheckMs,
      maxStalledCount: this.#timing.maxStalledCount,
      // Finished jobs are kept for RETAIN_MS: while a job exists in any state, a second add is a no-op.
      removeOnComplete: { age: RETAIN_MS / 1000 },
      removeOnFail: { age: RETAIN_MS / 1000 },
    });
    worker.on('error', errorReporter(this.#log, this.#address));
    // A lock that could not be renewed may be another worker's by now: this one gives the job up at once,
    // so the attempt never runs on two workers for longer than a renewal interval.
    worker.on('lockRenewalFailed', (bullIds) => {
      for (const bullId of bullIds) {
        const running = this.#running.get(attemptJobId(bullId));
        if (running === undefined) continue;
        running.lost = true;
        running.channel?.seal();
        running.controller.abort(
          new Error(`this worker lost the lock of job ${attemptJobId(bullId)}: another worker may run it now`),
        );
      }
    });
    this.#worker = worker;
  }

  async #run(
    job: Job,
    token: string | undefined,
    bullSignal: AbortSignal | undefined,
    handler: Handler,
  ): Promise<void> {
    const jobId = attemptJobId(job.id ?? '');
    const opened = openJob(this.#keys, job.data, jobId, RETAIN_MS);
    const keys = jobKeys(this.#prefix, jobId);
    const writer: Writer = {
      jobId,
      worker: this.identity.id,
      token: token ?? '',
      fleet: this.#keys,
      log: this.#log,
      retainMs: RETAIN_MS,
    };
    if (!opened.ok) {
      // Nothing of it runs: the coordinator following the job learns why from a sealed final event.
      this.#log('warn', `job ${jobId} refused: ${opened.why}; nothing of it runs`);
      const channel = new StreamJobChannel(this.#redis, keys, await lastSeq(this.#redis, keys), writer);
      await channel.emit({ kind: 'claimed', worker: this.identity });
      const message = `job ${jobId} was refused by worker ${this.identity.id}: ${opened.why}`;
      await channel.emit({ kind: 'failed', error: { kind: 'refused', message } });
      // Failed, not completed: a worker whose own secret is wrong must not pass for one that ran the job.
      throw new UnrecoverableError(message);
    }
    const data = opened.job;
    const running: Running = { controller: new AbortController(), channel: null, lost: false };
    this.#running.set(data.jobId, running);
    bullSignal?.addEventListener('abort', () => running.controller.abort(bullSignal.reason), { once: true });
    // Written before the handler starts: whoever sees the job's first event sees this worker running it.
    await this.#beat();
    let failure: unknown = null;
    try {
      const channel = new StreamJobChannel(this.#redis, keys, await lastSeq(this.#redis, keys), writer);
      running.channel = channel;
      if (running.controller.signal.aborted) channel.seal();
      try {
        await handler(data, channel, running.controller.signal);
        // A handler that returns is done with the job, unless this worker had given the job up by then.
        if (!running.lost && !running.controller.signal.aborted) return;
      } catch (error) {
        failure = error;
      }
      if (channel.finished) return;
      // Started too often (a handler that keeps failing on every worker): the coordinator is told, once.
      if (!running.controller.signal.aborted && job.attemptsStarted >= this.#timing.maxStarts) {
        const message = failure instanceof Error ? failure.message : 'the handler ended without a result';
        await channel.emit({
          kind: 'failed',
          error: { kind: 'error', message: `job started ${job.attemptsStarted} times without an outcome: ${message}` },
        });
        return;
      }
      channel.seal();
    } finally {
      this.#running.delete(data.jobId);
      void this.#beat();
    }
    if (failure !== null && !running.controller.signal.aborted) {
      this.#log(
        'warn',
        `job ${data.jobId} handed back: ${failure instanceof Error ? failure.message : String(failure)}`,
      );
    }
    // With its lock lost the job is not this worker's to move: the stalled check (or its new worker) has it.
    if (!running.lost) await job.moveToWait(token);
    throw new WaitingError();
  }

  close(drain: boolean): Promise<void> {
    if (!drain) {
      for (const r of this.#running.values()) {
        r.channel?.seal();
        r.controller.abort(new Error('the worker stops: the job goes back to the queue'));
      }
    }
    this.#closing ??= (async () => {
      try {
        await this.#worker?.close();
      } finally {
        this.#closed = true;
        if (this.#timer !== null) clearInterval(this.#timer);
        if (this.#identity !== null) await forget(this.#redis, this.#prefix, this.#identity.id).catch(() => undefined);
        await this.#redis.quit().catch(() => this.#redis.disconnect());
      }
    })();
    if (drain) return this.#closing;
    // A handler that ignores its abort must not hold the worker forever: its job's lock lapses once this process ends.
    let timer: NodeJS.Timeout | undefined;
    const givenUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#timing.giveUpMs);
      timer.unref();
    });
    return Promise.race([this.#closing.then(() => true), givenUp.then(() => false)]).then(async (closed) => {
      clearTimeout(timer);
      if (closed) return;
      this.#closed = true;
      if (this.#timer !== null) clearInterval(this.#timer);
      if (this.#identity !== null) await forget(this.#redis, this.#prefix, this.#identity.id).catch(() => undefined);
    });
  }
}
