/**
 * One job's channel on a worker: its events appended to the job's stream, each sealed with this worker's id
 * and the lock token it took the job with ({@link sealEvent}); its control messages read from the start,
 * each through the job's {@link ControlGate} (those it drops are named in the log).
 *
 * Invariants: once sealed (the job given back) or finished (its final event sent) nothing more is written;
 * event numbers continue from the stream's last one, so a worker that takes a job over goes on numbering.
 */
import type { Redis } from 'ioredis';
import type { ControlMessage, JobChannel, WorkerEvent } from '../../ports/attempt-queue.js';
import type { QueueLog } from './bullmq-coordinator.js';
import type { FleetKeys } from './fleet-secret.js';
import { appendEvent, expireStreams, isFinal, readControl, type JobKeys } from './redis-streams.js';
import { ControlGate, sealEvent } from './sealed-messages.js';

/** who writes a job's events: the job, this worker, and the lock token it took the job with */
export interface Writer {
  jobId: string;
  worker: string;
  token: string;
  fleet: FleetKeys;
  log: QueueLog;
  /** how long the job's streams stay after its final event */
  retainMs: number;
}

export class StreamJobChannel implements JobChannel {
  readonly #redis: Redis;
  readonly #keys: JobKeys;
  readonly #writer: Writer;
  #seq: number;
  #sealed = false;
  #finished = false;
  readonly #readers = new Set<Redis>();

  constructor(redis: Redis, keys: JobKeys, seq: number, writer: Writer) {
    this.#redis = redis;
    this.#keys = keys;
    this.#seq = seq;
    this.#writer = writer;
  }

  get finished(): boolean {
    return this.#finished;
  }

  seal(): void {
    this.#sealed = true;
    for (const r of this.#readers) r.disconnect();
  }

  async emit(event: WorkerEvent): Promise<void> {
    if (this.#sealed) throw new Error('this worker gave the job back: it sends nothing more for it');
    if (this.#finished) throw new Error(`the job's final event was sent already; ${event.kind} is not`);
    const seq = ++this.#seq;
    const { fleet, jobId, worker, token } = this.#writer;
    await appendEvent(this.#redis, this.#keys, seq, sealEvent(fleet, { jobId, seq, worker, token }, event));
    // Finished only once the final event is in the stream: a final event that could not be written (its
    // place taken) leaves the job to be handed back, not completed without an outcome.
    if (!isFinal(event)) return;
    this.#finished = true;
    await expireStreams(this.#redis, this.#keys, this.#writer.retainMs);
  }

  messages(signal: AbortSignal): AsyncIterable<ControlMessage> {
    const reader = this.#redis.duplicate();
    // Its outages are the main connection's too, which reports them; the read resumes after the reconnect.
    reader.on('error', () => undefined);
    this.#readers.add(reader);
    const readers = this.#readers;
    const keys = this.#keys;
    const { fleet, jobId, log } = this.#writer;
    const gate = new ControlGate(fleet, jobId);
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for await (const sealed of readControl(reader, keys, signal)) {
            const checked = gate.check(sealed);
            if ('message' in checked) yield checked.message;
            else log('warn', `job ${jobId}: a control message dropped: ${checked.dropped}`);
          }
        } finally {
          readers.delete(reader);
          reader.disconnect();
        }
      },
    };
  }
}
