import type { RateLimitError } from '../../domain/errors.js';
import { clockTime, shortDuration } from '../text/format-units.js';

/**
 * The fleet's answer to rate and usage limits: wait, don't burn.
 *
 * Invariants:
 * - a limit never uses up an attempt: the task goes back to `queued` (interrupted) and the fleet holds until
 *   the reset the provider named, or for the backoff (30 s, doubling, at most 30 min) when it named none;
 * - while held, no model call starts (`beforeCall` refuses it: the attempt is interrupted and requeued);
 * - after a limit, only one task starts until a model call answers (the probe); then the whole
 *   concurrency comes back, and the backoff starts again from 30 s;
 * - with `noWait`, a limit fails the task and stops the fleet instead.
 */

export const BACKOFF_FIRST_MS = 30_000;
export const BACKOFF_MAX_MS = 30 * 60_000;

/** How a hold shows: why, until when (ISO; null: until resumed), and whether the time is a backoff's guess. */
export interface HoldInfo {
  reason: string;
  until: string | null;
  backoff?: boolean;
}

/** A model call refused because the fleet holds for a limit; the attempt is interrupted, not used up. */
export class FleetHeldError extends Error {
  override readonly name = 'FleetHeldError';
}

/** What the rate limits act on: the fleet's hold, its concurrency while probing, its stop. */
export interface RateLimitHost {
  now(): number;
  /** hold the fleet until `until` (epoch ms); the fleet resumes by itself */
  hold(reason: string, until: number, backoff: boolean): void;
  /** whether the fleet holds now */
  holding(): boolean;
  /** true: one task at a time (the probe); false: the configured concurrency */
  probe(on: boolean): void;
  /** --no-wait: end the run */
  stop(reason: string): void;
}

/** What the task runner asks and tells. */
export interface LimitGate {
  /** throws FleetHeldError while the fleet holds: no model call starts */
  beforeCall(): void;
  /** a call ran into a limit: 'wait' (the fleet holds; requeue the task) or 'fail' (--no-wait) */
  limited(error: RateLimitError): 'wait' | 'fail';
  /** a model call answered (a usage report came) */
  answered(): void;
}

export function limitName(kind: RateLimitError['kind']): string {
  return kind === 'usage' ? 'usage limit' : kind === 'overloaded' ? 'model overloaded' : 'rate limit';
}

export class RateLimits implements LimitGate {
  readonly #host: RateLimitHost;
  readonly #noWait: boolean;
  #nextBackoffMs = BACKOFF_FIRST_MS;
  /** the end of the current hold (epoch ms), or 0 */
  #until = 0;
  #probing = false;

  constructor(host: RateLimitHost, noWait: boolean) {
    this.#host = host;
    this.#noWait = noWait;
  }

  get probing(): boolean {
    return this.#probing;
  }

  beforeCall(): void {
    if (this.#host.holding() && this.#until > this.#host.now()) {
      throw new FleetHeldError(
        `the fleet is paused for a limit until ${new Date(this.#until).toISOString()}; this call waits for the next attempt`,
      );
    }
  }

  limited(error: RateLimitError): 'wait' | 'fail' {
    const reason = limitName(error.kind);
    if (this.#noWait) {
      this.#host.stop(`${reason} and --no-wait: ${error.message}`);
      return 'fail';
    }
    const now = this.#host.now();
    const held = this.#host.holding() && this.#until > now;
    let until: number;
    let backoff = false;
    if (error.resetAt !== null && error.resetAt > now) {
      until = error.resetAt;
    } else if (held) {
      // Several calls refused at once are one limit: the hold in force stands, the backoff does not grow.
      until = this.#until;
    } else {
      until = now + this.#nextBackoffMs;
      backoff = true;
      this.#nextBackoffMs = Math.min(this.#nextBackoffMs * 2, BACKOFF_MAX_MS);
    }
    if (held && until <= this.#until) {
      this.#enterProbe();
      return 'wait';
    }
    this.#until = until;
    this.#enterProbe();
    this.#host.hold(reason, until, backoff);
    return 'wait';
  }

  answered(): void {
    this.#nextBackoffMs = BACKOFF_FIRST_MS;
    if (!this.#probing) return;
    this.#probing = false;
    this.#host.probe(false);
  }

  #enterProbe(): void {
    if (this.#probing) return;
    this.#probing = true;
    this.#host.probe(true);
  }
}

/** "paused: usage limit, resumes 05:00" (local time of the reset), "paused: rate limit, resumes in 2m" (a backoff). */
export function holdText(hold: HoldInfo, now: number): string {
  if (hold.until === null) return `paused: ${hold.reason}`;
  const until = Date.parse(hold.until);
  if (hold.backoff === true) return `paused: ${hold.reason}, resumes in ${shortDuration(until - now)}`;
  return `paused: ${hold.reason}, resumes ${clockTime(until)}`;
}
