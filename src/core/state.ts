import type { Clock } from '../ports/clock.js';
import { STATE_VERSION, type StateData, type StateStore } from '../ports/state-store.js';
import { ZERO_USAGE, type FleetTotals, type TaskGates, type TaskSpec, type TaskState } from '../domain/types.js';

const SAVE_DELAY_MS = 250;

/**
 * The fleet's state in memory, saved through a StateStore.
 *
 * Invariant: at most one save is in flight; changes made meanwhile are saved by the next one, so the
 * file never goes backwards. Streamed usage marks the state dirty and is saved at most every
 * SAVE_DELAY_MS (one full-file rewrite per token would dominate a run); status changes flush at once.
 */
export class FleetState {
  readonly #store: StateStore;
  readonly #clock: Clock;
  #data: StateData;
  #saving: Promise<void> | null = null;
  #dirty = false;
  #timer: NodeJS.Timeout | null = null;
  #saveError: Error | null = null;

  private constructor(store: StateStore, clock: Clock, data: StateData) {
    this.#store = store;
    this.#clock = clock;
    this.#data = data;
  }

  static async open(store: StateStore, clock: Clock): Promise<FleetState> {
    const data = (await store.load()) ?? {
      version: STATE_VERSION,
      base: null,
      fleet: { usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0, startedAt: null },
      tasks: {},
    };
    return new FleetState(store, clock, data);
  }

  get base(): string | null {
    return this.#data.base;
  }
  set base(value: string | null) {
    this.#data.base = value;
    this.touch();
  }

  get fleet(): FleetTotals {
    return this.#data.fleet;
  }

  get(id: string): TaskState | undefined {
    return this.#data.tasks[id];
  }

  all(): TaskState[] {
    return Object.values(this.#data.tasks);
  }

  /** The task's record, created `queued` on first sight. Title and gates are refreshed from the backlog. */
  ensure(spec: TaskSpec, maxAttempts: number, gates?: TaskGates): TaskState {
    const now = new Date(this.#clock.now()).toISOString();
    let task = this.#data.tasks[spec.id];
    if (task === undefined) {
      task = {
        id: spec.id,
        title: spec.title,
        status: spec.done ? 'merged' : 'queued',
        phase: null,
        attempt: 0,
        maxAttempts,
        usage: { ...ZERO_USAGE },
        costUsd: 0,
        branch: null,
        reason: null,
        gate: null,
        attempts: [],
        elapsedMs: 0,
        startedAt: null,
        updatedAt: now,
        unpricedModels: [],
        verifyOnly: false,
        ...(gates === undefined ? {} : { gates }),
        budget: { fromAttempt: 0, usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0 },
      };
      this.#data.tasks[spec.id] = task;
      this.touch(true);
    } else if (task.title !== spec.title || task.maxAttempts !== maxAttempts || JSON.stringify(task.gates) !== JSON.stringify(gates)) {
      task.title = spec.title;
      task.maxAttempts = maxAttempts;
      if (gates !== undefined) task.gates = gates;
      this.touch();
    }
    return task;
  }

  /**
   * Tasks a crash or a kill left `running` go back to `queued`; the attempt they were in is kept as
   * `interrupted` (its spending stays in the totals) and runs again under the same number.
   */
  requeueInterrupted(): void {
    const now = new Date(this.#clock.now()).toISOString();
    for (const task of this.all()) {
      if (task.status !== 'running') continue;
      this.update(task.id, (t) => {
        const a = t.attempts.find((x) => x.n === t.attempt && x.outcome === 'running');
        if (a !== undefined) {
          a.outcome = 'interrupted';
          a.reason = 'the fleet stopped while the attempt ran';
          a.endedAt = now;
        }
        t.status = 'queued';
        t.phase = null;
        t.reason = 'resumed after an interrupted run';
      });
    }
  }

  /** Apply `change` to a task; `flush` saves without waiting for the batch window (status changes). */
  update(id: string, change: (task: TaskState) => void, flush = false): TaskState {
    const task = this.#data.tasks[id];
    if (task === undefined) throw new Error(`no state for task ${id}`);
    change(task);
    task.updatedAt = new Date(this.#clock.now()).toISOString();
    this.touch(flush);
    return task;
  }

  updateFleet(change: (fleet: FleetTotals) => void): void {
    change(this.#data.fleet);
    this.touch();
  }

  /** Mark dirty; save soon (or now). */
  touch(flush = false): void {
    this.#dirty = true;
    if (flush) {
      void this.#saveNow();
      return;
    }
    if (this.#timer === null) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        void this.#saveNow();
      }, SAVE_DELAY_MS);
      this.#timer.unref();
    }
  }

  /** Resolves when everything changed so far is on disk; rejects with the last save error. */
  async flush(): Promise<void> {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    while (this.#dirty || this.#saving !== null) {
      if (this.#saving !== null) await this.#saving;
      else await this.#saveNow();
    }
    if (this.#saveError !== null) {
      const error = this.#saveError;
      this.#saveError = null;
      throw error;
    }
  }

  #saveNow(): Promise<void> {
    if (this.#saving !== null) return this.#saving; // the dirty flag makes the running save loop again
    if (!this.#dirty) return Promise.resolve();
    const run = async () => {
      while (this.#dirty) {
        this.#dirty = false;
        // A deep copy is taken synchronously so later mutations cannot tear the written document.
        const snapshot = structuredClone(this.#data);
        try {
          await this.#store.save(snapshot);
        } catch (error) {
          this.#saveError = error as Error;
        }
      }
    };
    // `.finally` runs in a later microtask, so #saving is always cleared after it is set, never before.
    this.#saving = run().finally(() => {
      this.#saving = null;
    });
    return this.#saving;
  }
}
