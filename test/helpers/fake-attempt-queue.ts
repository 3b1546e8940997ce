/**
 * Both sides of the attempt queue in one process, faithful to the port: jobs idempotent by id, taken by one
 * worker at a time, handed back when a handler throws or its worker dies; events numbered per job from 1,
 * delivered in order and redelivered from the first unacknowledged one after a reconnect (here: a lost
 * acknowledgement, see `loseAck`); control messages in order; a cancel removes a waiting job and aborts a
 * running one.
 */
import type {
  AttemptJob,
  ControlMessage,
  CoordinatorQueue,
  JobChannel,
  SequencedEvent,
  WireError,
  WorkerEvent,
  WorkerIdentity,
  WorkerInfo,
  WorkerQueue,
} from '../../src/ports/attempt-queue.js';

type Handler = (job: AttemptJob, channel: JobChannel, signal: AbortSignal) => Promise<void>;

/** Wakes every waiter on the next change. */
class Changes {
  #waiters: Array<() => void> = [];

  notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  next(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      this.#waiters.push(done);
    });
  }
}

interface Running {
  worker: FakeWorkerQueue;
  controller: AbortController;
  /** set once the job is no longer this handler's: what it emits is dropped, as a dead process's would be */
  revoked: boolean;
  settled: Promise<void>;
}

interface JobRecord {
  job: AttemptJob;
  state: 'waiting' | 'active' | 'done' | 'cancelled';
  events: SequencedEvent[];
  acked: Set<number>;
  messages: ControlMessage[];
  running: Running | null;
  /** bumped by a reconnect: live event streams deliver the unacknowledged events again */
  rewinds: number;
  /** events whose acknowledgement was lost once already */
  lostOnce: Set<number>;
  /** how many times a worker took it */
  taken: number;
  changes: Changes;
}

const TERMINAL = new Set<WorkerEvent['kind']>(['result', 'failed']);

export class FakeAttemptQueue implements CoordinatorQueue {
  readonly #jobs = new Map<string, JobRecord>();
  readonly #waiting: string[] = [];
  readonly #workers = new Set<FakeWorkerQueue>();
  #loseAck: ((jobId: string, delivered: SequencedEvent) => boolean) | null = null;
  /** every delivery as it was made, in order: `jobId#seq` (a redelivery appears twice) */
  readonly delivered: string[] = [];
  /** every ack as it was made, in order: `jobId#seq` */
  readonly acks: string[] = [];
  readonly enqueued: string[] = [];
  readonly cancelled: Array<{ jobId: string; error: WireError; state: JobRecord['state'] | 'unknown' }> = [];
  readonly changes = new Changes();

  /** a worker process: its own WorkerQueue on this queue */
  worker(): FakeWorkerQueue {
    const w = new FakeWorkerQueue(this);
    this.#workers.add(w);
    return w;
  }

  /**
   * Acknowledgements of the events `test` picks are lost, each once (a connection that dropped just then):
   * the job's stream delivers again from the first event not acknowledged.
   */
  loseAcks(test: (jobId: string, delivered: SequencedEvent) => boolean): void {
    this.#loseAck = test;
  }

  job(jobId: string): Readonly<JobRecord> | undefined {
    return this.#jobs.get(jobId);
  }

  jobIds(): string[] {
    return [...this.#jobs.keys()];
  }

  /** resolves once `test` holds after some change of the queue (a job taken, an event, an ack) */
  async until(test: () => boolean, signal: AbortSignal = new AbortController().signal): Promise<void> {
    while (!test()) await this.changes.next(signal);
  }

  async enqueue(job: AttemptJob): Promise<void> {
    if (this.#jobs.has(job.jobId)) return;
    this.#jobs.set(job.jobId, {
      job: structuredClone(job),
      state: 'waiting',
      events: [],
      acked: new Set(),
      messages: [],
      running: null,
      rewinds: 0,
      lostOnce: new Set(),
      taken: 0,
      changes: new Changes(),
    });
    this.#waiting.push(job.jobId);
    this.enqueued.push(job.jobId);
    this.#changed();
    this.dispatch();
  }

  async *events(jobId: string, signal: AbortSignal): AsyncIterable<SequencedEvent> {
    const record = this.#need(jobId);
    let cursor = 0;
    let rewinds = record.rewinds;
    for (;;) {
      if (signal.aborted) return;
      if (record.rewinds !== rewinds) {
        rewinds = record.rewinds;
        cursor = 0;
      }
      // Delivered from the first one not acknowledged; an acknowledged event is never delivered again.
      while (cursor < record.events.length && record.acked.has(record.events[cursor]!.seq)) cursor++;
      if (cursor < record.events.length) {
        const next = record.events[cursor++]!;
        this.delivered.push(`${jobId}#${next.seq}`);
        yield structuredClone(next);
        continue;
      }
      const last = record.events.at(-1);
      if (last !== undefined && TERMINAL.has(last.event.kind) && record.acked.has(last.seq)) return;
      await record.changes.next(signal);
    }
  }

  async ack(jobId: string, seq: number): Promise<void> {
    const record = this.#need(jobId);
    const key = `${jobId}#${seq}`;
    const event = record.events[seq - 1];
    if (event !== undefined && !record.lostOnce.has(seq) && this.#loseAck?.(jobId, event) === true) {
      record.lostOnce.add(seq);
      record.rewinds++;
      record.changes.notify();
      return;
    }
    this.acks.push(key);
    record.acked.add(seq);
    record.changes.notify();
    this.#changed();
  }

  async send(jobId: string, message: ControlMessage): Promise<void> {
    const record = this.#need(jobId);
    record.messages.push(structuredClone(message));
    record.changes.notify();
  }

  async cancel(jobId: string, error: WireError): Promise<void> {
    const record = this.#jobs.get(jobId);
    this.cancelled.push({ jobId, error, state: record?.state ?? 'unknown' });
    if (record === undefined) return;
    if (record.state === 'waiting') {
      record.state = 'cancelled';
      this.#waiting.splice(this.#waiting.indexOf(jobId), 1);
    } else if (record.state === 'active') {
      record.messages.push({ kind: 'abort', error });
    }
    record.changes.notify();
    this.#changed();
  }

  async status(jobId: string): Promise<'live' | 'ended'> {
    const record = this.#jobs.get(jobId);
    if (record === undefined || record.state === 'cancelled' || record.messages.some((m) => m.kind === 'abort'))
      return 'ended';
    const last = record.events.at(-1);
    return last !== undefined && TERMINAL.has(last.event.kind) && record.acked.has(last.seq) ? 'ended' : 'live';
  }

  async depth(): Promise<number> {
    return this.#waiting.length;
  }

  async workers(): Promise<WorkerInfo[]> {
    return [...this.#workers].filter((w) => w.identity !== null && !w.closed).map((w) => w.info());
  }

  async close(): Promise<void> {
    for (const w of this.#workers) await w.close(false);
  }

  /** hands waiting jobs, oldest first, to workers with a free slot */
  dispatch(): void {
    for (const worker of this.#workers) {
      while (this.#waiting.length > 0 && worker.free() > 0) this.#start(this.#waiting.shift()!, worker);
    }
  }

  /** the job goes back to the head of the queue, for another handler */
  handBack(jobId: string, running: Running): void {
    const record = this.#need(jobId);
    if (record.running !== running || running.revoked) return;
    running.revoked = true;
    record.running = null;
    record.state = 'waiting';
    this.#waiting.unshift(jobId);
    this.#changed();
    queueMicrotask(() => this.dispatch());
  }

  #start(jobId: string, worker: FakeWorkerQueue): void {
    const record = this.#need(jobId);
    const controller = new AbortController();
    const running: Running = { worker, controller, revoked: false, settled: Promise.resolve() };
    record.state = 'active';
    record.running = running;
    record.taken++;
    const channel: JobChannel = {
      emit: async (event) => {
        if (running.revoked) throw new Error(`job ${jobId} is no longer this worker's`);
        record.events.push({ seq: record.events.length + 1, event: structuredClone(event) });
        record.changes.notify();
        this.#changed();
      },
      messages: (signal) => this.#messages(record, signal),
    };
    running.settled = worker.handler!(structuredClone(record.job), channel, controller.signal).then(
      () => {
        if (running.revoked) return;
        running.revoked = true;
        record.running = null;
        record.state = 'done';
        this.#changed();
        queueMicrotask(() => this.dispatch());
      },
      () => this.handBack(jobId, running),
    );
    worker.running.set(jobId, running);
    void running.settled.finally(() => {
      worker.running.delete(jobId);
      this.#changed();
      queueMicrotask(() => this.dispatch());
    });
    this.#changed();
  }

  async *#messages(record: JobRecord, signal: AbortSignal): AsyncIterable<ControlMessage> {
    let cursor = 0;
    for (;;) {
      if (signal.aborted) return;
      if (cursor < record.messages.length) {
        yield structuredClone(record.messages[cursor++]!);
        continue;
      }
      await record.changes.next(signal);
    }
  }

  #changed(): void {
    this.changes.notify();
  }

  #need(jobId: string): JobRecord {
    const record = this.#jobs.get(jobId);
    if (record === undefined) throw new Error(`no job ${jobId}`);
    return record;
  }
}

export class FakeWorkerQueue implements WorkerQueue {
  readonly #queue: FakeAttemptQueue;
  identity: WorkerIdentity | null = null;
  handler: Handler | null = null;
  closed = false;
  refusing: string | null = null;
  readonly running = new Map<string, Running>();

  constructor(queue: FakeAttemptQueue) {
    this.#queue = queue;
  }

  process(identity: WorkerIdentity, handler: Handler): void {
    if (this.handler !== null) throw new Error('this worker processes jobs already');
    this.identity = identity;
    this.handler = handler;
    this.#queue.dispatch();
  }

  free(): number {
    if (this.closed || this.handler === null || this.refusing !== null) return 0;
    return this.identity!.concurrency - this.running.size;
  }

  info(): WorkerInfo {
    return {
      identity: this.identity!,
      running: [...this.running.keys()],
      seenAt: new Date().toISOString(),
      refusing: this.refusing,
    };
  }

  /**
   * `drain`: wait for the running handlers. Otherwise the worker dies: its handlers are aborted and their
   * jobs handed back at once, as a lock that expired would hand them back, whatever they still do.
   */
  async close(drain: boolean): Promise<void> {
    this.closed = true;
    const running = [...this.running.entries()];
    if (drain) {
      await Promise.all(running.map(([, r]) => r.settled));
      return;
    }
    for (const [jobId, r] of running) {
      r.controller.abort(new Error('the worker stopped'));
      this.#queue.handBack(jobId, r);
    }
  }

  async setRefusing(reason: string | null): Promise<void> {
    this.refusing = reason;
    if (reason === null) this.#queue.dispatch();
  }
}
