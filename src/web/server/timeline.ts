import type { FleetSnapshotSummary } from '../../core/task/events.js';
import type { FleetEmitter } from '../../core/task/events.js';
import { totalTokens } from '../../domain/types.js';

/** One point of the run's spend and throughput. */
export interface TimelinePoint {
  /** ISO time */
  t: string;
  costUsd: number;
  tokens: number;
  verified: number;
  merged: number;
  running: number;
}

/** At most one point per this many ms: a sample is taken this long after the first event that follows one. */
export const SAMPLE_MS = 1_000;
/** The most points kept; when full, every other point is dropped, so the series keeps spanning the run. */
export const MAX_POINTS = 1_440;

/**
 * The fleet's spend (cost, tokens) and throughput (verified, merged, running) over the run, sampled from its
 * events for the page's chart. Work per event is constant: an event only arms a timer; the summary is read
 * once per {@link SAMPLE_MS} at most.
 */
export class Timeline {
  readonly #points: TimelinePoint[] = [];
  readonly #summary: () => FleetSnapshotSummary;
  readonly #off: () => void;
  #timer: NodeJS.Timeout | null = null;

  constructor(events: FleetEmitter, summary: () => FleetSnapshotSummary, now: () => Date = () => new Date()) {
    this.#summary = summary;
    this.#now = now;
    this.sample();
    const arm = () => {
      if (this.#timer !== null) return;
      this.#timer = setTimeout(() => {
        this.#timer = null;
        this.sample();
      }, SAMPLE_MS);
      this.#timer.unref();
    };
    events.on('usage', arm);
    events.on('fleet', arm);
    this.#off = () => {
      events.off('usage', arm);
      events.off('fleet', arm);
    };
  }

  readonly #now: () => Date;

  /** Adds a point for now. */
  sample(): void {
    const s = this.#summary();
    this.#points.push({
      t: this.#now().toISOString(),
      costUsd: Math.round(s.totals.costUsd * 1e6) / 1e6,
      tokens: totalTokens(s.totals.usage),
      verified: s.counts.verified,
      merged: s.counts.merged,
      running: s.counts.running,
    });
    if (this.#points.length > MAX_POINTS) {
      const kept = this.#points.filter((_, i) => i % 2 === 0 || i === this.#points.length - 1);
      this.#points.splice(0, this.#points.length, ...kept);
    }
  }

  points(): TimelinePoint[] {
    return this.#points.map((p) => ({ ...p }));
  }

  close(): void {
    this.#off();
    if (this.#timer !== null) clearTimeout(this.#timer);
  }
}
