/**
 * Each worker's heartbeat: a hash `<prefix>:worker:<id>` (identity, running job ids, refusing, seenAt) that
 * expires three beats after its last write, so `liveWorkers` lists only workers that are alive.
 */
import type { Redis } from 'ioredis';
import type { WorkerIdentity, WorkerInfo } from '../../ports/attempt-queue.js';

export const HEARTBEAT_MS = 5_000;

export function heartbeatKey(prefix: string, workerId: string): string {
  return `${prefix}:worker:${workerId}`;
}

export interface Beat {
  identity: WorkerIdentity;
  running: string[];
  refusing: string | null;
}

export async function beat(redis: Redis, prefix: string, b: Beat, everyMs: number): Promise<void> {
  const key = heartbeatKey(prefix, b.identity.id);
  await redis
    .multi()
    .hset(key, {
      identity: JSON.stringify(b.identity),
      running: JSON.stringify(b.running),
      refusing: b.refusing ?? '',
      seenAt: new Date().toISOString(),
    })
    .pexpire(key, everyMs * 3)
    .exec();
}

export async function forget(redis: Redis, prefix: string, workerId: string): Promise<void> {
  await redis.del(heartbeatKey(prefix, workerId));
}

export async function liveWorkers(redis: Redis, prefix: string): Promise<WorkerInfo[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:worker:*`, 'COUNT', 200);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  const infos: WorkerInfo[] = [];
  for (const key of keys.sort()) {
    const h = await redis.hgetall(key);
    // Gone between SCAN and HGETALL, or half written: not a live worker.
    if (h.identity === undefined || h.seenAt === undefined) continue;
    infos.push({
      identity: JSON.parse(h.identity) as WorkerIdentity,
      running: JSON.parse(h.running ?? '[]') as string[],
      seenAt: h.seenAt,
      refusing: h.refusing === undefined || h.refusing === '' ? null : h.refusing,
    });
  }
  return infos;
}
