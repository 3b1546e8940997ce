import { describe, expect, it } from 'vitest';
import { Accounting } from '../../../src/core/fleet/accounting.js';
import { FleetState } from '../../../src/core/task/state.js';
import { DEFAULT_MODEL } from '../../../src/core/backlog/parse.js';
import { priceOf, costOf } from '../../../src/core/budget/pricing.js';
import { FakeStateStore } from '../../helpers/fake-state-store.js';

const gates = { attempts: 3, tokens: null, timeMs: null, costUsd: null };
const spec = (id: string) => ({ id, title: id, line: 1, done: false, description: '', after: [], files: [] });
const USAGE = { input: 1000, output: 200, cacheWrite: 50, cacheRead: 300 };

async function setup() {
  const state = await FleetState.open(new FakeStateStore(), { now: () => 0 });
  state.lifecycle.ensure(spec('T-1'), gates);
  state.lifecycle.ensure(spec('T-2'), gates);
  state.lifecycle.startAttempt('T-1', 1, 'loop/T-1');
  return { state, accounting: new Accounting(state) };
}

describe('accounting', () => {
  it('books each report once on the task, its attempt by role, and the fleet totals, priced from the table', async () => {
    const { state, accounting } = await setup();
    const price = priceOf(DEFAULT_MODEL, {})!;
    const booked = accounting.book('T-1', 'implementer', DEFAULT_MODEL, USAGE, {});
    accounting.book('T-1', 'verifier', DEFAULT_MODEL, USAGE, {});
    expect(booked.costUsd).toBeCloseTo(costOf(USAGE, price), 12);
    const t = state.get('T-1')!;
    expect(t.usage).toEqual({ input: 2000, output: 400, cacheWrite: 100, cacheRead: 600 });
    expect(t.costUsd).toBeCloseTo(2 * booked.costUsd, 12);
    expect(t.attempts[0]!.usageByRole).toEqual({ implementer: USAGE, verifier: USAGE });
    expect(t.attempts[0]!.costUsd).toBeCloseTo(t.costUsd, 12);
    expect(state.fleet.usage).toEqual(t.usage);
    expect(state.fleet.costUsd).toBeCloseTo(t.costUsd, 12);
    expect(state.get('T-2')!.usage.input).toBe(0);
  });

  it('uses an agent’s own reported cost as it is, and records a model the table does not know as unpriced', async () => {
    const { state, accounting } = await setup();
    expect(accounting.book('T-1', 'implementer', 'some-cli-model', USAGE, {}, 0.42).costUsd).toBe(0.42);
    expect(state.get('T-1')!.unpricedModels).toEqual([]);
    expect(accounting.book('T-1', 'implementer', 'mystery-model', USAGE, {}).costUsd).toBe(0);
    expect(state.get('T-1')!.unpricedModels).toEqual(['mystery-model']);
    expect(state.get('T-1')!.costUsd).toBe(0.42);
    expect(state.fleet.costUsd).toBe(0.42);
  });

  it('prices with the config’s override of the table', async () => {
    const { accounting } = await setup();
    const prices = { 'my-model': { input: 1, output: 2, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0 } };
    expect(
      accounting.book(
        'T-1',
        'explorer',
        'my-model',
        { input: 1_000_000, output: 1_000_000, cacheWrite: 0, cacheRead: 0 },
        prices,
      ).costUsd,
    ).toBeCloseTo(3, 9);
  });
});
