import { costOf, priceOf } from '../budget/pricing.js';
import type { FleetState } from '../task/state.js';
import { addUsage, type ModelPrice, type Role, type TaskState, type Usage } from '../../domain/types.js';

export interface Booking {
  /** the task's record after the booking */
  task: Readonly<TaskState>;
  /** what this report cost, US dollars */
  costUsd: number;
}

/**
 * Books one usage report everywhere the state keeps it: the task and its current attempt (by role, through
 * the task lifecycle) and the fleet's totals. Invariant: every token the API reported is added exactly once
 * to each, so the totals always equal the sum of what was reported. The fleet's budget for the run is fed
 * by the caller with the same figures.
 */
export class Accounting {
  readonly #state: FleetState;

  constructor(state: FleetState) {
    this.#state = state;
  }

  /**
   * `reportedUsd` is a command-line agent's own figure, used as it is; otherwise the tokens are priced from
   * the table, and a model it does not know is recorded as unpriced on the task.
   */
  book(
    id: string,
    role: Role,
    model: string,
    delta: Usage,
    prices: Readonly<Record<string, ModelPrice>>,
    reportedUsd?: number,
  ): Booking {
    const price = reportedUsd === undefined ? priceOf(model, prices) : null;
    const cost = reportedUsd ?? (price === null ? 0 : costOf(delta, price));
    const unpriced = reportedUsd === undefined && price === null ? model : null;
    const task = this.#state.lifecycle.book(id, role, delta, cost, unpriced);
    this.#state.updateFleet((f) => {
      f.usage = addUsage(f.usage, delta);
      f.costUsd += cost;
    });
    return { task, costUsd: cost };
  }
}
