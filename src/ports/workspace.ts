/** Filesystem work around worktrees that is not git: copying ignored files, dependencies, transcripts, reports. */

export interface DependencyClone {
  method: 'reflink' | 'hardlink' | 'copy' | 'none';
  reason: string | null;
  ms: number;
}

export interface PreparedWorktree {
  /** relative paths copied through .worktreeinclude; never committed */
  copied: string[];
  deps: DependencyClone;
}

export interface Workspace {
  /** copy .worktreeinclude files and clone dependency folders into a new worktree */
  prepare(repoRoot: string, worktree: string): Promise<PreparedWorktree>;
  /** the relative paths .worktreeinclude names in the checkout (what `prepare` copies), without copying */
  included(repoRoot: string): Promise<string[]>;
  /** append one JSON line to `.loop-worktrees/logs/<task>/<attempt>.jsonl` */
  transcript(taskId: string, attempt: number, record: Record<string, unknown>): void;
  /** wait for pending transcript writes */
  flush(): Promise<void>;
  /** remove a folder under .loop-worktrees that git no longer knows (a crash left it); refuses anything else */
  removeOrphan(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  /** names of the entries of `.loop-worktrees/` (none when it does not exist yet) */
  entries(): Promise<string[]>;
}
