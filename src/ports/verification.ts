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
  /**
   * writes each file (relative path → content) into the scratch worktree `dir`, replacing whatever is at
   * the path or in the way of it (a link, a file where a folder must be); never writes outside `dir`
   */
  overlay(dir: string, files: Readonly<Record<string, string>>): Promise<void>;
  /** removes a scratch worktree made by `create` */
  remove(dir: string): Promise<void>;
}

/** A tracked file as the index held it before a check, and what identified it on disk then. */
export interface TrackedFile {
  path: string;
  mode: string;
  sha: string;
  /** device, inode, change time, size and mode of the file on disk; null when it was missing */
  identity: string | null;
}

export interface TrackedRecord {
  files: TrackedFile[];
  /**
   * Absolute folders holding tracked files (the top one apart), shallowest first, up to a bound the adapter
   * sets: a check gets each as a mount point of its own, so that it can neither rename nor remove one
   * (swapping a folder of code for another and back leaves every file's own identity as it was).
   */
  folders: string[];
}

export interface TrackedChange {
  path: string;
  /** `restored`: the same content and mode, yet the file was written, replaced or moved and put back */
  kind: 'changed' | 'deleted' | 'restored';
}

/** What a check does to the tracked files of the tree it runs in. */
export interface TrackedFiles {
  /** the tracked files of `dir` as its index holds them now, and their identity on disk */
  record(dir: string): Promise<TrackedRecord>;
  /** the recorded files whose content, mode, presence or identity on disk differ now */
  changes(dir: string, record: TrackedRecord): Promise<TrackedChange[]>;
}
