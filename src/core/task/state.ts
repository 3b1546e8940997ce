import type { Clock } from '../../ports/clock.js';
import { STATE_VERSION, type StateChange, type StateData, type StateStore } from '../../ports/state-store.js';
import { ZERO_USAGE, type FleetTotals, type TaskState } from '../../domain/types.js';
import { TaskLifecycle } from './lifecycle.js';

const SAVE_DELAY_MS = 250;

/**
 * The fleet's state in memory, saved through a StateStore. Task records are written only by its
 * `lifecycle`; this class keeps the fleet's totals and the saving.
 *
 * Invariant: at most one save is in flight; changes made meanwhile are saved by the next one, so the
 * file never goes backwards. A save records only the tasks changed since the last one (and the fleet's
 * totals), so its cost does not grow with the number of tasks; the store asks for a whole save now and
 * then to fold its records in, and `flush({ closing: true })` folds them all. Streamed usage marks its
 * task dirty and is saved at most every SAVE_DELAY_MS; status changes flush at once.
 */
export class FleetState {
  readonly #store: StateStore;
  #data: StateData;
  #saving: Promise<void> | null = null;
  #dirty = false;
  /** tasks changed since the last save */
  #changed = new Set<string>();
  /** the next save writes everything (the store asked, or a session closes) */
  #whole = false;
  #timer: NodeJS.Timeout | null = null;
  #saveError: Error | null = null;
  readonly #saveErrorListeners = new Set<(error: Error) => void>();
  /** the one writer of task records */
  readonly lifecycle: TaskLifecycle;

  private constructor(store: StateStore, clock: Clock, data: StateData) {
    this.#store = store;
    this.#data = data;
    this.lifecycle = new TaskLifecycle(data.tasks, clock, (id, flush) => {
      this.#changed.add(id);
      this.touch(flush);
    });
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

  /**
   * Resolves when everything changed so far is on disk; rejects with the last save error. `closing`: as one
   * whole save, folding every record in (a whole save that fails leaves the records, which load replays).
   */
  async flush(options: { closing?: boolean } = {}): Promise<void> {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (options.closing === true && this.#store.wantsSave(true)) {
      this.#whole = true;
      this.#dirty = true;
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
        const whole = this.#whole;
        const changed = this.#changed;
        this.#changed = new Set();
        this.#whole = false;
        try {
          // The store serialises synchronously, so later mutations cannot tear what it writes.
          if (whole) await this.#store.save(this.#data);
          else await this.#store.record(this.#change(changed));
          this.#saveError = null;
          if (this.#store.wantsSave(false)) {
            this.#whole = true;
            this.#dirty = true;
          }
        } catch (error) {
          for (const id of changed) this.#changed.add(id);
          this.#saveError = error as Error;
          // Nothing is dropped: the data stays dirty, and the next save (a later change, or flush) writes it all.
          this.#dirty = true;
          for (const listener of this.#saveErrorListeners) listener(error as Error);
          // A whole save that failed leaves the records as they were: the changes go on as records, at once
          // (a small record may still fit where the whole state did not).
          if (!whole) break;
        }
      }
    };
    // `.finally` runs in a later microtask, so #saving is always cleared after it is set, never before.
    this.#saving = run().finally(() => {
      this.#saving = null;
    });
    return this.#saving;
  }

  #change(ids: Set<string>): StateChange {
    const tasks = [];
    for (const id of ids) {
      const task = this.lifecycle.get(id);
      if (task !== undefined) tasks.push(task);
    }
    return { base: this.#data.base, fleet: this.#data.fleet, tasks } as StateChange;
  }
}
