import type { Clock } from '../../ports/clock.js';
import type { FleetEmitter, ReviewPacingSummary } from '../task/events.js';
import { reviewWords, type ReviewLoad } from '../task/review-load.js';
import type { Notifier } from './notify-digest.js';

export interface ReviewPacingServices {
  clock: Clock;
  events: FleetEmitter;
  notifier: Notifier;
  /** emits the fleet's summary as it is now */
  emit: () => void;
}

/**
 * What `review_capacity:` did during this run, from the {@link Scheduler}'s passes. Invariants:
 * - the moment the capacity starts holding tasks back is said once — a log line (the headless log, the TUI's
 *   output) and a `review` event to the notify command — and so is the moment it stops;
 * - a `fleet` event goes out only when the load or the hold changed, not on every pass;
 * - `heldMs` sums the spans during which it held, the current one included; `peak` is the most tasks running
 *   or waiting for a person seen at once.
 */
export class ReviewPacing {
  readonly #s: ReviewPacingServices;
  #load: ReviewLoad | null = null;
  #held = false;
  #heldSince: number | null = null;
  #heldMs = 0;
  #peak = 0;

  constructor(services: ReviewPacingServices) {
    this.#s = services;
  }

  /** One scheduler pass: the load against the capacity (null: none set), and whether it held a task back. */
  update(load: ReviewLoad | null, held: boolean): void {
    const before = JSON.stringify([this.#load, this.#held]);
    this.#load = load === null ? null : { ...load };
    const wasHeld = this.#held;
    this.#held = load !== null && held;
    if (load !== null) this.#peak = Math.max(this.#peak, load.running + load.waiting);
    const now = this.#s.clock.now();
    if (this.#held && !wasHeld) {
      this.#heldSince = now;
      const words = reviewWords(load!);
      this.#s.events.emit('log', {
        level: 'info',
        message: `${words}: no new task starts until a person merges, discards, approves or reviews one`,
      });
      this.#s.notifier.send({ event: 'review', text: `loopfleet: ${words}`, ...load! });
    } else if (!this.#held && wasHeld) {
      this.#heldMs += now - (this.#heldSince ?? now);
      this.#heldSince = null;
      this.#s.events.emit('log', {
        level: 'info',
        message:
          load === null
            ? 'review capacity lifted: nothing is held back'
            : `review capacity holds nothing back now (${load.running + load.waiting} of ${load.capacity})`,
      });
    }
    if (JSON.stringify([this.#load, this.#held]) !== before) this.#s.emit();
  }

  /** The review queue now and over this run; undefined when no capacity is set. */
  summary(): ReviewPacingSummary | undefined {
    if (this.#load === null) return undefined;
    const current = this.#heldSince === null ? 0 : this.#s.clock.now() - this.#heldSince;
    return { ...this.#load, held: this.#held, peak: this.#peak, heldMs: this.#heldMs + current };
  }
}
