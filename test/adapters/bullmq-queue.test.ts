import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { BullmqCoordinatorQueue } from '../../src/adapters/bullmq-coordinator.js';
import { bullJobId, QUEUE_NAME } from '../../src/adapters/bullmq-names.js';
import { BullmqWorkerQueue, newIdentity, type WorkerTiming } from '../../src/adapters/bullmq-worker.js';
import { connectionOptions, keyPrefix } from '../../src/adapters/redis-connection.js';
import { appendEvent, jobKeys } from '../../src/adapters/redis-streams.js';
import { parseQueueUrl } from '../../src/adapters/redis-url.js';
import { defaultConfig } from '../../src/core/backlog/config.js';
import type { AttemptJob, ControlMessage, JobChannel, SequencedEvent, WorkerEvent } from '../../src/ports/attempt-queue.js';
import { jobIdOf } from '../../src/ports/attempt-queue.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';

const FAST: Partial<WorkerTiming> = { lockMs: 1_500, stalledCheckMs: 500, heartbeatMs: 500 };
const quiet = () => undefined;

let redis: RedisServer | null = null;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  await redis?.close();
  redis = null;
});

function job(taskId: string, attempt = 1): AttemptJob {
  return {
    jobId: jobIdOf(taskId, attempt),
    taskId,
    attempt,
    remoteUrl: '/nowhere.git',
    base: 'main',
    baseCommit: '0'.repeat(40),
    branch: `loop/${taskId}`,
    branchCommit: null,
    spec: { id: taskId, title: `task ${taskId}`, line: 1, done: false, description: '', after: [], files: [] },
    config: defaultConfig(),
    verifyOnly: false,
    previousPlan: null,
    approvedPlan: null,
    stopAfterPlan: false,
    rebaseFirst: false,
    evidence: null,
    passedEnv: [],
    remainingMs: null,
  };
}

/** a promise with its resolver, to order a test's steps on what happened rather than on time */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function coordinator(url: string) {
  const q = await BullmqCoordinatorQueue.open(parseQueueUrl(url), quiet);
  closers.push(() => q.close());
  return q;
}

async function worker(url: string, concurrency = 1, timing: Partial<WorkerTiming> = FAST) {
  const q = await BullmqWorkerQueue.open(parseQueueUrl(url), newIdentity(concurrency), quiet, timing);
  closers.push(() => q.close(false));
  return q;
}

/** reads the job's events, acknowledging each, until the final one */
async function drain(q: BullmqCoordinatorQueue, jobId: string, onEvent: (e: SequencedEvent) => void = () => undefined): Promise<SequencedEvent[]> {
  const seen: SequencedEvent[] = [];
  const controller = new AbortController();
  for await (const e of q.events(jobId, controller.signal)) {
    seen.push(e);
    onEvent(e);
    await q.ack(jobId, e.seq);
  }
  return seen;
}

const result: WorkerEvent = {
  kind: 'result',
  result: { outcome: 'verified', reason: null, evidence: null, plan: null, setup: null, check: null, guard: [], verdict: null, commit: null, diffStat: null, checks: [], baseline: [], proof: null },
};

describe('BullMQ attempt queue on a real redis-server', () => {
  it('adds a job once however often it is enqueued, and a worker runs it once', async () => {
    redis = await startRedis();
    const c = await coordinator(redis.url);
    await c.enqueue(job('T-1'));
    await c.enqueue(job('T-1'));
    expect(await c.depth()).toBe(1);
    const w = await worker(redis.url);
    let runs = 0;
    w.process(w.identity, async (_job, channel) => {
      runs++;
      await channel.emit({ kind: 'claimed', worker: w.identity });
      await channel.emit(result);
    });
    const events = await drain(c, 'T-1:1');
    expect(events.map((e) => e.event.kind)).toEqual(['claimed', 'result']);
    await c.enqueue(job('T-1')); // finished: still a no-op
    const ttl = Number((await redis.command('PTTL', 'lf:loopfleet:ev:T-1:1')).slice(1));
    expect(ttl).toBeGreaterThan(6 * 24 * 3600 * 1000); // the finished job's stream goes after a week
    expect(await c.depth()).toBe(0);
    expect(runs).toBe(1);
  });

  it('delivers a job’s events in order, numbered from 1 without gaps, and ends after the acknowledged result', async () => {
    redis = await startRedis();
    const c = await coordinator(redis.url);
    const w = await worker(redis.url);
    w.process(w.identity, async (_job, channel) => {
      await channel.emit({ kind: 'claimed', worker: w.identity });
      for (const phase of ['setup', 'explore', 'implement', 'verify'] as const) await channel.emit({ kind: 'phase', phase });
      for (let i = 0; i < 50; i++) await channel.emit({ kind: 'output', phase: 'verify', chunk: `line ${i}\n` });
      await channel.emit(result);
    });
    await c.enqueue(job('T-2'));
    const events = await drain(c, 'T-2:1');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 56 }, (_, i) => i + 1));
    expect(events[0]!.event).toMatchObject({ kind: 'claimed', worker: { id: w.identity.id } });
    expect(events.slice(1, 5).map((e) => (e.event as { phase: string }).phase)).toEqual(['setup', 'explore', 'implement', 'verify']);
    // All acknowledged: reading again ends at once, with nothing.
    expect(await drain(c, 'T-2:1')).toEqual([]);
  });

  it('delivers again what a coordinator read but did not acknowledge, to the coordinator that starts next', async () => {
    redis = await startRedis();
    const first = await coordinator(redis.url);
    const w = await worker(redis.url);
    const release = deferred();
    w.process(w.identity, async (_job, channel) => {
      await channel.emit({ kind: 'claimed', worker: w.identity });
      await channel.emit({ kind: 'phase', phase: 'implement' });
      await release.promise;
      await channel.emit(result);
    });
    await first.enqueue(job('T-3'));
    const controller = new AbortController();
    const read: number[] = [];
    for await (const e of first.events('T-3:1', controller.signal)) {
      read.push(e.seq);
      if (e.seq === 1) await first.ack('T-3:1', 1);
      // seq 2 is read and never acknowledged: the coordinator "dies" here
      if (e.seq === 2) break;
    }
    await first.close();
    expect(read).toEqual([1, 2]);
    release.resolve();
    const second = await coordinator(redis.url);
    const events = await drain(second, 'T-3:1');
    expect(events.map((e) => [e.seq, e.event.kind])).toEqual([
      [2, 'phase'],
      [3, 'result'],
    ]);
  });

  it('loses no event while Redis is down for a while: the worker’s writes wait and the coordinator reads them after the reconnect', async () => {
    redis = await startRedis();
    const server = redis;
    const c = await coordinator(server.url);
    const w = await worker(server.url, 1, { heartbeatMs: 500 });
    const down = deferred();
    const wroteDuringOutage = deferred();
    w.process(w.identity, async (_job, channel) => {
      await channel.emit({ kind: 'claimed', worker: w.identity });
      await channel.emit({ kind: 'phase', phase: 'setup' });
      await down.promise;
      // Issued while Redis is away: ioredis keeps them in its offline queue.
      const writes = Promise.all([channel.emit({ kind: 'phase', phase: 'implement' }), channel.emit({ kind: 'output', phase: 'implement', chunk: 'x' })]);
      wroteDuringOutage.resolve();
      await writes;
      await channel.emit(result);
    });
    await c.enqueue(job('T-4'));
    const seen: string[] = [];
    const reading = drain(c, 'T-4:1', (e) => {
      seen.push(e.event.kind);
    });
    // Wait until the first phase was written (observable in Redis), then take Redis away with its data.
    const probe = new Redis(connectionOptions(parseQueueUrl(server.url)));
    probe.on('error', () => undefined); // it is down on purpose
    closers.push(async () => probe.disconnect());
    const keys = jobKeys(keyPrefix(parseQueueUrl(server.url)), 'T-4:1');
    for (const deadline = Date.now() + 10_000; (await probe.xlen(keys.events)) < 2; ) {
      if (Date.now() > deadline) throw new Error('the worker never wrote its first phase');
      await new Promise((r) => setTimeout(r, 20));
    }
    await server.stop({ save: true });
    down.resolve();
    await wroteDuringOutage.promise;
    await server.start();
    const events = await reading;
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(seen).toEqual(['claimed', 'phase', 'phase', 'output', 'result']);
  });

  it('gives a job whose worker stopped renewing its lock to another worker, which continues its event numbers', async () => {
    redis = await startRedis();
    const address = parseQueueUrl(redis.url);
    const c = await coordinator(redis.url);
    await c.enqueue(job('T-5'));
    // A worker that takes the job, writes one event and then dies (its lock is never renewed).
    const dead = deferred();
    const tookIt = deferred();
    const zombie = new Worker(
      QUEUE_NAME,
      async (j) => {
        const keys = jobKeys(keyPrefix(address), (j.data as AttemptJob).jobId);
        await appendEvent(probeOf(), keys, 1, { kind: 'claimed', worker: { id: 'dead-worker', host: 'gone', concurrency: 1 } });
        tookIt.resolve();
        await dead.promise;
      },
      { connection: connectionOptions(address), prefix: keyPrefix(address), lockDuration: 1_000, skipLockRenewal: true, skipStalledCheck: true },
    );
    const probe = new Redis(connectionOptions(address));
    function probeOf() {
      return probe;
    }
    closers.push(async () => {
      dead.resolve();
      await zombie.close(true);
      probe.disconnect();
    });
    await tookIt.promise;
    const w = await worker(redis.url);
    const ran: string[] = [];
    w.process(w.identity, async (j, channel) => {
      ran.push(j.jobId);
      await channel.emit({ kind: 'claimed', worker: w.identity });
      await channel.emit(result);
    });
    const events = await drain(c, 'T-5:1');
    expect(events.map((e) => [e.seq, e.event.kind])).toEqual([
      [1, 'claimed'],
      [2, 'claimed'],
      [3, 'result'],
    ]);
    expect(events[1]!.event).toMatchObject({ worker: { id: w.identity.id } });
    expect(ran).toEqual(['T-5:1']);
  });

  it('cancels a waiting job by removing it, and a running one with an abort its handler receives', async () => {
    redis = await startRedis();
    const c = await coordinator(redis.url);
    await c.enqueue(job('T-6'));
    await c.enqueue(job('T-7'));
    await c.cancel('T-6:1', { kind: 'gate', message: 'fleet cost gate' });
    expect(await c.depth()).toBe(1);
    const w = await worker(redis.url);
    const taken: string[] = [];
    w.process(w.identity, async (j, channel, signal) => {
      taken.push(j.jobId);
      await channel.emit({ kind: 'claimed', worker: w.identity });
      const messages: ControlMessage[] = [];
      for await (const m of channel.messages(signal)) {
        messages.push(m);
        if (m.kind === 'abort') break;
      }
      await channel.emit({ kind: 'failed', error: (messages.at(-1) as Extract<ControlMessage, { kind: 'abort' }>).error });
    });
    const claimed = deferred();
    const reading = drain(c, 'T-7:1', (e) => {
      if (e.event.kind === 'claimed') claimed.resolve();
    });
    await claimed.promise;
    await c.cancel('T-7:1', { kind: 'gate', message: 'fleet cost gate' });
    const events = await reading;
    expect(events.at(-1)!.event).toEqual({ kind: 'failed', error: { kind: 'gate', message: 'fleet cost gate' } });
    expect(taken).toEqual(['T-7:1']);
    // The removed job can be enqueued again and runs then, from seq 1.
    expect(await c.depth()).toBe(0);
  });

  it('lists live workers with what they run and whether they refuse, and forgets a worker that closed', async () => {
    redis = await startRedis();
    const c = await coordinator(redis.url);
    const a = await worker(redis.url, 2);
    const b = await worker(redis.url, 1);
    await b.setRefusing('the sandbox self-test failed: wrote to /etc');
    const inside = deferred();
    const finish = deferred();
    a.process(a.identity, async (_j, channel) => {
      inside.resolve();
      await finish.promise;
      await channel.emit(result);
    });
    await c.enqueue(job('T-8'));
    await inside.promise;
    const deadline = Date.now() + 5_000;
    let workers = await c.workers();
    // The heartbeat after the claim is written without waiting for it: poll Redis's state for it.
    while (!workers.some((x) => x.running.includes('T-8:1')) && Date.now() < deadline) workers = await c.workers();
    expect(workers.map((x) => x.identity.id).sort()).toEqual([a.identity.id, b.identity.id].sort());
    expect(workers.find((x) => x.identity.id === a.identity.id)).toMatchObject({ running: ['T-8:1'], refusing: null, identity: { concurrency: 2 } });
    expect(workers.find((x) => x.identity.id === b.identity.id)).toMatchObject({ running: [], refusing: 'the sandbox self-test failed: wrote to /etc' });
    expect(() => b.process(b.identity, async () => undefined)).toThrow(/refuses jobs/);
    finish.resolve();
    await drain(c, 'T-8:1');
    await b.close(true);
    expect((await c.workers()).map((x) => x.identity.id)).toEqual([a.identity.id]);
  });

  it('hands back the jobs of a worker that closes without draining, and another worker runs them', async () => {
    redis = await startRedis();
    const c = await coordinator(redis.url);
    const a = await worker(redis.url);
    const inside = deferred();
    let aborted: unknown = null;
    a.process(a.identity, async (_j, channel: JobChannel, signal) => {
      await channel.emit({ kind: 'claimed', worker: a.identity });
      inside.resolve();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = signal.reason;
      // Whatever a given-up handler still tries to send is refused.
      await channel.emit({ kind: 'failed', error: { kind: 'stop', message: 'stopping' } });
    });
    await c.enqueue(job('T-9'));
    await inside.promise;
    await a.close(false);
    expect(String(aborted)).toMatch(/goes back to the queue/);
    expect(await c.depth()).toBe(1);
    const b = await worker(redis.url);
    b.process(b.identity, async (_j, channel) => {
      await channel.emit({ kind: 'claimed', worker: b.identity });
      await channel.emit(result);
    });
    const events = await drain(c, 'T-9:1');
    expect(events.map((e) => e.event.kind)).toEqual(['claimed', 'claimed', 'result']);
    expect(events[1]!.event).toMatchObject({ worker: { id: b.identity.id } });
  });

  it('hands back the job of a handler that throws, runs it again, and reports a job that keeps failing once it started too often', async () => {
    redis = await startRedis();
    const c = await coordinator(redis.url);
    const w = await worker(redis.url, 1, { ...FAST, maxStarts: 3 });
    const runs = new Map<string, number>();
    w.process(w.identity, async (j, channel) => {
      const n = (runs.get(j.jobId) ?? 0) + 1;
      runs.set(j.jobId, n);
      await channel.emit({ kind: 'claimed', worker: w.identity });
      if (j.taskId === 'T-10' && n === 1) throw new Error('the cache could not be fetched');
      if (j.taskId === 'T-11') throw new Error('always broken');
      await channel.emit(result);
    });
    await c.enqueue(job('T-10'));
    const once = await drain(c, 'T-10:1');
    expect(once.map((e) => e.event.kind)).toEqual(['claimed', 'claimed', 'result']);
    await c.enqueue(job('T-11'));
    const broken = await drain(c, 'T-11:1');
    expect(broken.map((e) => e.event.kind)).toEqual(['claimed', 'claimed', 'claimed', 'failed']);
    expect(broken.at(-1)!.event).toMatchObject({ kind: 'failed', error: { kind: 'error', message: expect.stringMatching(/started 3 times without an outcome: always broken/) } });
    expect(runs.get('T-11:1')).toBe(3);
  });

  it('gives a job up at once when its lock could not be renewed (another worker may have it), and another worker finishes it', async () => {
    redis = await startRedis();
    const c = await coordinator(redis.url);
    const a = await worker(redis.url);
    const inside = deferred();
    let reason: unknown = null;
    a.process(a.identity, async (_j, channel, signal) => {
      await channel.emit({ kind: 'claimed', worker: a.identity });
      inside.resolve();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      reason = signal.reason;
      throw signal.reason;
    });
    await c.enqueue(job('T-12'));
    await inside.promise;
    // The lock goes (as after an outage longer than the lock): the next renewal fails.
    expect(await redis.command('DEL', `lf:loopfleet:${QUEUE_NAME}:${bullJobId('T-12:1')}:lock`)).toBe(':1\r\n');
    const b = await worker(redis.url);
    b.process(b.identity, async (_j, channel) => {
      await channel.emit({ kind: 'claimed', worker: b.identity });
      await channel.emit(result);
    });
    const events = await drain(c, 'T-12:1');
    expect(String(reason)).toMatch(/lost the lock of job T-12:1/);
    expect(events.map((e) => e.event.kind)).toEqual(['claimed', 'claimed', 'result']);
    expect(events[1]!.event).toMatchObject({ worker: { id: b.identity.id } });
  });

  it('keeps two fleets on one Redis apart by name', async () => {
    redis = await startRedis();
    const one = await coordinator(`${redis.url}/0?name=one`);
    const two = await coordinator(`${redis.url}/0?name=two`);
    await one.enqueue(job('T-1'));
    expect(await one.depth()).toBe(1);
    expect(await two.depth()).toBe(0);
    expect(bullJobId('T-1:1')).toBe('T-1%3A1');
  });
});

describe('parseQueueUrl', () => {
  it('reads host, port, database and name, and never shows the password', () => {
    const a = parseQueueUrl('redis://:s3cret@10.0.0.5:6380/3?name=night');
    expect(a).toMatchObject({ host: '10.0.0.5', port: 6380, db: 3, password: 's3cret', name: 'night', tls: false });
    expect(a.display).toBe('redis://10.0.0.5:6380/3?name=night');
    expect(parseQueueUrl('rediss://cache.internal')).toMatchObject({ port: 6379, db: 0, tls: true, name: 'loopfleet' });
  });

  it.each([
    ['http://127.0.0.1:6379', /scheme must be redis/],
    ['redis://127.0.0.1:6379/x', /database number/],
    ['not a url', /is not a URL/],
    ['redis://127.0.0.1:6379?queue=a', /unknown parameter 'queue'/],
    ['redis://127.0.0.1:6379?name=a:b', /name 'a:b'/],
  ])('refuses %s with a message naming the option', (text, why) => {
    expect(() => parseQueueUrl(text)).toThrow(why);
    expect(() => parseQueueUrl(text)).toThrow(/^--queue: /);
  });
});
