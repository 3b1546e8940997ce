/**
 * A worker's `verified` is a claim, not evidence. Before the task runner settles it, the coordinator checks
 * the commit it fetched from the remote — the guard and the task's checks, in its own sandbox — and that run
 * is what the attempt records, the report prints and a pull request's body shows.
 *
 * Invariants: a result that leaves here with outcome `verified` passed the coordinator's own check on the
 * tip of the task's branch in the coordinator's repository; its commit, diffstat, guard reasons, checks,
 * counts, baseline and proof are that run's, whatever the worker sent. A claim the check contradicts fails
 * the attempt as a failed check would, carries no reviewer's verdict, and flags the worker that made it.
 */
import type { AttemptInput, AttemptResult } from '../attempt/attempt-io.js';
import { failureEvidence } from '../roles/prompts.js';
import type { MadeWorktree } from './remote-branches.js';

/**
 * The coordinator's check of the task's branch as fetched ({@link Pipeline.checkCommit}); `made`: the
 * worktree was made here for this fetch, and `setup:` runs in it first.
 */
export type CommitChecker = (input: AttemptInput, made: MadeWorktree | null) => Promise<AttemptResult>;

function short(commit: string | null): string {
  return commit === null ? 'nothing' : commit.slice(0, 12);
}

/** How the claim and the coordinator's run disagree; null when they do not. */
function disagreement(claimed: AttemptResult, own: AttemptResult): string | null {
  if (own.outcome !== 'verified') return `coordinator check failed: ${own.reason ?? own.outcome}`;
  if (claimed.commit !== null && claimed.commit !== own.commit)
    return `it named commit ${short(claimed.commit)}, and the branch the coordinator fetched is at ${short(own.commit)}`;
  return null;
}

/**
 * `claimed` (a worker's result with outcome `verified`) as the coordinator's own check of the fetched branch
 * finds it. `worker`: the worker that ran the attempt, flagged when its claim does not hold.
 */
export async function confirmClaim(
  check: CommitChecker,
  input: AttemptInput,
  claimed: AttemptResult,
  worker: string | null,
  made: MadeWorktree | null = null,
): Promise<AttemptResult> {
  const who = worker === null ? 'the worker' : `worker ${worker}`;
  input.observer.notice(`${who} says verified: checking ${input.branch} again in the coordinator's sandbox`, 'info');
  const own = await check(input, made);
  const evidence = {
    commit: own.commit,
    diffStat: own.diffStat,
    guard: own.guard,
    check: own.check,
    checks: own.checks,
    baseline: own.baseline,
    proof: own.proof,
  };
  const differs = disagreement(claimed, own);
  if (differs === null) {
    input.observer.notice(`coordinator check of ${short(own.commit)} passed`, 'info');
    return { ...claimed, ...evidence };
  }
  const reason = `worker claimed verified; ${differs}`;
  if (worker !== null) input.observer.flagged?.(worker, reason);
  input.observer.notice(`${who} flagged: ${reason}`, 'warn');
  return {
    ...claimed,
    ...evidence,
    outcome: own.outcome === 'verified' ? 'check-failed' : own.outcome,
    reason,
    evidence:
      own.outcome === 'verified'
        ? failureEvidence(reason, 'The commit the worker reported is not the one the coordinator fetched and checked.')
        : own.evidence,
    // A reviewer can never pass what the coordinator's check failed: the worker's verdict is not evidence.
    verdict: null,
  };
}
