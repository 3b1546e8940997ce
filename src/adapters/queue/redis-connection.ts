/**
 * ioredis connections for the attempt queue. BullMQ requires `maxRetriesPerRequest: null` on its
 * connections (a blocking command must not fail because Redis was away); with the offline queue on, a
 * command issued while Redis is unreachable waits and is sent on reconnect, so an outage of seconds loses
 * nothing. Reconnects back off up to two seconds and never give up: a worker outlives its Redis's restarts.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { QueueAddress } from './redis-url.js';
import { formatLimitDuration } from '../../core/text/format-units.js';

const MAX_BACKOFF_MS = 2_000;

/** ioredis options whose retry strategy always retries (the type BullMQ's connection option accepts) */
export type ConnectionOptions = Omit<RedisOptions, 'retryStrategy'> & { retryStrategy: (times: number) => number };

export function connectionOptions(address: QueueAddress): ConnectionOptions {
  const options: ConnectionOptions = {
    host: address.host,
    port: address.port,
    db: address.db,
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    autoResendUnfulfilledCommands: true,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), MAX_BACKOFF_MS),
    // A reply lost with its connection is resent on reconnect; commands here are written to be idempotent.
    reconnectOnError: (error) => error.message.startsWith('READONLY') || error.message.startsWith('LOADING'),
    lazyConnect: true,
  };
  if (address.username !== undefined) options.username = address.username;
  if (address.password !== undefined) options.password = address.password;
  if (address.tls) options.tls = { servername: address.host };
  return options;
}

/**
 * A connection that has answered PING, or the reason it could not within `timeoutMs` (Redis not there at
 * start: the caller says so rather than waiting forever). Reconnect attempts go on meanwhile, so a Redis
 * that comes up within the time is found; errors are reported through `onError` only once connected.
 */
export async function connect(
  address: QueueAddress,
  timeoutMs: number,
  onError: (error: Error) => void,
): Promise<Redis> {
  const redis = new Redis(connectionOptions(address));
  let lastError: Error | null = null;
  let connected = false;
  redis.on('error', (error: Error) => {
    lastError = error;
    if (connected) onError(error);
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        redis.connect().catch(() => undefined);
        await new Promise<void>((resolve) => redis.once('ready', () => resolve()));
        await redis.ping();
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const why = lastError === null ? 'no answer' : (lastError as Error).message;
          reject(new Error(`${why} (tried for ${formatLimitDuration(timeoutMs)})`));
        }, timeoutMs);
      }),
    ]);
  } catch (error) {
    redis.disconnect();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  connected = true;
  return redis;
}

/** The key prefix of one fleet's queue (BullMQ's `prefix`, and the prefix of the streams and heartbeats). */
export function keyPrefix(address: QueueAddress): string {
  return `lf:${address.name}`;
}
