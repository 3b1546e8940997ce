import { describe, expect, it } from 'vitest';
import { checkFleetGates, checkTaskGates, failureFingerprint } from '../../src/core/gates.js';
import { ZERO_USAGE, type TaskState } from '../../src/domain/types.js';

function task(over: Partial<TaskState> = {}): TaskState {
  return {
    id: 'T-1', title: 't', status: 'running', phase: null, attempt: 1, maxAttempts: 3,
    usage: { ...ZERO_USAGE }, costUsd: 0, branch: null, reason: null, gate: null, attempts: [],
    elapsedMs: 0, startedAt: null, updatedAt: '', unpricedModels: [], verifyOnly: false,
    budget: { fromAttempt: 0, usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0 },
    ...over,
  };
}

const gates = { attempts: 3, tokens: 1000, timeMs: 60_000, costUsd: 1 };

describe('task gates', () => {
  it('pass under every limit', () => {
    expect(checkTaskGates(task({ usage: { input: 500, output: 100, cacheWrite: 0, cacheRead: 0 } }), gates, 1000)).toBeNull();
  });
  it('count all four kinds of tokens', () => {
    const err = checkTaskGates(task({ usage: { input: 250, output: 250, cacheWrite: 250, cacheRead: 250 } }), gates, 0);
    expect(err?.gate).toBe('tokens');
    expect(err?.message).toMatch(/1k tokens used, limit 1k/);
  });
  it('trip on cost and on time', () => {
    expect(checkTaskGates(task({ costUsd: 1.5 }), gates, 0)?.gate).toBe('cost');
    expect(checkTaskGates(task(), gates, 60_000)?.gate).toBe('time');
  });
  it('measure from the budget a retry started', () => {
    const retried = task({
      usage: { input: 5000, output: 0, cacheWrite: 0, cacheRead: 0 },
      costUsd: 3,
      budget: { fromAttempt: 3, usage: { input: 4800, output: 0, cacheWrite: 0, cacheRead: 0 }, costUsd: 2.5, elapsedMs: 100_000 },
    });
    expect(checkTaskGates(retried, gates, 110_000)).toBeNull();
  });
  it('null means no limit', () => {
    expect(checkTaskGates(task({ usage: { input: 1e9, output: 0, cacheWrite: 0, cacheRead: 0 }, costUsd: 1e6 }), { attempts: 1, tokens: null, timeMs: null, costUsd: null }, 1e12)).toBeNull();
  });
});

describe('fleet gates', () => {
  const totals = { usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0, startedAt: null };
  it('trip on tokens, cost and time with the fleet gate names', () => {
    expect(checkFleetGates({ ...totals, usage: { input: 10, output: 0, cacheWrite: 0, cacheRead: 0 } }, { tokens: 10, costUsd: null, timeMs: null }, 0)?.gate).toBe('fleet_tokens');
    expect(checkFleetGates({ ...totals, costUsd: 26 }, { tokens: null, costUsd: 25, timeMs: null }, 0)?.gate).toBe('fleet_cost');
    expect(checkFleetGates(totals, { tokens: null, costUsd: null, timeMs: 1000 }, 1000)?.gate).toBe('fleet_time');
    expect(checkFleetGates(totals, { tokens: 10, costUsd: 1, timeMs: 1000 }, 10)).toBeNull();
  });
});

describe('failure fingerprints', () => {
  it('ignore numbers such as durations, keep the words', () => {
    expect(failureFingerprint('check-failed', 'fail 1 in 0.51s')).toBe(failureFingerprint('check-failed', 'fail 1 in 0.87s'));
    expect(failureFingerprint('check-failed', 'expected 0, got NaN')).not.toBe(failureFingerprint('check-failed', 'expected 0, got undefined'));
    expect(failureFingerprint('vetoed', 'x')).not.toBe(failureFingerprint('check-failed', 'x'));
  });
});
