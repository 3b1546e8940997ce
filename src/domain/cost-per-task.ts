/**
 * Cost per verified task and per merged task: one definition for the report, `status --json --summary`, the
 * interactive view's fleet bar, the OpenTelemetry gauges and the evals.
 *
 * Invariant: the cost is everything the tasks spent, failed attempts and failed tasks included, divided by
 * the tasks that reached `verified` (a merged task was verified first, so it counts) — or, for
 * `costPerMerged`, by the tasks that landed. With none to divide by, the figure is null, never 0 or ∞.
 */
import type { TaskStatus } from './vocabulary.js';

export interface CostPerTask {
  costUsd: number;
  /** tasks that reached verified: `verified` and `merged` */
  verified: number;
  merged: number;
  costPerVerified: number | null;
  costPerMerged: number | null;
}

export function costPerTask(tasks: ReadonlyArray<{ status: TaskStatus; costUsd: number }>): CostPerTask {
  const costUsd = tasks.reduce((sum, t) => sum + t.costUsd, 0);
  const merged = tasks.filter((t) => t.status === 'merged').length;
  const verified = merged + tasks.filter((t) => t.status === 'verified').length;
  return costFigures(costUsd, verified, merged);
}

/** The figures from totals already summed: `verified` counts merged tasks too. */
export function costFigures(costUsd: number, verified: number, merged: number): CostPerTask {
  return {
    costUsd,
    verified,
    merged,
    costPerVerified: verified === 0 ? null : costUsd / verified,
    costPerMerged: merged === 0 ? null : costUsd / merged,
  };
}
