/**
 * Where a task's checks run. For most tasks, the task's own worktree. For an eval task — one that carries
 * the human change's test files as {@link TaskSpec.hiddenTests} — a scratch checkout of the attempt's
 * commit with those files written over it: the agents never had them in their worktree, and whatever an
 * agent wrote at a hidden path is replaced, so the check runs the hidden version and the agent's copy
 * cannot weaken it.
 *
 * Invariant: the hidden files are only ever written into a scratch checkout that is removed when the
 * checks end, never into a worktree an agent works in.
 */
import type { TaskSpec } from '../../domain/types.js';
import type { ScratchTrees } from '../../ports/verification.js';

export interface CheckTreeDeps {
  scratch: ScratchTrees;
  /** dependencies and included files into a scratch checkout, as for a baseline */
  prepare: (dir: string) => Promise<void>;
  /** the commit the checks judge (the task branch's tip); null when the branch does not resolve */
  commit: () => Promise<string | null>;
}

/** The hidden test files of a task, or null when it has none. */
export function hiddenTestsOf(spec: TaskSpec): Readonly<Record<string, string>> | null {
  const hidden = spec.hiddenTests;
  return hidden === undefined || Object.keys(hidden).length === 0 ? null : hidden;
}

/**
 * Runs `run` in the tree the task's checks see: `worktree` itself, or for a task with hidden tests a
 * scratch checkout named `hidden-<id>` of the commit with the tests written over it, removed afterwards.
 */
export async function inCheckTree<T>(
  spec: TaskSpec,
  worktree: string,
  deps: CheckTreeDeps,
  run: (dir: string) => Promise<T>,
): Promise<T> {
  const hidden = hiddenTestsOf(spec);
  if (hidden === null) return run(worktree);
  const commit = await deps.commit();
  if (commit === null) throw new Error(`the branch of ${spec.id} does not resolve to a commit to check`);
  const dir = await deps.scratch.create(`hidden-${spec.id}`, commit);
  try {
    await deps.prepare(dir);
    await deps.scratch.overlay(dir, hidden);
    return await run(dir);
  } finally {
    await deps.scratch.remove(dir);
  }
}
