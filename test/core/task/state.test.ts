import { describe, expect, it } from 'vitest';
import { FleetState } from '../../../src/core/task/state.js';
import { systemClock } from '../../../src/ports/clock.js';
import type { StateData } from '../../../src/ports/state-store.js';
import { FakeStateStore } from '../../helpers/fake-state-store.js';

const spec = { id: 'T-1', title: 'One', line: 5, done: false, description: '', after: [], files: [] };
const gates = { attempts: 3, tokens: null, timeMs: null, costUsd: null };
const ONE = { input: 0, output: 1, cacheWrite: 0, cacheRead: 0 };

class SlowStore extends FakeStateStore {
  writes: StateData[] = [];
  override async save(data: StateData): Promise<void> {
    await new Promise((r) => setTimeout(r, 20));
    this.writes.push(data);
    await super.save(data);
  }
}

describe('FleetState', () => {
  it('creates queued records, and merged ones for ticked items', async () => {
    const state = await FleetState.open(new FakeStateStore(), systemClock);
    expect(state.lifecycle.ensure(spec, gates).status).toBe('queued');
    expect(state.lifecycle.ensure({ ...spec, id: 'T-2', done: true }, gates).status).toBe('merged');
  });

  it('batches streamed changes into few writes and flushes everything', async () => {
    const store = new SlowStore();
    const state = await FleetState.open(store, systemClock);
    state.lifecycle.ensure(spec, gates);
    for (let i = 0; i < 1000; i++) state.lifecycle.book('T-1', 'implementer', ONE, 0, null);
    await state.flush();
    expect(store.writes.length).toBeLessThanOrEqual(3);
    expect((await store.load())!.tasks['T-1']!.usage.output).toBe(1000);
  });

  it('never leaves a later change unsaved when it lands during a save', async () => {
    const store = new SlowStore();
    const state = await FleetState.open(store, systemClock);
    state.lifecycle.ensure(spec, gates);
    const first = state.flush();
    state.lifecycle.fail('T-1', { gate: null, reason: 'changed mid-save' });
    await first;
    await state.flush();
    expect((await store.load())!.tasks['T-1']!.reason).toBe('changed mid-save');
  });

  it('settles flush after a batch timer fires with nothing left to save', async () => {
    const state = await FleetState.open(new FakeStateStore(), systemClock);
    state.lifecycle.ensure(spec, gates);
    state.lifecycle.recordTime('T-1', 5); // arms the batch timer
    await state.flush(); // saves and disarms it
    state.touch(); // arms it again
    await state.flush();
    await new Promise((r) => setTimeout(r, 300)); // a timer with nothing to save must not wedge the next flush
    state.touch();
    await expect(
      Promise.race([state.flush().then(() => 'flushed'), new Promise((r) => setTimeout(() => r('stuck'), 1000))]),
    ).resolves.toBe('flushed');
  });

  it('reports a failed save on flush instead of dropping it', async () => {
    const store = new FakeStateStore();
    store.save = async () => {
      throw new Error('disk full');
    };
    const state = await FleetState.open(store, systemClock);
    state.lifecycle.ensure(spec, gates);
    await expect(state.flush()).rejects.toThrow('disk full');
  });
});
