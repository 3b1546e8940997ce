import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/core/backlog/config.js';
import { emptyResult } from '../../../src/core/attempt/commit-check.js';
import { confirmClaim } from '../../../src/core/executor/claim-check.js';
import type { AttemptInput, AttemptResult } from '../../../src/core/attempt/attempt-io.js';
import { claimedVerified } from '../../helpers/fake-lying-worker.js';

const TIP = 'b'.repeat(40);

/** An attempt's input whose observer records the notices and flags it is told. */
function input() {
  const told = { notices: [] as string[], flags: [] as Array<[string, string]> };
  const value: AttemptInput = {
    spec: { id: 'T-1', title: 'One', line: 1, done: false, description: '', after: [], files: [] },
    config: defaultConfig(),
    base: 'main',
    repoRoot: '/repo',
    worktree: '/repo/.loop-worktrees/T-1',
    branch: 'loop/T-1',
    attempt: 1,
    verifyOnly: false,
    previousPlan: null,
    approvedPlan: null,
    stopAfterPlan: false,
    env: {},
    hostEnv: {},
    evidence: null,
    signal: new AbortController().signal,
    observer: {
      phase: () => undefined,
      agentEvent: () => undefined,
      output: () => undefined,
      notice: (message) => void told.notices.push(message),
      flagged: (worker, reason) => void told.flags.push([worker, reason]),
    },
    budget: { beforeCall: () => undefined, remainingMs: () => 60_000 },
  };
  return { value, told };
}

/** What the coordinator's own run found: verified (with git's diffstat and its check) unless `change` says otherwise. */
function own(change: Partial<AttemptResult> = {}): AttemptResult {
  const check = { command: 'sh test.sh', exitCode: 0, timedOut: false, outputTail: 'ok\n', durationMs: 80 };
  return {
    ...emptyResult(),
    outcome: 'verified',
    commit: TIP,
    diffStat: ' a.txt | 1 +\n b.txt | 1 +\n 2 files changed, 2 insertions(+)\n',
    check,
    checks: [check],
    ...change,
  };
}

describe("the coordinator's check of a worker's claim", () => {
  it("a claim the check upholds keeps its plan and verdict, and carries the check's own evidence", async () => {
    const { value, told } = input();
    const result = await confirmClaim(async () => own(), value, claimedVerified(TIP, 'sh test.sh'), 'w-1');
    expect(result.outcome).toBe('verified');
    expect(result.diffStat).toMatch(/2 files changed/);
    expect(result.check?.outputTail).toBe('ok\n');
    expect(result.verdict?.pass).toBe(true);
    expect(result.plan).toBe('Change the value.');
    expect(told.flags).toEqual([]);
    expect(told.notices.at(-1)).toBe(`coordinator check of ${TIP.slice(0, 12)} passed`);
  });

  it('a failing check turns the claim into a failed check, without the verdict, and flags the worker', async () => {
    const { value, told } = input();
    const failed = own({
      outcome: 'check-failed',
      reason: 'check `sh test.sh` exited 1',
      evidence: 'the check failed here',
      check: { command: 'sh test.sh', exitCode: 1, timedOut: false, outputTail: 'no\n', durationMs: 80 },
    });
    const result = await confirmClaim(async () => failed, value, claimedVerified(TIP, 'sh test.sh'), 'w-1');
    expect(result).toMatchObject({
      outcome: 'check-failed',
      reason: 'worker claimed verified; coordinator check failed: check `sh test.sh` exited 1',
      evidence: 'the check failed here',
      verdict: null,
    });
    expect(result.check?.exitCode).toBe(1);
    expect(told.flags).toEqual([['w-1', result.reason]]);
  });

  it('a guard the coordinator runs refusing the commit keeps the outcome guard-failed', async () => {
    const { value } = input();
    const refused = own({ outcome: 'guard-failed', reason: 'guard: a secret', guard: ['guard: a secret'] });
    const result = await confirmClaim(async () => refused, value, claimedVerified(TIP, 'sh test.sh'), 'w-1');
    expect(result.outcome).toBe('guard-failed');
    expect(result.guard).toEqual(['guard: a secret']);
  });

  it('a claim naming another commit than the one fetched fails, even when the fetched one passes', async () => {
    const { value, told } = input();
    const result = await confirmClaim(async () => own(), value, claimedVerified('c'.repeat(40), 'sh test.sh'), 'w-1');
    expect(result.outcome).toBe('check-failed');
    expect(result.commit).toBe(TIP);
    expect(result.reason).toBe(
      `worker claimed verified; it named commit ${'c'.repeat(12)}, and the branch the coordinator fetched is at ${TIP.slice(0, 12)}`,
    );
    expect(told.flags).toHaveLength(1);
  });
});
