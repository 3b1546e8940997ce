import type { FleetTotals, TaskState } from '../domain/types.js';

export const STATE_VERSION = 1;

/** The whole of `.loop-worktrees/state.json`. */
export interface StateData {
  version: number;
  /** base branch of the fleet that wrote the file */
  base: string | null;
  fleet: FleetTotals;
  tasks: Record<string, TaskState>;
}

/** Durable fleet state. `save` must be atomic: a crash leaves the old or the new file, never half of one. */
export interface StateStore {
  load(): Promise<StateData | null>;
  save(data: StateData): Promise<void>;
}
