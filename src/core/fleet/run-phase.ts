import type { Clock } from '../../ports/clock.js';
import { MAX_TIMER_MS } from '../../domain/layout.js';
import type { TaskStatus } from '../../domain/types.js';
import type { FleetSnapshotSummary } from '../task/events.js';
import type { Notifier } from './notify-digest.js';
import type { HoldInfo } from '../budget/rate-limits.js';

/**
 * The fleet's phase (idle, running, paused, stopping, finished) and, while it pauses for a usage or rate
 * limit, the hold that says why and until when. Invariants:
 * - every phase change emits one `fleet` event; going idle or paused also goes to the notify command;
 * - there is a hold only while the fleet pauses for a limit (a person's pause has none), and at most one
 *   hold timer runs at a time;
 * - the hold timer is not unref'd: while the fleet holds it may be all that keeps the run alive; release()
 *   clears it.
 */

export type Phase = FleetSnapshotSummary['state'];

export interface RunPhaseServices {
  clock: Clock;
  notifier: Notifier;
  /** emits the fleet's summary as it is now */
  emit: () => void;
  /** the tasks' counts by status, for the idle notification */
  counts: () => Record<TaskStatus, number>;
  /** a hold's time is up: the fleet resumes */
  due: () => void;
}

export class RunPhase {
  readonly #s: RunPhaseServices;
  #phase: Phase = 'idle';
  /** why the fleet holds (a usage or rate limit), and until when; null when it runs or a person paused it */
  #hold: HoldInfo | null = null;
  #holdTimer: NodeJS.Timeout | null = null;

  constructor(services: RunPhaseServices) {
    this.#s = services;
  }

  get current(): Phase {
    return this.#phase;
  }

  /** a copy of the hold, or null when the fleet does not hold */
  get hold(): HoldInfo | null {
    return this.#hold === null ? null : { ...this.#hold };
  }

  get holding(): boolean {
    return this.#hold !== null;
  }

  set(phase: Phase): void {
    this.#phase = phase;
    this.#s.emit();
    if (phase === 'idle') this.#s.notifier.send({ event: 'idle', counts: this.#s.counts() });
    if (phase === 'paused')
      this.#s.notifier.send({
        event: 'paused',
        ...(this.#hold === null ? {} : { reason: this.#hold.reason, until: this.#hold.until }),
      });
  }

  /** Hold for `reason` until `until` (epoch ms; null: until released), replacing any earlier hold. */
  holdFor(reason: string, until: number | null, backoff: boolean): void {
    this.release();
    this.#hold = {
      reason,
      until: until === null ? null : new Date(until).toISOString(),
      ...(backoff ? { backoff } : {}),
    };
    if (until !== null) {
      // Not unref'd: while the fleet holds, this timer may be all that keeps the run alive; release() clears it.
      this.#holdTimer = setTimeout(
        () => this.#s.due(),
        Math.min(Math.max(0, until - this.#s.clock.now()), MAX_TIMER_MS),
      );
    }
  }

  release(): void {
    if (this.#holdTimer !== null) clearTimeout(this.#holdTimer);
    this.#holdTimer = null;
    this.#hold = null;
  }
}
