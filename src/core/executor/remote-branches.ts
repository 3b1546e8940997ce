/**
 * The coordinator's side of the data plane: what a worker needs is on the remote before its job is queued,
 * and what a worker pushed is brought back into the coordinator's repository, where review diffs, the
 * forecast, the merge queue and the report find it as if the attempt had run here.
 *
 * Refs on the remote: `refs/loopfleet/base/<commit>` (the commit an attempt starts from, named by itself so
 * it never moves) and `refs/heads/loop/<id>` (the task's branch, pushed with a lease). A worker's push is
 * fetched into `refs/loopfleet/fetched/loop/<id>` first, never straight into a branch a worktree has out.
 */
import type { GitPort, RemoteAuth } from '../../ports/git.js';
import type { Workspace } from '../../ports/workspace.js';
import { raced } from './git-races.js';

export interface RemoteBranchDeps {
  /** the coordinator's repository */
  git: GitPort;
  workspace: Workspace;
  /** the remote's name (or URL) as the coordinator's repository reaches it */
  remote: string;
  auth?: RemoteAuth;
}

export interface Published {
  baseCommit: string;
  /** the branch's commit on the remote now, the worker's lease; null when the remote has no such branch */
  branchCommit: string | null;
}

/** A worktree of the task made on the coordinator by {@link RemoteBranches.fetchBack}: `setup:` never ran in it. */
export interface MadeWorktree {
  depsCloned: boolean;
}

export function baseRef(commit: string): string {
  return `refs/loopfleet/base/${commit}`;
}

export class RemoteBranches {
  readonly #d: RemoteBranchDeps;
  /** base commits on the remote, or being pushed there: attempts that start together push their base once */
  readonly #bases = new Map<string, Promise<void>>();

  constructor(deps: RemoteBranchDeps) {
    this.#d = deps;
  }

  /**
   * Pushes the base commit and the task's branch (when the coordinator has one with commits of its own) so
   * that the remote holds exactly where the attempt starts. A task with no branch here but one on the remote
   * (left by an attempt since discarded) has it set to base, so no worker builds on what was thrown away.
   */
  async publish(base: string, branch: string): Promise<Published> {
    const { git, remote, auth } = this.#d;
    const baseCommit = await git.revParse(base);
    if (baseCommit === null) throw new Error(`base branch ${base} does not resolve to a commit`);
    const head = `refs/heads/${branch}`;
    await this.#publishBase(baseCommit);
    const there = await git.lsRemote(remote, [head], auth);
    const local = await git.revParse(head);
    const remoteTip = there.get(head) ?? null;
    const start = local !== null && local !== baseCommit ? local : remoteTip === null ? null : baseCommit;
    if (start !== null && start !== remoteTip) await this.#push(start, head, remoteTip);
    return { baseCommit, branchCommit: start };
  }

  /**
   * The worker pushed `commit` to the task's branch: fetch it, check the remote has that commit, and bring
   * the coordinator's branch and its worktree (made here when there is none) to it. Returns the worktree
   * made here (whether the person's dependencies were cloned into it), null when it was there already.
   */
  async fetchBack(
    branch: string,
    commit: string,
    place: { repoRoot: string; worktree: string; base: string },
  ): Promise<MadeWorktree | null> {
    const { git, workspace, remote, auth } = this.#d;
    const fetched = `refs/loopfleet/fetched/${branch}`;
    await raced(() => git.fetch(remote, [`+refs/heads/${branch}:${fetched}`], auth));
    const got = await git.revParse(fetched);
    if (got !== commit)
      throw new Error(
        `the remote's ${branch} is at ${got ?? 'nothing'}, not at ${commit}, the commit the worker said it pushed`,
      );
    if (await workspace.exists(place.worktree)) {
      await git.resetHard(place.worktree, commit);
      return null;
    }
    await git.updateRef(`refs/heads/${branch}`, commit);
    await git.addWorktree(place.worktree, branch, place.base);
    const prepared = await workspace.prepare(place.repoRoot, place.worktree);
    return { depsCloned: prepared.deps.method !== 'none' };
  }

  #publishBase(commit: string): Promise<void> {
    let published = this.#bases.get(commit);
    if (published === undefined) {
      published = (async () => {
        const ref = baseRef(commit);
        const there = (await this.#d.git.lsRemote(this.#d.remote, [ref], this.#d.auth)).get(ref) ?? null;
        if (there !== commit) await this.#push(commit, ref, there);
      })();
      // A push that failed is tried again by the next attempt.
      published.catch(() => this.#bases.delete(commit));
      this.#bases.set(commit, published);
    }
    return published;
  }

  async #push(commit: string, ref: string, expect: string | null): Promise<void> {
    const pushed = await this.#d.git.push(this.#d.remote, commit, ref, expect, this.#d.auth);
    if (pushed.kind === 'rejected') throw new Error(`push of ${ref} to the remote refused: ${pushed.reason}`);
  }
}
