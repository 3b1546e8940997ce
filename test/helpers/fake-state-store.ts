import { applyChange, type StateChange, type StateData, type StateStore } from '../../src/ports/state-store.js';

/**
 * In-memory store for tests. Keeps deep copies so callers cannot alias stored data. A `record` is saved
 * as the whole state with the change applied, so a test that overrides `save` sees every write.
 */
export class FakeStateStore implements StateStore {
  #data: string | null = null;
  saves = 0;
  async load(): Promise<StateData | null> {
    return this.#data === null ? null : (JSON.parse(this.#data) as StateData);
  }
  async save(data: StateData): Promise<void> {
    this.#data = JSON.stringify(data);
    this.saves++;
  }
  record(change: StateChange): Promise<void> {
    const base: StateData =
      this.#data === null
        ? { version: 1, base: null, fleet: change.fleet, tasks: {} }
        : (JSON.parse(this.#data) as StateData);
    return this.save(applyChange(base, structuredClone(change)));
  }
  wantsSave(): boolean {
    return false;
  }
}
