import type { Clock } from '../ports/clock.js';
import { STATE_VERSION, type StateData, type StateStore } from '../ports/state-store.js';
import { ZERO_USAGE, type FleetTotals, type TaskState } from '../domain/types.js';
import { TaskLifecycle } from './task-lifecycle.js';

const SAVE_DELAY_MS = 250;

/**
 * The fleet's state in memory, saved through a StateStore. Task records are written only by its
 * `lifecycle`; this class keeps the fleet's totals and the saving.
 *
 * Invariant: at most one save is in flight; changes made meanwhile are saved by the next one, so the
 * file never goes backwards. Streamed usage marks the state dirty and is saved at most every
 * SAVE_DELAY_MS (one full-file rewrite per token would dominate a run); status changes flush at once.
 */
export class FleetState {
  readonly #store: StateStore;
  #data: StateData;
  #saving: Promise<void> | null = null;
  #dirty = false;
  #timer: NodeJS.Timeout | null = null;
  #saveError: Error | null = null;
  readonly #saveErrorListeners = new Set<(error: Error) => void>();
  /** the one writer of task records */
  readonly lifecycle: TaskLifecycle;

  private constructor(store: StateStore, clock: Clock, data: StateData) {
    this.#store = store;
    this.#data = data;
    this.lifecycle = new TaskLifecycle(data.tasks, clock, (flush) => this.touch(flush));
  }

  /** Tells `listener` of every save that failed (a full disk); returns the unsubscribe function. */
  onSaveError(listener: (error: Error) => void): () => void {
    this.#saveErrorListeners.add(listener);
    return () => this.#saveErrorListeners.delete(listener);
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

  get fleet(): Readonly<FleetTotals> {
    return this.#data.fleet;
  }

  get(id: string): Readonly<TaskState> | undefined {
    return this.lifecycle.get(id);
  }

  all(): Readonly<TaskState>[] {
    return this.lifecycle.all();
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
      // A failed save leaves the data dirty: report it rather than trying again forever.
      if (this.#saveError !== null) break;
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
          this.#saveError = null;
        } catch (error) {
          this.#saveError = error as Error;
          // Nothing is dropped: the data stays dirty, and the next save (a later change, or flush) writes it all.
          this.#dirty = true;
          for (const listener of this.#saveErrorListeners) listener(error as Error);
          break;
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
