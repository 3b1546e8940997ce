import type { StateData, StateStore } from '../../src/ports/state-store.js';

/** In-memory store for tests. Keeps deep copies so callers cannot alias stored data. */
export class MemoryStateStore implements StateStore {
  #data: string | null = null;
  saves = 0;
  async load(): Promise<StateData | null> {
    return this.#data === null ? null : (JSON.parse(this.#data) as StateData);
  }
  async save(data: StateData): Promise<void> {
    this.#data = JSON.stringify(data);
    this.saves++;
  }
}
