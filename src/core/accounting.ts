import { costOf, priceOf } from './pricing.js';
import type { FleetState } from './state.js';
import { ZERO_USAGE, addUsage, type ModelPrice, type Role, type TaskState, type Usage } from '../domain/types.js';

/**
 * Books one usage report everywhere it counts: the task, its current attempt (by role), the fleet's
 * totals and this run's spending. Invariant: every token the API reported is added exactly once to each,
 * so the totals always equal the sum of what was reported.
 */
export class Accounting {
  readonly #state: FleetState;
  /** this run's spending, for the fleet gates: a new night starts with a fresh budget */
  #runUsage: Usage = { ...ZERO_USAGE };
  #runCost = 0;

  constructor(state: FleetState) {
    this.#state = state;
  }

  get runUsage(): Usage {
    return this.#runUsage;
  }

  get runCostUsd(): number {
    return this.#runCost;
  }

  /**
   * `reportedUsd` is a command-line agent's own figure, used as it is; otherwise the tokens are priced from
   * the table, and a model it does not know is recorded as unpriced on the task.
   */
  book(id: string, role: Role, model: string, delta: Usage, prices: Readonly<Record<string, ModelPrice>>, reportedUsd?: number): TaskState {
    const price = reportedUsd === undefined ? priceOf(model, prices) : null;
    const cost = reportedUsd ?? (price === null ? 0 : costOf(delta, price));
    const task = this.#state.update(id, (t) => {
      t.usage = addUsage(t.usage, delta);
      t.costUsd += cost;
      if (reportedUsd === undefined && price === null && !t.unpricedModels.includes(model)) t.unpricedModels.push(model);
      const attempt = t.attempts.at(-1);
      if (attempt !== undefined) {
        attempt.usageByRole[role] = addUsage(attempt.usageByRole[role] ?? { ...ZERO_USAGE }, delta);
        attempt.costByRole[role] = (attempt.costByRole[role] ?? 0) + cost;
        attempt.costUsd += cost;
      }
    });
    this.#state.updateFleet((f) => {
      f.usage = addUsage(f.usage, delta);
      f.costUsd += cost;
    });
    this.#runUsage = addUsage(this.#runUsage, delta);
    this.#runCost += cost;
    return task;
  }
}
