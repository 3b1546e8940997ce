import { StopError } from '../../domain/errors.js';
import type { FleetConfig, TaskSpec } from '../../domain/types.js';
import type { FleetEmitter } from '../task/events.js';
import type { FleetActions } from './branch-commands.js';
import type { Landing } from './landing.js';
import type { QueueResult } from './merge-queue.js';

/**
 * The fleet's merges and conflict forecasts, each kind on its own chain. Invariants:
 * - merges never run two at once: a merge, a merge-queue run or an auto-landing waits for the one before it,
 *   and one that fails does not hold up the next;
 * - forecasts run one after another: each reads the branches as the previous left them; a failed one is
 *   logged, never thrown; asks that come while one waits to start join it (it reads the branches when it
 *   starts, in the order last asked for), so every ask is followed by a forecast that starts after it;
 * - stopLanding() stops the merge queue between tasks (and aborts its check) without stopping the fleet; the
 *   next land() gets a fresh stop;
 * - settled() resolves once every merge and forecast started so far has ended (the fleet waits for it at stop).
 */

export interface MergingServices {
  landing: Landing;
  actions: FleetActions;
  events: FleetEmitter;
  /** aborted when the fleet stops: it stops the merge queue too */
  stop: AbortSignal;
}

export class Merging {
  readonly #s: MergingServices;
  #merging: Promise<void> = Promise.resolve();
  /** stops the merge queue between tasks (and aborts its check), without stopping the fleet */
  #landingStop = new AbortController();
  /** forecasts run one after another: each reads the branches as the previous left them */
  #forecasting: Promise<void> = Promise.resolve();
  /** the backlog order of the forecast that waits to start, null when none waits */
  #nextForecast: readonly string[] | null = null;

  constructor(services: MergingServices) {
    this.#s = services;
  }

  /**
   * Merge one verified task as it is, after the merge before it — once its branch's tip passed its checks
   * here ({@link Landing.checkBeforeMerge}); a tip that fails them sends the task back instead.
   */
  merge(id: string, specs: ReadonlyMap<string, TaskSpec>, config: FleetConfig): Promise<void> {
    const run = this.#merging.then(async () => {
      if (await this.#s.landing.checkBeforeMerge(id, specs, config, this.#s.stop)) await this.#s.actions.merge(id);
    });
    this.#merging = run.catch(() => undefined);
    return run;
  }

  /** The merge queue over `ids` (see Fleet.mergeAll), after the merge before it. */
  land(ids: readonly string[], specs: ReadonlyMap<string, TaskSpec>, config: FleetConfig): Promise<QueueResult> {
    if (this.#landingStop.signal.aborted) this.#landingStop = new AbortController();
    const signal = AbortSignal.any([this.#s.stop, this.#landingStop.signal]);
    const run = this.#merging.then(() => this.#s.landing.land(ids, specs, config, signal));
    this.#merging = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Stop the merge queue after the task it is on (its check is aborted; base stays at the last good merge). */
  stopLanding(): void {
    this.#landingStop.abort(new StopError('the merge queue was stopped'));
  }

  /** Predict the verified branches' conflicts again, after the forecast before it. */
  forecast(order: readonly string[]): void {
    const waiting = this.#nextForecast !== null;
    this.#nextForecast = order;
    if (waiting) return;
    this.#forecasting = this.#forecasting
      .then(() => {
        const next = this.#nextForecast!;
        this.#nextForecast = null;
        return this.#s.landing.forecast(next);
      })
      .catch(
        (error: Error) =>
          void this.#s.events.emit('log', { level: 'warn', message: `conflict forecast: ${error.message}` }),
      );
  }

  async settled(): Promise<void> {
    await this.#merging;
    await this.#forecasting;
  }
}
