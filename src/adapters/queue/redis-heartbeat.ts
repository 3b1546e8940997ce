/**
 * Each worker's heartbeat: a hash `<prefix>:worker:<id>` holding one sealed beat (identity, running job
 * ids, refusing, seenAt) that expires three beats after its last write, so `liveWorkers` lists only
 * workers that are alive.
 *
 * Invariant: `liveWorkers` lists only beats whose seal holds and whose fields have their types; any other
 * hash under the prefix (junk, a forged worker, a half-written beat) is skipped and named through `skip`,
 * never an error of the caller.
 */
import type { Redis } from 'ioredis';
import type { WorkerIdentity, WorkerInfo } from '../../ports/attempt-queue.js';
import type { FleetKeys } from './fleet-secret.js';

export const HEARTBEAT_MS = 5_000;

export function heartbeatKey(prefix: string, workerId: string): string {
  return `${prefix}:worker:${workerId}`;
}

export interface Beat {
  identity: WorkerIdentity;
  running: string[];
  refusing: string | null;
}

export async function beat(redis: Redis, prefix: string, keys: FleetKeys, b: Beat, everyMs: number): Promise<void> {
  const key = heartbeatKey(prefix, b.identity.id);
  const sealed = keys.seal('heartbeat', { ...b, seenAt: new Date().toISOString() });
  await redis
    .multi()
    .del(key)
    .hset(key, { beat: sealed.text, sig: sealed.sig })
    .pexpire(key, everyMs * 3)
    .exec();
}

export async function forget(redis: Redis, prefix: string, workerId: string): Promise<void> {
  await redis.del(heartbeatKey(prefix, workerId));
}

/** The beat's fields with their types, or why not. */
function checked(value: unknown, key: string, prefix: string): WorkerInfo | string {
  const v = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const id = v.identity as Partial<WorkerIdentity> | undefined;
  if (typeof id !== 'object' || id === null || typeof id.id !== 'string' || typeof id.host !== 'string')
    return 'its identity is malformed';
  if (key !== heartbeatKey(prefix, id.id)) return `it names worker ${id.id}, not the worker of its key`;
  if (typeof id.concurrency !== 'number' || !Number.isSafeInteger(id.concurrency) || id.concurrency < 1)
    return 'its concurrency is not a count';
  if (!Array.isArray(v.running) || !v.running.every((r) => typeof r === 'string'))
    return 'its running jobs are not a list of job ids';
  if (v.refusing !== null && typeof v.refusing !== 'string') return 'its refusal is not text';
  if (typeof v.seenAt !== 'string') return 'it has no time';
  return {
    identity: { id: id.id, host: id.host, concurrency: id.concurrency },
    running: v.running as string[],
    seenAt: v.seenAt,
    refusing: v.refusing === '' ? null : (v.refusing as string | null),
  };
}

export async function liveWorkers(
  redis: Redis,
  prefix: string,
  keys: FleetKeys,
  skip: (key: string, why: string) => void,
): Promise<WorkerInfo[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:worker:*`, 'COUNT', 200);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  const infos: WorkerInfo[] = [];
  for (const key of found.sort()) {
    let h: Record<string, string>;
    try {
      h = await redis.hgetall(key);
    } catch (error) {
      skip(key, `it is not a heartbeat (${(error as Error).message.split(' ')[0]})`);
      continue;
    }
    // Gone between SCAN and HGETALL: not a live worker, and nothing to say.
    if (Object.keys(h).length === 0) continue;
    const opened = keys.open('heartbeat', h.beat, h.sig);
    if (!opened.ok) {
      skip(key, opened.why);
      continue;
    }
    const info = checked(opened.value, key, prefix);
    if (typeof info === 'string') skip(key, info);
    else infos.push(info);
  }
  return infos;
}
