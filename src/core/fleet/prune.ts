import { join, resolve } from 'node:path';
import type { GitPort } from '../../ports/git.js';
import type { Workspace } from '../../ports/workspace.js';
import type { FleetState } from '../task/state.js';
import { OWN_ENTRIES } from '../../domain/layout.js';

/** Entries of `.loop-worktrees/` that belong to loopfleet itself, not to a task. */
const OWN_FILES = new Set(OWN_ENTRIES);

export interface PruneResult {
  removed: string[];
  kept: string[];
}

/**
 * Remove what a crash or a manual deletion left behind: registrations of worktrees whose folder is gone,
 * folders that are not registered worktrees, and worktrees of tasks already merged or discarded.
 *
 * Invariant: never removes a branch that is not merged into base, and never removes the worktree of a task
 * that may still be merged, retried or inspected (queued, running, verified, failed, conflict).
 */
export async function pruneWorktrees(
  git: GitPort,
  workspace: Workspace,
  state: FleetState,
  workDir: string,
  base: string,
): Promise<PruneResult> {
  const result: PruneResult = { removed: [], kept: [] };
  await git.pruneWorktrees();
  const registered = new Map((await git.listWorktrees()).map((w) => [resolve(w.path), w]));
  for (const name of await workspace.entries()) {
    if (OWN_FILES.has(name) || name.startsWith('.') || name.endsWith('.tmp')) continue;
    const path = join(workDir, name);
    const worktree = registered.get(resolve(path));
    const task = state.get(name);
    if (worktree === undefined) {
      // Not a worktree (an interrupted `worktree add`, or its .git file was deleted): nothing in it is on a branch.
      await workspace.removeOrphan(path);
      result.removed.push(`${name} (not a registered worktree)`);
      continue;
    }
    if (task !== undefined && (task.status === 'merged' || task.status === 'discarded')) {
      const branch = worktree.branch;
      if (branch !== null && !(await git.isMerged(branch, base)) && task.status === 'merged') {
        result.kept.push(`${name} (branch ${branch} is not merged into ${base})`);
        continue;
      }
      await git.removeWorktree(path, true);
      result.removed.push(`${name} (task ${task.status})`);
      continue;
    }
    result.kept.push(name);
  }
  return result;
}
