/**
 * A worker's push of the task's branch after an attempt: with the lease the job names, never forced.
 *
 * Invariant: a refused lease fails the attempt unless the remote's branch is this same attempt's work pushed
 * by an earlier run of the job that died before it said so — it starts where the job starts and records the
 * same tree as `head` — which is adopted instead; anything else another worker pushed is never overwritten.
 */
import type { AttemptJob } from '../../ports/attempt-queue.js';
import type { GitPort, RemoteAuth } from '../../ports/git.js';
import { redactUrls } from './job-policy.js';

export type BranchPush = { kind: 'pushed'; commit: string; adopted: boolean } | { kind: 'refused'; message: string };

export async function pushBranch(job: AttemptJob, head: string, git: GitPort, auth?: RemoteAuth): Promise<BranchPush> {
  const pushed = await git.push(job.remoteUrl, head, `refs/heads/${job.branch}`, job.branchCommit, auth);
  if (pushed.kind === 'pushed') return { kind: 'pushed', commit: pushed.commit, adopted: false };
  const there = await adoptable(job, head, git, auth);
  if (there !== null) return { kind: 'pushed', commit: there, adopted: true };
  return {
    kind: 'refused',
    message: `${job.branch} was not pushed: the remote refused the lease (${redactUrls(pushed.reason)}); another worker pushed it since the job was made`,
  };
}

/** The remote's branch when it is this attempt's work (see the invariant), else null. */
async function adoptable(job: AttemptJob, head: string, git: GitPort, auth?: RemoteAuth): Promise<string | null> {
  const seen = `refs/loopfleet/seen/${job.branch}`;
  await git.fetch(job.remoteUrl, [`+refs/heads/${job.branch}:${seen}`], auth).catch(() => undefined);
  const there = await git.revParse(seen);
  if (there === null || there === head) return there;
  if (!(await git.isMerged(job.branchCommit ?? job.baseCommit, there))) return null;
  const [mine, theirs] = await Promise.all([git.treeOf(head), git.treeOf(there)]);
  return mine !== null && mine === theirs ? there : null;
}
