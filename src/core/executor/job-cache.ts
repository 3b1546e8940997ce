/**
 * A worker's cache repository made ready for one job: the job's base commit and the task's branch fetched
 * from the remote (one repository for every job, never a clone per task), and the task's worktree where
 * the job says the attempt starts.
 *
 * Invariant: the attempt starts from the job's commits, never from what an earlier job left in the cache —
 * a worktree whose head is not the job's branch commit is removed, and the local branch set to it (or
 * deleted, when the task has none, so the pipeline makes it on base as it would locally).
 */
import type { AttemptJob } from '../../ports/attempt-queue.js';
import type { GitPort, RemoteAuth } from '../../ports/git.js';
import type { Workspace } from '../../ports/workspace.js';
import { baseRef } from './remote-branches.js';
import { raced } from './git-races.js';

export interface JobCacheDeps {
  git: GitPort;
  workspace: Workspace;
  auth?: RemoteAuth;
}

/** One job at a time prepares a given cache: the fetch and the worktree moves of two jobs never interleave. */
const preparing = new Map<string, Promise<unknown>>();

export function prepareCache(job: AttemptJob, worktree: string, deps: JobCacheDeps): Promise<void> {
  const root = deps.git.root;
  const run = (preparing.get(root) ?? Promise.resolve()).then(() => prepare(job, worktree, deps));
  const settled = run.catch(() => undefined);
  preparing.set(root, settled);
  void settled.then(() => {
    if (preparing.get(root) === settled) preparing.delete(root);
  });
  return run;
}

async function prepare(job: AttemptJob, worktree: string, deps: JobCacheDeps): Promise<void> {
  const { workspace, auth } = deps;
  const git = deps.git;
  const start = `refs/loopfleet/start/${job.branch}`;
  const specs = [
    `+${baseRef(job.baseCommit)}:${baseRef(job.baseCommit)}`,
    ...(job.branchCommit === null ? [] : [`+refs/heads/${job.branch}:${start}`]),
  ];
  await raced(() => git.fetch(job.remoteUrl, specs, auth));
  const base = await git.revParse(baseRef(job.baseCommit));
  if (base !== job.baseCommit)
    throw new Error(`the remote's ${baseRef(job.baseCommit)} is at ${base ?? 'nothing'}, not the job's base commit`);
  if (job.branchCommit !== null) {
    const fetched = await git.revParse(start);
    if (fetched !== job.branchCommit)
      throw new Error(
        `the remote's ${job.branch} is at ${fetched ?? 'nothing'}, not at ${job.branchCommit} as the job says`,
      );
  }

  const head = (await raced(() => git.listWorktrees())).find((w) => w.path === worktree)?.head ?? null;
  if (await workspace.exists(worktree)) {
    if (job.branchCommit !== null && head === job.branchCommit) {
      // What an earlier attempt here left uncommitted is not part of the branch the job names.
      await raced(() => git.resetHard(worktree, job.branchCommit!));
      return;
    }
    await raced(() => git.removeWorktree(worktree, true));
  }
  if (job.branchCommit !== null) await raced(() => git.updateRef(`refs/heads/${job.branch}`, job.branchCommit!));
  else if (await raced(() => git.branchExists(job.branch))) await raced(() => git.deleteBranch(job.branch, true));
}
