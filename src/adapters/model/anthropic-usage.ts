import type { Usage } from '../../domain/types.js';

/**
 * Turns the usage a Messages stream reports into deltas. `message_start` carries the input-side counts and
 * an initial output count; `message_delta` carries cumulative totals, each field present only when it
 * applies. A meter remembers what it has already passed on, so the deltas of one response sum exactly to
 * its last reported totals — also when the stream is cut or aborted before it ends. Null or missing counts
 * (compatible endpoints omit them) are taken as "unchanged", and as 0 before anything was reported.
 */

export interface ReportedUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

const FIELDS: ReadonlyArray<[keyof ReportedUsage, keyof Usage]> = [
  ['input_tokens', 'input'],
  ['output_tokens', 'output'],
  ['cache_creation_input_tokens', 'cacheWrite'],
  ['cache_read_input_tokens', 'cacheRead'],
];

export class UsageMeter {
  readonly #seen: Usage = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };

  /** The delta since the last report, or null when nothing changed. */
  report(usage: ReportedUsage | null | undefined): Usage | null {
    if (usage === null || usage === undefined) return null;
    const delta: Usage = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
    let changed = false;
    for (const [from, to] of FIELDS) {
      const value = usage[from];
      if (typeof value !== 'number' || !Number.isFinite(value)) continue;
      // Totals only grow; a smaller number is a server quirk and never makes a negative delta.
      const diff = Math.max(0, value - this.#seen[to]);
      if (diff > 0) {
        delta[to] = diff;
        this.#seen[to] += diff;
        changed = true;
      }
    }
    return changed ? delta : null;
  }

  /** What this meter has passed on in total. */
  get total(): Usage {
    return { ...this.#seen };
  }
}
