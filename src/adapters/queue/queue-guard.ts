/**
 * What a coordinator (`--queue`) or a worker needs before it touches a Redis: the fleet secret always, and
 * a Redis off this machine reached with a password or TLS. Whoever can write to the queue decides what
 * every worker runs, so both are refused (exit 2) rather than warned about.
 *
 * Invariant: {@link guardQueue} returns the fleet's keys only when both hold; the message of a refusal names
 * the risk and the fix, never the secret or the password.
 */
import { isIP } from 'node:net';
import { UsageError } from '../../domain/errors.js';
import type { FleetKeys } from './fleet-secret.js';
import type { QueueAddress } from './redis-url.js';

export const RISK = 'anyone who can write to this Redis can run commands on every worker';

/** whether `host` is this machine's loopback (127.0.0.0/8, ::1, localhost) */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** A queue address that passed {@link guardQueue}, with the fleet's keys. */
export type QueueAccess = QueueAddress & { keys: FleetKeys };

export function guardQueue(address: QueueAddress, keys: FleetKeys | null): QueueAccess {
  if (keys === null)
    throw new UsageError(
      `--queue ${address.display}: no fleet secret (LOOPFLEET_QUEUE_SECRET, or --queue-secret-file PATH, the same on the coordinator and every worker): without it ${RISK}`,
    );
  if (!isLoopback(address.host) && address.password === undefined && !address.tls)
    throw new UsageError(
      `--queue ${address.display}: Redis is not on this machine and is reached without a password or TLS: ${RISK}; give it a password (redis://:PASSWORD@HOST) or use rediss://`,
    );
  return { ...address, keys };
}
