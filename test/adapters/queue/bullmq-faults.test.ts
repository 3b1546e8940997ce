import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { attemptJobId, bullJobId, QUEUE_NAME } from '../../../src/adapters/queue/bullmq-names.js';
import { connectionOptions, keyPrefix } from '../../../src/adapters/queue/redis-connection.js';
import { appendEvent, jobKeys } from '../../../src/adapters/queue/redis-streams.js';
import { sealEvent } from '../../../src/adapters/queue/sealed-messages.js';
import { parseQueueUrl } from '../../../src/adapters/queue/redis-url.js';
import type { JobChannel } from '../../../src/ports/attempt-queue.js';
import { deferred, drain, FAST, job, queueRig, result, TEST_KEYS } from '../../helpers/bullmq-support.js';

const rig = queueRig();
const { coordinator, worker, closers } = rig;

describe('BullMQ attempt queue under faults, on a real redis-server', () => {
  it('loses no event while Redis is down for a while: the worker’s writes wait and the coordinator reads them after the reconnect', async () => {
    const redis = await rig.start();
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
      const writes = Promise.all([
        channel.emit({ kind: 'phase', phase: 'implement' }),
        channel.emit({ kind: 'output', phase: 'implement', chunk: 'x' }),
      ]);
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
    while ((await probe.xlen(keys.events)) < 2) await new Promise((r) => setTimeout(r, 20));
    await server.stop({ save: true });
    down.resolve();
    await wroteDuringOutage.promise;
    await server.start();
    const events = await reading;
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(seen).toEqual(['claimed', 'phase', 'phase', 'output', 'result']);
  });

  it('gives a job whose worker stopped renewing its lock to another worker, which continues its event numbers', async () => {
    const redis = await rig.start();
    const address = parseQueueUrl(redis.url);
    const c = await coordinator(redis.url);
    await c.enqueue(job('T-5'));
    // A worker that takes the job, writes one event and then dies (its lock is never renewed).
    const dead = deferred();
    const tookIt = deferred();
    const zombie = new Worker(
      QUEUE_NAME,
      async (j, token) => {
        const jobId = attemptJobId(j.id!);
        const keys = jobKeys(keyPrefix(address), jobId);
        const claimed = { kind: 'claimed' as const, worker: { id: 'dead-worker', host: 'gone', concurrency: 1 } };
        await appendEvent(
          probeOf(),
          keys,
          1,
          sealEvent(TEST_KEYS, { jobId, seq: 1, worker: 'dead-worker', token: token! }, claimed),
        );
        tookIt.resolve();
        await dead.promise;
      },
      {
        connection: connectionOptions(address),
        prefix: keyPrefix(address),
        lockDuration: 1_000,
        skipLockRenewal: true,
        skipStalledCheck: true,
      },
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
    // The coordinator follows the job as it runs: it reads the dead worker's claim while that worker holds the lock.
    const firstClaim = deferred();
    const following = drain(c, 'T-5:1', (e) => e.seq === 1 && firstClaim.resolve());
    await firstClaim.promise;
    const w = await worker(redis.url);
    const ran: string[] = [];
    w.process(w.identity, async (j, channel) => {
      ran.push(j.jobId);
      await channel.emit({ kind: 'claimed', worker: w.identity });
      await channel.emit(result);
    });
    const events = await following;
    expect(events.map((e) => [e.seq, e.event.kind])).toEqual([
      [1, 'claimed'],
      [2, 'claimed'],
      [3, 'result'],
    ]);
    expect(events[1]!.event).toMatchObject({ worker: { id: w.identity.id } });
    expect(ran).toEqual(['T-5:1']);
  });

  it('hands back the jobs of a worker that closes without draining, and another worker runs them', async () => {
    const redis = await rig.start();
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
    const redis = await rig.start();
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
    expect(broken.at(-1)!.event).toMatchObject({
      kind: 'failed',
      error: { kind: 'error', message: expect.stringMatching(/started 3 times without an outcome: always broken/) },
    });
    expect(runs.get('T-11:1')).toBe(3);
  });

  it('gives a job up at once when its lock could not be renewed (another worker may have it), and another worker finishes it', async () => {
    const redis = await rig.start();
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

  it('stops without draining even when a handler ignores its abort, within the give-up time', async () => {
    const redis = await rig.start();
    const c = await coordinator(redis.url);
    const a = await worker(redis.url);
    const inside = deferred();
    a.process(a.identity, async () => {
      inside.resolve();
      await new Promise(() => undefined); // never ends, abort or not
    });
    await c.enqueue(job('T-14'));
    await inside.promise;
    await a.close(false); // resolves after FAST.giveUpMs instead of never
    expect((await c.workers()).map((w) => w.identity.id)).not.toContain(a.identity.id);
  });

  it('ends the events of a job that is gone from Redis (restarted empty) with a failed event, instead of waiting forever', async () => {
    const redis = await rig.start();
    const c = await coordinator(redis.url);
    await c.enqueue(job('T-15'));
    expect(await redis.command('FLUSHALL')).toBe('+OK\r\n');
    const events = await drain(c, 'T-15:1');
    expect(events).toEqual([
      {
        seq: 1,
        event: {
          kind: 'failed',
          error: { kind: 'error', message: expect.stringMatching(/job T-15:1 is no longer in Redis/) },
        },
      },
    ]);
  });
});
