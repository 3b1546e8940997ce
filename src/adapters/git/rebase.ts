/**
 * `git rebase` of a task's worktree onto base, as the adapter's rebase(): only a rebase started here is
 * ever aborted here, and uncommitted work is refused, never stashed or carried.
 */
import path from 'node:path';
import { DirtyWorktreeError, RefusedError } from '../../domain/errors.js';
import { COMMIT_CONFIG, GitCommandError, type GitExec } from './exec.js';
import { discoverGitLayout } from './layout.js';
import { exists } from '../fs/paths.js';

/** Rebase the worktree at `target` onto `base` (a checked ref name): true when it did, false when it conflicted and was aborted. */
export async function rebaseOnto(git: GitExec, target: string, base: string): Promise<boolean> {
  const layout = await discoverGitLayout(target);
  const rebaseState = async (): Promise<boolean> =>
    layout !== null &&
    ((await exists(path.join(layout.adminDir, 'rebase-merge'))) ||
      (await exists(path.join(layout.adminDir, 'rebase-apply'))));
  // `rebase --abort` moves the branch named in that state back to the commit named there: only a rebase
  // started here may be aborted here.
  if (await rebaseState()) {
    throw new RefusedError(
      `a rebase is already in progress in ${target}; discard the task (loopfleet discard) rather than running git in its worktree`,
    );
  }
  // Uncommitted work (a replayed conflict being resolved) is never stashed or carried: refused, untouched.
  // --ignore-submodules=dirty: a gitlink staged in the index shows, but git never enters the repository
  // it names (whose fsmonitor and hooks are the agent's).
  const dirty = (
    await git.run(['status', '--porcelain', '-z', '--no-renames', '--untracked-files=no', '--ignore-submodules=dirty'])
  ).stdout;
  if (dirty !== '') throw new DirtyWorktreeError(target, porcelainNames(dirty), `not rebased onto ${base}`);
  try {
    await git.run([...COMMIT_CONFIG, 'rebase', '--no-autosquash', '--no-update-refs', base]);
    return true;
  } catch (error) {
    if (await rebaseState()) {
      await git.run(['rebase', '--abort']);
      return false;
    }
    // Refused before it started (an untracked file in the way): nothing moved.
    const said = error instanceof GitCommandError ? /error: (.*)/.exec(error.stderr)?.[1] : undefined;
    if (said !== undefined) throw new RefusedError(`cannot rebase onto ${base}: ${said.trim()}`, { cause: error });
    throw error;
  }
}

/** The paths of `git status --porcelain -z --no-renames`: one `XY path` entry per NUL. */
function porcelainNames(out: string): string[] {
  return out
    .split('\0')
    .filter((entry) => entry !== '')
    .map((entry) => entry.slice(3));
}
