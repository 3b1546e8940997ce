/**
 * A task branch that no longer rebases cleanly, replayed onto base as work for its implementer.
 *
 * Invariants:
 * - nothing is lost: the branch's old tip is kept under the caller's ref before the branch moves, and a
 *   replay that cannot check its result out (an untracked file in the way) changes nothing;
 * - nothing is committed: the conflict markers live only in the working tree (the index is the new base),
 *   so the next snapshot commit is the only one, and the guard refuses it while a marker line is left;
 * - no sequencer state (rebase, merge, cherry-pick) is left behind, and no hook runs: the merge is computed
 *   in the object store (`merge-tree`) and only its result tree is checked out (`read-tree`).
 */
import type { ConflictForecast } from '../../ports/git.js';
import { RefusedError } from '../../domain/errors.js';
import { COMMIT_CONFIG, GitCommandError, type GitExec } from './exec.js';
import { mergeTree } from './forecast.js';

/** `-c core.hooksPath=/dev/null` and the committer, for every command that moves the worktree's HEAD */
const NO_HOOKS = COMMIT_CONFIG;

export async function replayOnto(git: GitExec, onto: string, keep: string): Promise<ConflictForecast> {
  const branch = (await git.run(['symbolic-ref', '--short', 'HEAD'])).stdout.trim();
  const tip = (await git.run(['rev-parse', '--verify', 'HEAD^{commit}'])).stdout.trim();
  const base = (await git.run(['rev-parse', '--verify', `${onto}^{commit}`])).stdout.trim();
  // Labelled with the names a person reads in the markers: `<<<<<<< main` … `>>>>>>> loop/T-1`.
  const merged = await mergeTree(git, onto, branch);
  await git.run(['update-ref', keep, tip]);
  // Two-tree read-tree: the working tree goes from the tip to the merged tree, deletions included. It
  // refuses, changing nothing, when an untracked file is in the way (`reset --hard` would overwrite it).
  try {
    await git.run([...NO_HOOKS, 'read-tree', '-u', '-m', tip, merged.tree]);
  } catch (error) {
    const said = error instanceof GitCommandError ? error.stderr.trim().split('\n')[0] : '';
    throw new RefusedError(`cannot replay ${branch} onto ${onto}: ${said || 'git read-tree failed'}`, { cause: error });
  }
  // Only then the branch moves to base, and the index with it: the working tree keeps the merged files.
  await git.run([...NO_HOOKS, 'reset', '--soft', '-q', base]);
  await git.run([...NO_HOOKS, 'reset', '-q']);
  return { files: merged.files, hunks: merged.hunks };
}
