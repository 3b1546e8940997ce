import { describe, expect, it } from 'vitest';
import {
  FleetBudget,
  TaskBudget,
  checkFleetGates,
  checkTaskGates,
  errorSignature,
  failureFingerprint,
  failureSignature,
  sameFailure,
} from '../../../src/core/budget/gates.js';
import { newAttempt } from '../../../src/core/task/attempt-record.js';
import { ZERO_USAGE, type AttemptRecord, type TaskState } from '../../../src/domain/types.js';

function task(over: Partial<TaskState> = {}): TaskState {
  return {
    id: 'T-1',
    title: 't',
    status: 'running',
    phase: null,
    attempt: 1,
    maxAttempts: 3,
    usage: { ...ZERO_USAGE },
    costUsd: 0,
    branch: null,
    reason: null,
    gate: null,
    attempts: [],
    elapsedMs: 0,
    startedAt: null,
    updatedAt: '',
    unpricedModels: [],
    verifyOnly: false,
    budget: { fromAttempt: 0, usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0 },
    ...over,
  };
}

const gates = { attempts: 3, tokens: 1000, timeMs: 60_000, costUsd: 1 };

describe('task gates', () => {
  it('pass under every limit', () => {
    expect(
      checkTaskGates(task({ usage: { input: 500, output: 100, cacheWrite: 0, cacheRead: 0 } }), gates, 1000),
    ).toBeNull();
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
      budget: {
        fromAttempt: 3,
        usage: { input: 4800, output: 0, cacheWrite: 0, cacheRead: 0 },
        costUsd: 2.5,
        elapsedMs: 100_000,
      },
    });
    expect(checkTaskGates(retried, gates, 110_000)).toBeNull();
  });
  it('null means no limit', () => {
    expect(
      checkTaskGates(
        task({ usage: { input: 1e9, output: 0, cacheWrite: 0, cacheRead: 0 }, costUsd: 1e6 }),
        { attempts: 1, tokens: null, timeMs: null, costUsd: null },
        1e12,
      ),
    ).toBeNull();
  });
});

describe('fleet gates', () => {
  const totals = { usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0, startedAt: null };
  it('trip on tokens, cost and time with the fleet gate names', () => {
    expect(
      checkFleetGates(
        { ...totals, usage: { input: 10, output: 0, cacheWrite: 0, cacheRead: 0 } },
        { tokens: 10, costUsd: null, timeMs: null },
        0,
      )?.gate,
    ).toBe('fleet_tokens');
    expect(checkFleetGates({ ...totals, costUsd: 26 }, { tokens: null, costUsd: 25, timeMs: null }, 0)?.gate).toBe(
      'fleet_cost',
    );
    expect(checkFleetGates(totals, { tokens: null, costUsd: null, timeMs: 1000 }, 1000)?.gate).toBe('fleet_time');
    expect(checkFleetGates(totals, { tokens: 10, costUsd: 1, timeMs: 1000 }, 10)).toBeNull();
  });
});

describe('failure fingerprints', () => {
  it('ignore numbers such as durations, keep the words', () => {
    expect(failureFingerprint('check-failed', 'fail 1 in 0.51s')).toBe(
      failureFingerprint('check-failed', 'fail 1 in 0.87s'),
    );
    expect(failureFingerprint('check-failed', 'expected 0, got NaN')).not.toBe(
      failureFingerprint('check-failed', 'expected 0, got undefined'),
    );
    expect(failureFingerprint('vetoed', 'x')).not.toBe(failureFingerprint('check-failed', 'x'));
  });
});

describe('the task budget', () => {
  const attempt = (
    n: number,
    outcome: AttemptRecord['outcome'],
    fingerprint: string | null = null,
    reason: string | null = null,
  ): AttemptRecord => ({
    ...newAttempt(n, ''),
    outcome,
    fingerprint,
    reason,
  });

  it('trips the attempts gate once the budget’s attempts have ended, not counting interrupted ones', () => {
    const budget = new TaskBudget(gates);
    const two = task({ attempts: [attempt(1, 'check-failed'), attempt(2, 'interrupted'), attempt(2, 'check-failed')] });
    expect(budget.attemptsUsed(two)).toBe(2);
    expect(budget.beforeAttempt(two)).toBeNull();
    const three = task({ attempts: [...two.attempts, attempt(3, 'vetoed')] });
    const err = budget.beforeAttempt(three);
    expect(err?.gate).toBe('attempts');
    expect(err?.message).toBe('attempts gate: 3 of 3 attempts failed');
  });

  it('gives a retried task fresh attempts', () => {
    const budget = new TaskBudget(gates);
    const retried = task({
      attempts: [attempt(1, 'check-failed'), attempt(2, 'check-failed'), attempt(3, 'check-failed')],
      budget: { fromAttempt: 3, usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 0 },
    });
    expect(budget.attemptsUsed(retried)).toBe(0);
    expect(budget.beforeAttempt(retried)).toBeNull();
  });

  it('checks tokens, cost and time before an attempt, in that order after the attempts', () => {
    const budget = new TaskBudget(gates);
    expect(
      budget.beforeAttempt(task({ usage: { input: 2000, output: 0, cacheWrite: 0, cacheRead: 0 }, costUsd: 5 }))?.gate,
    ).toBe('tokens');
    expect(budget.beforeAttempt(task({ costUsd: 5, elapsedMs: 100_000 }))?.gate).toBe('cost');
    expect(budget.check(task({ elapsedMs: 60_000 }))?.message).toBe('time gate: ran 1m 00s, limit 1m');
  });

  it('tells the time left, from the budget’s start', () => {
    const budget = new TaskBudget(gates);
    const t = task({ budget: { fromAttempt: 0, usage: { ...ZERO_USAGE }, costUsd: 0, elapsedMs: 10_000 } });
    expect(budget.remainingMs(t, 30_000)).toBe(40_000);
    expect(budget.remainingMs(t, 500_000)).toBe(1);
    expect(new TaskBudget({ ...gates, timeMs: null }).remainingMs(t, 1e12)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('fires the time gate by itself during an attempt, and not after it is disarmed', async () => {
    const budget = new TaskBudget({ ...gates, timeMs: 30 });
    const trips: string[] = [];
    budget.armTimer(task(), (g) => trips.push(g.message));
    const disarm = budget.armTimer(task(), () => trips.push('disarmed one fired'));
    disarm();
    await new Promise((r) => setTimeout(r, 60));
    expect(trips).toEqual(['time gate: ran <1s, limit <1s']);
  });

  it('trips no-progress when the last two attempts failed the same way, while attempts are left', () => {
    const budget = new TaskBudget({ ...gates, attempts: 5 });
    const same = task({
      attempts: [attempt(1, 'check-failed', 'k', 'check exited 1'), attempt(2, 'check-failed', 'k', 'check exited 1')],
    });
    expect(budget.noProgress(same)?.message).toBe('no progress: attempts 1 and 2 failed the same way (check exited 1)');
    const different = task({ attempts: [attempt(1, 'check-failed', 'k'), attempt(2, 'check-failed', 'other')] });
    expect(budget.noProgress(different)).toBeNull();
    const interruptedBetween = task({
      attempts: [attempt(1, 'check-failed', 'k'), attempt(2, 'interrupted'), attempt(2, 'check-failed', 'k')],
    });
    expect(budget.noProgress(interruptedBetween)?.gate).toBe('no-progress');
    // the last attempt: the attempts gate speaks instead
    expect(new TaskBudget({ ...gates, attempts: 2 }).noProgress(same)).toBeNull();
    // before the retry: not compared
    expect(budget.noProgress({ ...same, budget: { ...same.budget, fromAttempt: 1 } })).toBeNull();
  });

  it('counts fewer failing tests as progress, whatever the wording', () => {
    const a = failureSignature('check-failed', '3 tests failed', 3);
    const b = failureSignature('check-failed', '2 tests failed', 2);
    expect(a.key).toBe(b.key);
    expect(sameFailure(a, b)).toBe(false);
    expect(sameFailure(b, failureSignature('check-failed', '2 tests failed', 2))).toBe(true);
    expect(sameFailure(a, failureSignature('check-failed', '3 tests failed'))).toBe(true);
    expect(errorSignature('boom 1').key).toBe('error:boom 1');
  });
});

describe('the fleet budget', () => {
  const limits = { tokens: 1000, costUsd: 2, timeMs: null };

  it('counts this run’s spending and trips once, reporting the first trip', () => {
    const trips: string[] = [];
    const budget = new FleetBudget(
      () => limits,
      () => 0,
      (g) => trips.push(g.gate),
    );
    budget.start();
    budget.spend({ input: 900, output: 0, cacheWrite: 0, cacheRead: 0 }, 0.5);
    expect(budget.check()).toBeNull();
    budget.spend({ input: 100, output: 0, cacheWrite: 0, cacheRead: 0 }, 0.5);
    expect(budget.check()?.message).toBe('fleet token gate: 1k tokens used, limit 1k');
    budget.spend({ input: 0, output: 0, cacheWrite: 0, cacheRead: 0 }, 5);
    expect(budget.check()?.gate).toBe('fleet_tokens');
    expect(trips).toEqual(['fleet_tokens']);
    expect(budget.usage.input).toBe(1000);
    expect(budget.costUsd).toBe(6);
  });

  it('trips on cost, and reads the gates at each check', () => {
    let current = { ...limits, costUsd: 10 };
    const budget = new FleetBudget(
      () => current,
      () => 0,
      () => undefined,
    );
    budget.spend({ ...ZERO_USAGE }, 3);
    expect(budget.check()).toBeNull();
    current = { ...limits, costUsd: 2 };
    expect(budget.check()?.gate).toBe('fleet_cost');
  });

  it('fires the time gate by itself from start()', async () => {
    let now = 0;
    const trips: string[] = [];
    const budget = new FleetBudget(
      () => ({ tokens: null, costUsd: null, timeMs: 20 }),
      () => now,
      (g) => trips.push(g.message),
    );
    budget.start();
    now = 25;
    await new Promise((r) => setTimeout(r, 50));
    expect(trips).toEqual(['fleet time gate: ran <1s, limit <1s']);
    expect(budget.elapsedMs()).toBe(25);
    budget.dispose();
  });

  it('keeps watching the time gate when its timer fires before the clock says the time is up', async () => {
    let now = 0;
    const trips: string[] = [];
    const budget = new FleetBudget(
      () => ({ tokens: null, costUsd: null, timeMs: 20 }),
      () => now,
      (g) => trips.push(g.message),
    );
    budget.start();
    now = 19; // the timer fires, the wall clock one millisecond short of the limit
    await new Promise((r) => setTimeout(r, 40));
    expect(trips).toEqual([]);
    now = 20;
    await new Promise((r) => setTimeout(r, 40));
    expect(trips).toEqual(['fleet time gate: ran <1s, limit <1s']);
    budget.dispose();
  });
});
