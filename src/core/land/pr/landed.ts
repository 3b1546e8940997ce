import type { PullRequest } from '../../../ports/forge.js';
import { discardedRef } from '../../../domain/layout.js';
import { mergedRef } from './forge-link.js';
import type { PrServices } from './publish.js';

/**
 * A pull request's end on the forge, brought home. Order matters for "never lose work": the branch's
 * commit is kept under a ref before the branch is deleted, unless base (as fetched) already holds it.
 */

/** ticks the task's item `[x]` in the person's BACKLOG.md working copy; false when the item is gone */
export type TickDone = (id: string) => Promise<boolean>;

async function removeWorktree(s: PrServices, id: string): Promise<void> {
  const path = s.paths.worktreeOf(id);
  const listed = await s.git.listWorktrees();
  if (listed.some((w) => w.path === path)) await s.git.removeWorktree(path, true);
}

/**
 * Merged on the forge: the worktree goes; the branch goes too, its commit kept under `refs/loopfleet/merged/<id>`
 * when the fetched base (`onto`; null when it could not be fetched) does not contain it — a squash or rebase
 * merge; the item is ticked in the working copy, never on a PR branch, so open PRs never conflict over BACKLOG.md.
 */
export async function mergedOnForge(
  s: PrServices,
  id: string,
  pull: PullRequest,
  onto: string | null,
  tickDone: TickDone,
): Promise<void> {
  const branch = s.paths.branchOf(id);
  const commit = await s.git.revParse(`refs/heads/${branch}`);
  await removeWorktree(s, id);
  let kept = false;
  if (commit !== null) {
    if (onto === null || !(await s.git.isMerged(branch, onto))) {
      await s.git.updateRef(mergedRef(id), commit);
      kept = true;
    }
    await s.git.deleteBranch(branch, true);
  }
  const ticked = await tickDone(id);
  const notes = [
    kept ? `its last commit is kept under ${mergedRef(id)}` : null,
    ticked ? null : 'its item was no longer in BACKLOG.md to tick',
  ].filter((n) => n !== null);
  // The tick may have reached the fleet's backlog view first (a watched BACKLOG.md): it is merged exactly once.
  if (s.lifecycle.get(id)?.status !== 'merged')
    s.lifecycle.prMerged(
      id,
      `PR #${pull.number} merged on the forge${notes.length === 0 ? '' : `; ${notes.join('; ')}`}`,
    );
  s.log(id, `PR #${pull.number} merged: ${pull.url}`);
}

/** Closed unmerged: discarded, the branch's commit kept under the discard ref (`loopfleet retry` runs it again). */
export async function closedOnForge(s: PrServices, id: string, pull: PullRequest): Promise<void> {
  const branch = s.paths.branchOf(id);
  const commit = await s.git.revParse(`refs/heads/${branch}`);
  if (commit !== null) await s.git.updateRef(discardedRef(id), commit);
  await removeWorktree(s, id);
  if (commit !== null) await s.git.deleteBranch(branch, true);
  const recover = commit === null ? '' : `; recover with: git branch ${branch} ${discardedRef(id)}`;
  s.lifecycle.prClosed(id, `PR #${pull.number} closed unmerged on the forge${recover}`);
  s.log(id, `PR #${pull.number} closed unmerged: ${pull.url}`, 'warn');
}
