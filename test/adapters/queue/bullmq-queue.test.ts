import { describe, expect, it } from 'vitest';
import { bullJobId } from '../../../src/adapters/queue/bullmq-names.js';
import type { ControlMessage } from '../../../src/ports/attempt-queue.js';
import { deferred, drain, job, queueRig, result } from '../../helpers/bullmq-support.js';

const rig = queueRig();
const { coordinator, worker } = rig;

describe('BullMQ attempt queue on a real redis-server', () => {
  it('adds a job once however often it is enqueued, and a worker runs it once', async () => {
    const redis = await rig.start();
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
    const redis = await rig.start();
    const c = await coordinator(redis.url);
    const w = await worker(redis.url);
    w.process(w.identity, async (_job, channel) => {
      await channel.emit({ kind: 'claimed', worker: w.identity });
      for (const phase of ['setup', 'explore', 'implement', 'verify'] as const)
        await channel.emit({ kind: 'phase', phase });
      for (let i = 0; i < 50; i++) await channel.emit({ kind: 'output', phase: 'verify', chunk: `line ${i}\n` });
      await channel.emit(result);
    });
    await c.enqueue(job('T-2'));
    const events = await drain(c, 'T-2:1');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 56 }, (_, i) => i + 1));
    expect(events[0]!.event).toMatchObject({ kind: 'claimed', worker: { id: w.identity.id } });
    expect(events.slice(1, 5).map((e) => (e.event as { phase: string }).phase)).toEqual([
      'setup',
      'explore',
      'implement',
      'verify',
    ]);
    // All acknowledged: reading again ends at once, with nothing.
    expect(await drain(c, 'T-2:1')).toEqual([]);
  });

  it('delivers again what a coordinator read but did not acknowledge, to the coordinator that starts next', async () => {
    const redis = await rig.start();
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

  it('cancels a waiting job by removing it, and a running one with an abort its handler receives', async () => {
    const redis = await rig.start();
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
      await channel.emit({
        kind: 'failed',
        error: (messages.at(-1) as Extract<ControlMessage, { kind: 'abort' }>).error,
      });
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
    const redis = await rig.start();
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
    let workers = await c.workers();
    // The heartbeat after the claim is written without waiting for it: poll Redis's state for it.
    while (!workers.some((x) => x.running.includes('T-8:1'))) workers = await c.workers();
    expect(workers.map((x) => x.identity.id).sort()).toEqual([a.identity.id, b.identity.id].sort());
    expect(workers.find((x) => x.identity.id === a.identity.id)).toMatchObject({
      running: ['T-8:1'],
      refusing: null,
      identity: { concurrency: 2 },
    });
    expect(workers.find((x) => x.identity.id === b.identity.id)).toMatchObject({
      running: [],
      refusing: 'the sandbox self-test failed: wrote to /etc',
    });
    let refusedRan = false;
    b.process(b.identity, async () => {
      refusedRan = true;
    });
    finish.resolve();
    await drain(c, 'T-8:1');
    expect(refusedRan).toBe(false); // a refusing worker's handler never runs
    await b.close(true);
    expect((await c.workers()).map((x) => x.identity.id)).toEqual([a.identity.id]);
  });

  it('keeps two fleets on one Redis apart by name', async () => {
    const redis = await rig.start();
    const one = await coordinator(`${redis.url}/0?name=one`);
    const two = await coordinator(`${redis.url}/0?name=two`);
    await one.enqueue(job('T-1'));
    expect(await one.depth()).toBe(1);
    expect(await two.depth()).toBe(0);
    expect(bullJobId('T-1:1')).toBe('T-1%3A1');
  });
});
