import type { FleetTotals, TaskState } from '../domain/types.js';

export const STATE_VERSION = 1;

/** The whole of the fleet's state: `.loop-worktrees/state.json` with its journal replayed over it. */
export interface StateData {
  version: number;
  /** base branch of the fleet that wrote the file */
  base: string | null;
  fleet: FleetTotals;
  tasks: Record<string, TaskState>;
}

/** What changed since the last write: the header (always) and the whole records of the tasks that changed. */
export interface StateChange {
  base: string | null;
  fleet: FleetTotals;
  tasks: TaskState[];
}

/**
 * Durable fleet state.
 *
 * Invariants: `save` and `record` serialise what they are given before their first `await` (the caller may
 * change it right after the call); each is atomic — a crash leaves the state as it was before the call or
 * after it, never half of a record; `load` returns the last `save` with every later `record` applied.
 */
export interface StateStore {
  load(): Promise<StateData | null>;
  /** The whole state at once; replaces everything recorded before. */
  save(data: StateData): Promise<void>;
  /** Only what changed, in time and space that depend on the change, not on the number of tasks. */
  record(change: StateChange): Promise<void>;
  /**
   * Whether the records since the last save have grown enough that a whole save should fold them in
   * (`closing`: whether there are any at all, for a session that ends).
   */
  wantsSave(closing: boolean): boolean;
}

/** `data` with `change` applied (in place). */
export function applyChange(data: StateData, change: StateChange): StateData {
  data.base = change.base;
  data.fleet = change.fleet;
  for (const task of change.tasks) data.tasks[task.id] = task;
  return data;
}
