/**
 * Attacks through the queue's Redis by someone who can write to it but has no fleet secret: forged jobs,
 * forged and replayed events, forged heartbeats. Real redis-server, the real BullMQ adapters.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { bullJobId, QUEUE_NAME } from '../../src/adapters/queue/bullmq-names.js';
import { FleetKeys } from '../../src/adapters/queue/fleet-secret.js';
import { connectionOptions, keyPrefix } from '../../src/adapters/queue/redis-connection.js';
import { jobKeys } from '../../src/adapters/queue/redis-streams.js';
import { parseQueueUrl } from '../../src/adapters/queue/redis-url.js';
import { sealEvent } from '../../src/adapters/queue/sealed-messages.js';
import type { AttemptJob, SequencedEvent, WorkerEvent } from '../../src/ports/attempt-queue.js';
import { deferred, drain, job, queueRig, result } from '../helpers/bullmq-support.js';

const rig = queueRig();
const { closers } = rig;
type Log = Array<[string, string]>;
const logInto = (log: Log) => (level: string, message: string) => log.push([level, message]);

async function raw(url: string): Promise<Redis> {
  const r = new Redis(connectionOptions(parseQueueUrl(url)));
  closers.push(async () => r.disconnect());
  return r;
}

const usage = (costUsd: number): WorkerEvent => ({
  kind: 'agent',
  role: 'implementer',
  model: 'claude-sonnet-4-5',
  event: {
    type: 'usage',
    model: 'claude-sonnet-4-5',
    usage: { input: 1, output: 1, cacheWrite: 0, cacheRead: 0 },
    costUsd,
  },
});

describe('the queue against someone who can write to Redis without the fleet secret', () => {
  it('a job copied from the queue, its setup replaced and put back, runs nothing; an unsigned job neither', async () => {
    const redis = await rig.start();
    const address = parseQueueUrl(redis.url);
    const c = await rig.coordinator(redis.url);
    await c.enqueue(job('T-1'));
    // The attacker rewrites the queued job's data: the same signature over a text whose setup is theirs.
    const r = await raw(redis.url);
    const key = `${keyPrefix(address)}:${QUEUE_NAME}:${bullJobId('T-1:1')}`;
    const data = JSON.parse((await r.hget(key, 'data'))!) as { text: string; sig: string };
    const envelope = JSON.parse(data.text) as { job: AttemptJob };
    envelope.job.config = { ...envelope.job.config, setup: 'touch /tmp/pwned-by-redis' };
    await r.hset(key, 'data', JSON.stringify({ text: JSON.stringify(envelope), sig: data.sig }));
    // And one added straight through BullMQ, with no signature at all.
    const attacker = new Queue(QUEUE_NAME, { connection: connectionOptions(address), prefix: keyPrefix(address) });
    closers.push(() => attacker.close());
    await attacker.add('attempt', job('T-2'), { jobId: bullJobId('T-2:1') });

    const log: Log = [];
    const w = await rig.worker(redis.url, 1, undefined, logInto(log));
    const ran: string[] = [];
    w.process(w.identity, async (j) => {
      ran.push(j.jobId);
    });
    const forged = await drain(c, 'T-1:1');
    const unsigned = await drain(c, 'T-2:1');
    expect(ran).toEqual([]);
    for (const events of [forged, unsigned]) {
      expect(events.map((e) => e.event.kind)).toEqual(['claimed', 'failed']);
      expect(events[1]!.event).toMatchObject({ error: { kind: 'refused' } });
    }
    expect(log.map(([, m]) => m)).toEqual(
      expect.arrayContaining([
        'job T-1:1 refused: its signature does not match the fleet secret; nothing of it runs',
        'job T-2:1 refused: it is not sealed (no text); nothing of it runs',
      ]),
    );
  });

  it('a forged event stream (claimed, then verified) and a forged 1e300-dollar usage settle and book nothing; a replayed event is dropped', async () => {
    const redis = await rig.start();
    const address = parseQueueUrl(redis.url);
    const log: Log = [];
    const c = await rig.coordinator(redis.url, logInto(log));
    await c.enqueue(job('T-3'));
    const keys = jobKeys(keyPrefix(address), 'T-3:1');
    const r = await raw(redis.url);
    const forger = new FleetKeys(['not-the-fleet-secret-0123456789abcdef0123']);
    const at = (seq: number) => ({ jobId: 'T-3:1', seq, worker: 'evil', token: 'x' });
    const claimed: WorkerEvent = { kind: 'claimed', worker: { id: 'evil', host: 'evil', concurrency: 1 } };
    // Unsigned, then signed with another secret: a claim, a usage of 1e300 dollars, a verified result.
    await r.xadd(keys.events, '0-1', 'e', JSON.stringify({ ...at(1), ts: 0, event: claimed }));
    const s2 = sealEvent(forger, at(2), usage(1e300));
    await r.xadd(keys.events, '0-2', 'e', s2.text, 's', s2.sig);
    const s3 = sealEvent(forger, at(3), result);
    await r.xadd(keys.events, '0-3', 'e', s3.text, 's', s3.sig);

    // The real worker goes on after the forged entries.
    const w = await rig.worker(redis.url);
    w.process(w.identity, async (_j, channel) => {
      await channel.emit({ kind: 'claimed', worker: w.identity });
      await channel.emit(usage(0.25));
      await channel.emit({ kind: 'failed', error: { kind: 'error', message: 'the real outcome' } });
    });
    const events: SequencedEvent[] = await drain(c, 'T-3:1');
    expect(events.map((e) => [e.seq, e.event.kind])).toEqual([
      [4, 'claimed'],
      [5, 'agent'],
      [6, 'failed'],
    ]);
    const costs = events.flatMap((e) =>
      e.event.kind === 'agent' && e.event.event.type === 'usage' ? [e.event.event.costUsd] : [],
    );
    expect(costs).toEqual([0.25]);

    // The real, signed claim and usage of T-3 replayed into the next job's stream before its worker writes:
    // written before the job is queued, so that the worker, which takes it at once, cannot write first.
    const next = jobKeys(keyPrefix(address), 'T-4:1');
    for (const [id, fields] of (await r.xrange(keys.events, '0-4', '0-5')) as Array<[string, string[]]>)
      await r.xadd(next.events, `0-${Number(id.slice(2)) - 3}`, ...fields);
    await c.enqueue(job('T-4'));
    const again = await drain(c, 'T-4:1');
    expect(again.map((e) => [e.seq, e.event.kind])).toEqual([
      [3, 'claimed'],
      [4, 'agent'],
      [5, 'failed'],
    ]);
    const dropped = log.map(([, m]) => m).filter((m) => m.includes('dropped'));
    expect(dropped).toEqual([
      'job T-3:1: event 1 dropped: it is not signed with the fleet secret (no signature)',
      'job T-3:1: event 2 dropped: its signature does not match the fleet secret',
      'job T-3:1: event 3 dropped: its signature does not match the fleet secret',
      'job T-4:1: event 1 dropped: it was signed for job T-3:1 (copied)',
      'job T-4:1: event 2 dropped: it was signed for job T-3:1 (copied)',
    ]);
  });

  it('an entry forged into the place of a worker’s final event: dropped, the job handed back and run again, its outcome delivered', async () => {
    const redis = await rig.start();
    const address = parseQueueUrl(redis.url);
    const log: Log = [];
    const c = await rig.coordinator(redis.url, logInto(log));
    await c.enqueue(job('T-5'));
    const keys = jobKeys(keyPrefix(address), 'T-5:1');
    const r = await raw(redis.url);
    const w = await rig.worker(redis.url);
    const claimed = deferred();
    const forged = deferred();
    let runs = 0;
    w.process(w.identity, async (_j, channel) => {
      runs++;
      await channel.emit({ kind: 'claimed', worker: w.identity });
      claimed.resolve();
      await forged.promise;
      await channel.emit({ kind: 'failed', error: { kind: 'error', message: `outcome of run ${runs}` } });
    });
    await claimed.promise;
    await r.xadd(keys.events, '0-2', 'e', JSON.stringify({ kind: 'result' }));
    forged.resolve();
    const events = await drain(c, 'T-5:1');
    expect(events.map((e) => [e.seq, e.event.kind])).toEqual([
      [1, 'claimed'],
      [3, 'claimed'],
      [4, 'failed'],
    ]);
    expect(events[2]!.event).toMatchObject({ error: { message: 'outcome of run 2' } });
    expect(log.map(([, m]) => m)).toContain(
      'job T-5:1: event 2 dropped: it is not signed with the fleet secret (no signature)',
    );
  });

  it('a junk heartbeat (bad JSON, unsigned, a string key) is skipped and named once; the live worker is listed', async () => {
    const redis = await rig.start();
    const prefix = keyPrefix(parseQueueUrl(redis.url));
    const log: Log = [];
    const c = await rig.coordinator(redis.url, logInto(log));
    const w = await rig.worker(redis.url);
    const r = await raw(redis.url);
    await r.hset(`${prefix}:worker:junk`, { identity: '{not json', running: '[', seenAt: 'now' });
    await r.hset(`${prefix}:worker:forged`, {
      beat: JSON.stringify({
        identity: { id: 'forged', host: 'h', concurrency: 99 },
        running: [],
        refusing: null,
        seenAt: 'x',
      }),
      sig: '0'.repeat(64),
    });
    await r.set(`${prefix}:worker:string`, 'hello');
    const listed = await c.workers();
    expect(listed.map((x) => x.identity.id)).toEqual([w.identity.id]);
    await c.workers();
    expect(log.map(([, m]) => m).sort()).toEqual([
      `heartbeat ${prefix}:worker:forged skipped: its signature does not match the fleet secret`,
      `heartbeat ${prefix}:worker:junk skipped: it is not sealed (no text)`,
      `heartbeat ${prefix}:worker:string skipped: it is not a heartbeat (WRONGTYPE)`,
    ]);
  });
});
