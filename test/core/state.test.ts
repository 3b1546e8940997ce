import { describe, expect, it } from 'vitest';
import { FleetState } from '../../src/core/state.js';
import { systemClock } from '../../src/ports/clock.js';
import { MemoryStateStore, type StateData } from '../../src/ports/state-store.js';

const spec = { id: 'T-1', title: 'One', line: 5, done: false, description: '', after: [], files: [] };

class SlowStore extends MemoryStateStore {
  writes: StateData[] = [];
  override async save(data: StateData): Promise<void> {
    await new Promise((r) => setTimeout(r, 20));
    this.writes.push(data);
    await super.save(data);
  }
}

describe('FleetState', () => {
  it('creates queued records, and merged ones for ticked items', async () => {
    const state = await FleetState.open(new MemoryStateStore(), systemClock);
    expect(state.ensure(spec, 3).status).toBe('queued');
    expect(state.ensure({ ...spec, id: 'T-2', done: true }, 3).status).toBe('merged');
  });

  it('batches streamed changes into few writes and flushes everything', async () => {
    const store = new SlowStore();
    const state = await FleetState.open(store, systemClock);
    state.ensure(spec, 3);
    for (let i = 0; i < 1000; i++) state.update('T-1', (t) => (t.usage.output += 1));
    await state.flush();
    expect(store.writes.length).toBeLessThanOrEqual(3);
    expect((await store.load())!.tasks['T-1']!.usage.output).toBe(1000);
  });

  it('never leaves a later change unsaved when it lands during a save', async () => {
    const store = new SlowStore();
    const state = await FleetState.open(store, systemClock);
    state.ensure(spec, 3);
    const first = state.flush();
    state.update('T-1', (t) => (t.reason = 'changed mid-save'), true);
    await first;
    await state.flush();
    expect((await store.load())!.tasks['T-1']!.reason).toBe('changed mid-save');
  });

  it('settles flush after a batch timer fires with nothing left to save', async () => {
    const state = await FleetState.open(new MemoryStateStore(), systemClock);
    state.ensure(spec, 3);
    state.update('T-1', (t) => (t.attempt = 1)); // arms the batch timer
    await state.flush(); // saves and disarms it
    state.touch(); // arms it again
    await state.flush();
    await new Promise((r) => setTimeout(r, 300)); // a timer with nothing to save must not wedge the next flush
    state.touch();
    await expect(Promise.race([state.flush().then(() => 'flushed'), new Promise((r) => setTimeout(() => r('stuck'), 1000))])).resolves.toBe('flushed');
  });

  it('reports a failed save on flush instead of dropping it', async () => {
    const store = new MemoryStateStore();
    store.save = async () => {
      throw new Error('disk full');
    };
    const state = await FleetState.open(store, systemClock);
    state.ensure(spec, 3);
    await expect(state.flush()).rejects.toThrow('disk full');
  });
});
