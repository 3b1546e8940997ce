import type { BaselineResult } from '../domain/types.js';

/** Baselines: each check's result on a commit, cached in `.loop-worktrees/baselines.json`. */
export interface BaselineStore {
  /** the cached result of `command` on `commit`, or null */
  get(commit: string, command: string): Promise<BaselineResult | null>;
  /** records a result; a later put for the same commit and command replaces it */
  put(result: BaselineResult): Promise<void>;
  /** every cached result, oldest first */
  all(): Promise<BaselineResult[]>;
}

/**
 * Throw-away checkouts for verification, never a task's own worktree: detached worktrees in
 * `.loop-worktrees/.<name>` that loopfleet creates and removes.
 */
export interface ScratchTrees {
  /** the commit `git merge-base HEAD <ref>` names in `worktree` */
  mergeBase(worktree: string, ref: string): Promise<string>;
  /** the paths that differ between two commits (both sides of a rename) */
  changedFiles(from: string, to: string): Promise<string[]>;
  /** a detached worktree at `commit` under the given name (letters, digits, `-`); replaces a leftover one */
  create(name: string, commit: string): Promise<string>;
  /** sets each path in `dir` to its content at `commit`, deleting the paths `commit` does not have */
  restore(dir: string, commit: string, paths: readonly string[]): Promise<void>;
  /** removes a scratch worktree made by `create` */
  remove(dir: string): Promise<void>;
}
