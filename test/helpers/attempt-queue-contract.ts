/**
 * What every attempt queue must do, as tests any implementation runs (the in-memory one here, a Redis one
 * with a real redis-server): `make` gives a fresh queue's coordinator side and a way to start workers on it.
 * Events are ordered by promises the handlers resolve, never by time.
 */
import { describe, expect, it } from 'vitest';
import { attemptJob } from './attempt-job.js';
import type {
  AttemptJob,
  ControlMessage,
  CoordinatorQueue,
  JobChannel,
  SequencedEvent,
  WorkerQueue,
} from '../../src/ports/attempt-queue.js';

export interface QueueUnderTest {
  coordinator: CoordinatorQueue;
  worker(): WorkerQueue;
  close(): Promise<void>;
}

type Handler = (job: AttemptJob, channel: JobChannel, signal: AbortSignal) => Promise<void>;

function deferred<T = void>(): { promise: Promise<T>; fire: (value: T) => void } {
  let fire!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    fire = resolve;
  });
  return { promise, fire };
}

export function job(taskId: string, attempt = 1): AttemptJob {
  return attemptJob(taskId, attempt);
}

const identity = (id: string, concurrency = 1) => ({ id, host: id, concurrency });

/** Reads a job's events until `count` arrived (acknowledging each when `ack`), then stops following. */
async function take(q: CoordinatorQueue, jobId: string, count: number, ack: boolean): Promise<SequencedEvent[]> {
  const stop = new AbortController();
  const got: SequencedEvent[] = [];
  for await (const e of q.events(jobId, stop.signal)) {
    got.push(e);
    if (ack) await q.ack(jobId, e.seq);
    if (got.length === count) break;
  }
  stop.abort();
  return got;
}

async function messagesUntil(channel: JobChannel, test: (m: ControlMessage) => boolean): Promise<ControlMessage[]> {
  const stop = new AbortController();
  const got: ControlMessage[] = [];
  for await (const m of channel.messages(stop.signal)) {
    got.push(m);
    if (test(m)) break;
  }
  stop.abort();
  return got;
}

export function describeAttemptQueue(name: string, make: () => Promise<QueueUnderTest>): void {
  describe(`${name}: the attempt queue port`, () => {
    it('runs a job enqueued twice once; its events come numbered from 1, in order, and end after the outcome is acknowledged', async () => {
      const q = await make();
      try {
        let runs = 0;
        const w = q.worker();
        w.process(identity('w1'), async (_, channel) => {
          runs++;
          await channel.emit({ kind: 'phase', phase: 'setup' });
          await channel.emit({ kind: 'notice', message: 'hello', level: 'info' });
          await channel.emit({ kind: 'failed', error: { kind: 'error', message: 'done' } });
        });
        await q.coordinator.enqueue(job('T-1'));
        await q.coordinator.enqueue(job('T-1'));
        const all: SequencedEvent[] = [];
        for await (const e of q.coordinator.events('T-1:1', new AbortController().signal)) {
          all.push(e);
          await q.coordinator.ack('T-1:1', e.seq);
        }
        expect(all.map((e) => [e.seq, e.event.kind])).toEqual([
          [1, 'phase'],
          [2, 'notice'],
          [3, 'failed'],
        ]);
        await q.coordinator.enqueue(job('T-1'));
        expect(runs).toBe(1);
      } finally {
        await q.close();
      }
    });

    it('delivers an event not acknowledged again to the next reader, and one acknowledged never again', async () => {
      const q = await make();
      try {
        const w = q.worker();
        w.process(identity('w1'), async (_, channel) => {
          for (const message of ['one', 'two', 'three']) await channel.emit({ kind: 'notice', message, level: 'info' });
        });
        await q.coordinator.enqueue(job('T-1'));
        expect((await take(q.coordinator, 'T-1:1', 1, true)).map((e) => e.seq)).toEqual([1]);
        // read, never acknowledged: the reader went away (a coordinator restart, a lost connection)
        expect((await take(q.coordinator, 'T-1:1', 1, false)).map((e) => e.seq)).toEqual([2]);
        expect((await take(q.coordinator, 'T-1:1', 2, true)).map((e) => e.seq)).toEqual([2, 3]);
      } finally {
        await q.close();
      }
    });

    it('gives a running job its control messages in order; cancel aborts a running job and removes a waiting one', async () => {
      const q = await make();
      try {
        const seen = deferred<ControlMessage[]>();
        const started = deferred();
        const ran: string[] = [];
        const threeRan = deferred();
        const w = q.worker();
        w.process(identity('w1'), async (j, channel) => {
          ran.push(j.jobId);
          if (j.taskId === 'T-3') threeRan.fire();
          if (j.taskId !== 'T-1') return;
          const reading = messagesUntil(channel, (m) => m.kind === 'abort');
          started.fire();
          seen.fire(await reading);
        });
        await q.coordinator.enqueue(job('T-1'));
        await started.promise;
        await q.coordinator.enqueue(job('T-2'));
        expect(await q.coordinator.depth()).toBe(1);
        await q.coordinator.cancel('T-2:1', { kind: 'stop', message: 'no longer wanted' });
        expect(await q.coordinator.depth()).toBe(0);
        await q.coordinator.send('T-1:1', { kind: 'plan-answer', request: 'r1', blocker: null });
        await q.coordinator.cancel('T-1:1', {
          kind: 'gate',
          message: 'fleet cost gate',
          detail: { gate: 'fleet_cost', scope: 'fleet' },
        });
        expect(await seen.promise).toEqual([
          { kind: 'plan-answer', request: 'r1', blocker: null },
          {
            kind: 'abort',
            error: { kind: 'gate', message: 'fleet cost gate', detail: { gate: 'fleet_cost', scope: 'fleet' } },
          },
        ]);
        // the cancelled waiting job never runs: the next job enqueued runs, and it alone
        await q.coordinator.enqueue(job('T-3'));
        await threeRan.promise;
        expect(ran).toEqual(['T-1:1', 'T-3:1']);
      } finally {
        await q.close();
      }
    });

    it("hands a job whose worker dies back to another worker, which goes on numbering the job's events", async () => {
      const q = await make();
      try {
        const first = deferred<AbortSignal>();
        const dying = q.worker();
        dying.process(identity('w1'), async (_, channel, signal) => {
          await channel.emit({ kind: 'claimed', worker: identity('w1') });
          first.fire(signal);
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          throw signal.reason;
        });
        await q.coordinator.enqueue(job('T-1'));
        const signal = await first.promise;
        expect((await q.coordinator.workers()).map((i) => [i.identity.id, i.running])).toEqual([['w1', ['T-1:1']]]);
        await dying.close(false);
        expect(signal.aborted).toBe(true);
        const other = q.worker();
        other.process(identity('w2'), async (_, channel) => {
          await channel.emit({ kind: 'claimed', worker: identity('w2') });
          await channel.emit({ kind: 'failed', error: { kind: 'error', message: 'end' } });
        });
        const events = await take(q.coordinator, 'T-1:1', 3, true);
        expect(events.map((e) => [e.seq, e.event.kind === 'claimed' ? e.event.worker.id : e.event.kind])).toEqual([
          [1, 'w1'],
          [2, 'w2'],
          [3, 'failed'],
        ]);
      } finally {
        await q.close();
      }
    });

    it('says a job is live while it waits, runs or has an outcome not yet acknowledged; ended once gone, cancelled or acknowledged', async () => {
      const q = await make();
      try {
        expect(await q.coordinator.status('T-9:1')).toBe('ended');
        // No worker yet: waiting is live; a cancelled waiting job has ended.
        await q.coordinator.enqueue(job('T-2'));
        expect(await q.coordinator.status('T-2:1')).toBe('live');
        await q.coordinator.cancel('T-2:1', { kind: 'stop', message: 'stopped' });
        expect(await q.coordinator.status('T-2:1')).toBe('ended');
        const release = deferred();
        const running = deferred();
        const w = q.worker();
        w.process(identity('w1'), async (j, channel) => {
          await channel.emit({ kind: 'phase', phase: 'setup' });
          if (j.taskId === 'T-3') {
            // Runs until aborted.
            running.fire();
            await messagesUntil(channel, (m) => m.kind === 'abort');
            await channel.emit({ kind: 'failed', error: { kind: 'stop', message: 'aborted' } });
            return;
          }
          await release.promise;
          await channel.emit({ kind: 'failed', error: { kind: 'error', message: 'end' } });
        });
        await q.coordinator.enqueue(job('T-1'));
        expect((await take(q.coordinator, 'T-1:1', 1, true)).map((e) => e.seq)).toEqual([1]);
        expect(await q.coordinator.status('T-1:1')).toBe('live');
        release.fire();
        // Its outcome, read but not acknowledged (a coordinator killed then): still to be followed.
        expect((await take(q.coordinator, 'T-1:1', 1, false)).map((e) => e.event.kind)).toEqual(['failed']);
        expect(await q.coordinator.status('T-1:1')).toBe('live');
        expect((await take(q.coordinator, 'T-1:1', 1, true)).map((e) => e.event.kind)).toEqual(['failed']);
        expect(await q.coordinator.status('T-1:1')).toBe('ended');
        // A running job told to stop has ended for whoever comes next, whatever its worker still does.
        await q.coordinator.enqueue(job('T-3'));
        await running.promise;
        expect(await q.coordinator.status('T-3:1')).toBe('live');
        await q.coordinator.cancel('T-3:1', { kind: 'stop', message: 'the attempt was started again' });
        expect(await q.coordinator.status('T-3:1')).toBe('ended');
      } finally {
        await q.close();
      }
    });

    it('a handler that throws hands its job back; a worker that refuses takes none', async () => {
      const q = await make();
      try {
        const refusing = q.worker();
        await refusing.setRefusing('the sandbox self-test failed');
        const refused: string[] = [];
        refusing.process(identity('w0'), async (j) => {
          refused.push(j.jobId);
        });
        let tries = 0;
        const w = q.worker();
        const handler: Handler = async (_, channel) => {
          tries++;
          if (tries === 1) throw new Error('lost the lock');
          await channel.emit({ kind: 'failed', error: { kind: 'error', message: 'second try' } });
        };
        w.process(identity('w1'), handler);
        await q.coordinator.enqueue(job('T-1'));
        const events = await take(q.coordinator, 'T-1:1', 1, true);
        expect(events.map((e) => e.event)).toEqual([
          { kind: 'failed', error: { kind: 'error', message: 'second try' } },
        ]);
        expect(tries).toBe(2);
        expect(refused).toEqual([]);
        expect((await q.coordinator.workers()).find((i) => i.identity.id === 'w0')?.refusing).toBe(
          'the sandbox self-test failed',
        );
      } finally {
        await q.close();
      }
    });
  });
}
