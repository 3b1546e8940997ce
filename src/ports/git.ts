/** Everything the engine asks of git. One instance is bound to one repository (its top-level folder). */

export interface WorktreeInfo {
  path: string;
  /** short branch name, null when detached */
  branch: string | null;
  head: string | null;
  prunable: boolean;
}

export type MergeResult =
  | { kind: 'merged'; commit: string }
  | { kind: 'conflict'; files: string[] }
  | { kind: 'refused'; reason: string };

/**
 * loopfleet's own edit of one tracked file, made in the merge commit: `edit` gets the file as the merge
 * result has it and the main checkout's working copy (null when not checked out there or missing), and
 * returns the content to commit, or null to leave the file as merged.
 */
export interface MergeFileEdit {
  path: string;
  edit: (committed: string, working: string | null) => string | null;
}

/** What merging one commit into another would conflict on; nothing is written but unreachable objects. */
/** What {@link GitPort.changesSinceFork} finds. */
export interface ForkChanges {
  fork: string;
  paths: string[];
}

export interface ConflictForecast {
  files: string[];
  /** conflict-marker regions per file, bounded; files in conflict for other reasons (modify/delete) have none */
  hunks: Record<string, string[]>;
}

export interface DiffSummary {
  numstat: Array<{ path: string; added: number; deleted: number }>;
  stat: string;
  patch: string;
  /** the same diff file by file ({@link GitPort.diffEntries}), for the guard */
  entries: DiffEntry[];
}

export interface GitPort {
  readonly root: string;
  /** short name of the branch checked out in the main worktree; null when HEAD is detached */
  currentBranch(): Promise<string | null>;
  branchExists(branch: string): Promise<boolean>;
  /** commit id a ref points to, or null when it does not resolve */
  revParse(ref: string): Promise<string | null>;
  /**
   * The commit ids of several refs at once (one look-up, not one per ref), in their order; null where one
   * does not resolve to a commit. Each answer is what {@link revParse} would give for a full ref name.
   */
  resolveCommits(refs: readonly string[]): Promise<Array<string | null>>;
  /** the tree a commit records, or null when `commit` does not resolve */
  treeOf(commit: string): Promise<string | null>;
  /** true when the repository has at least one commit */
  hasCommits(): Promise<boolean>;
  /** append `pattern` to .git/info/exclude once; returns the path of that file */
  ensureExcluded(pattern: string): Promise<string>;

  /** `git worktree add <path> -b <branch> <base>`; when the branch exists already it is checked out as is */
  addWorktree(path: string, branch: string, base: string): Promise<void>;
  /** removes the worktree folder and its registration; `force` discards its uncommitted changes */
  removeWorktree(path: string, force: boolean): Promise<void>;
  listWorktrees(): Promise<WorktreeInfo[]>;
  /** `git worktree prune` */
  pruneWorktrees(): Promise<void>;

  /** unified diff of `base...HEAD` in the worktree */
  diff(worktree: string, base: string): Promise<string>;
  /**
   * numstat, diffstat, patch and entries of `base...HEAD` at once: one git process for the numbers and the
   * entries, one for the patch, one for the entries' blob sizes.
   */
  diffSummary(worktree: string, base: string): Promise<DiffSummary>;

  /**
   * Merge `branch` into `base` with a merge commit. Never touches uncommitted work: refused when the main
   * checkout is on `base` and dirty. A conflict leaves `base` and the working tree exactly as before.
   * `ignoreDirty` names files (relative to the root) whose uncommitted changes do not refuse the merge as
   * long as the merge does not change them; their working copy is kept as it is.
   * `fileEdit` puts loopfleet's own edit of a file into the merge commit; an uncommitted working copy of
   * that file is kept as it was (the caller then makes the same edit there), so the checkout stays clean.
   */
  merge(
    branch: string,
    base: string,
    message: string,
    options?: { ignoreDirty?: readonly string[]; fileEdit?: MergeFileEdit },
  ): Promise<MergeResult>;
  /**
   * rebase `branch` (checked out in `worktree`) onto `base`; on conflict aborts and returns false. Refused
   * (RefusedError), nothing moved, when the worktree has uncommitted changes to tracked files or git will
   * not start (an untracked file in the way).
   */
  rebase(worktree: string, base: string): Promise<boolean>;
  /**
   * Replays the branch checked out in `worktree` onto `onto` as uncommitted work, for an implementer to
   * finish: the old tip is kept under the ref `keep`, the branch moves to `onto`, and the working tree holds
   * the three-way merge of the branch's own change with conflict markers where it conflicts (the index is
   * `onto`). Returns what conflicts. A replay that cannot be checked out (an untracked file in the way)
   * is refused (RefusedError) and changes nothing.
   */
  replayOnto(worktree: string, onto: string, keep: string): Promise<ConflictForecast>;
  /** `git reset --hard <commit>` in a task worktree (never in the user's checkout) */
  resetHard(worktree: string, commit: string): Promise<void>;
  /** `git update-ref ref commit` */
  updateRef(ref: string, commit: string): Promise<void>;
  /** `git update-ref -d ref`: only for a ref loopfleet keeps (a candidate's), on an explicit discard */
  deleteRef(ref: string): Promise<void>;
  /** delete a branch; `force` only on an explicit discard or after a verified merge */
  deleteBranch(branch: string, force: boolean): Promise<void>;
  /** true when every commit of `branch` is reachable from `base` */
  isMerged(branch: string, base: string): Promise<boolean>;

  /** conflicts of merging `right` into `left` (refs or commits), computed in the object store only */
  forecastConflicts(left: string, right: string): Promise<ConflictForecast>;
  /**
   * Where `commit` forked from `base` (their merge base) and every path it changed since, a rename as a
   * delete and an add. Two commits that forked at the same commit and changed no common path (nor a file
   * and a folder above it) cannot conflict textually: {@link forecastFleet} asks no merge-tree for them.
   */
  changesSinceFork(base: string, commit: string): Promise<ForkChanges>;

  /**
   * The worktree's snapshot as a one-parent commit: the index is rebuilt from HEAD (no assume-unchanged or
   * skip-worktree bit survives), everything but `excludePaths` and nested repositories is staged and
   * committed; `differs` lists what in the working tree still differs from the commit (ignored files and
   * `excludePaths` apart). `commit` is null when nothing changed. With `limits`, sizes are measured on disk
   * before anything is staged (so before any blob is written into `.git`): over a limit, nothing is staged
   * or committed and `refused` holds the guard's reasons.
   */
  commitSnapshot(
    worktree: string,
    message: string,
    excludePaths: string[],
    limits?: SnapshotSizeLimits,
  ): Promise<SnapshotCommit>;
  /** file by file, what `base...HEAD` changes in the worktree: modes, blob ids and sizes, binary or not */
  diffEntries(worktree: string, base: string): Promise<DiffEntry[]>;
  /**
   * A file as git holds it — `object` is `<rev>:<path>` (`git show <rev>:<path>`) or a blob id: its size,
   * and its text when at most `maxBytes`; null when there is no such blob.
   */
  readBlob(object: string, maxBytes: number): Promise<BlobText | null>;
  /** where the person's git configuration reaches into the repository (see ConfigReach) */
  configReach(): Promise<ConfigReach>;

  // The remote (pull requests, workers): the only commands that use a transport (see `transportConfig`).
  /** the URL of the remote named `name`; null when there is no such remote */
  remoteUrl(name: string): Promise<string | null>;
  /**
   * Pushes `source` (a commit or local ref) to `target` (a full ref, `refs/heads/loop/T-1`) on `remote` (a
   * remote's name or a URL), with a lease: `expect` is the commit the remote's ref must have now, null when
   * it must not exist. A stale lease or a refusal by the remote is a result, not an error.
   */
  push(remote: string, source: string, target: string, expect: string | null, auth?: RemoteAuth): Promise<PushResult>;
  /** fetches `refspecs` (`+refs/heads/x:refs/remotes/origin/x`) from `remote` (a name or a URL) */
  fetch(remote: string, refspecs: readonly string[], auth?: RemoteAuth): Promise<void>;
  /** the remote's refs among `refs` (full names) and their commits; a ref the remote lacks is absent */
  lsRemote(remote: string, refs: readonly string[], auth?: RemoteAuth): Promise<Map<string, string>>;
}

/** A token loopfleet's own git gives the remote over https, as a header (never an argument or a file). */
export interface RemoteAuth {
  /** the URL prefix it applies to, e.g. `https://github.com/` */
  urlPrefix: string;
  /** the header line, e.g. `Authorization: Basic …` */
  header: string;
}

export type PushResult = { kind: 'pushed'; commit: string } | { kind: 'rejected'; reason: string };

/** Repository-relative paths the person's git configuration names; paths outside the repository are left out. */
export interface ConfigReach {
  /** files that `include.path` / `includeIf.*.path` include */
  includes: string[];
  /** the folder `core.hooksPath` names, when it is inside the repository */
  hooksPath: string | null;
}

export interface SnapshotSizeLimits {
  maxFileBytes: number;
  maxBytes: number;
  /** paths exempt from the size rules (the task's `files:`) */
  exempt(path: string): boolean;
}

export interface SnapshotCommit {
  commit: string | null;
  /** the size rules' reasons when the snapshot was refused before staging (see `limits`) */
  refused?: string[];
  /** paths (a note in parentheses for a nested repository) where the working tree differs from the commit */
  differs: string[];
  /** untracked files the ignore rules leave out of the commit (a folder as `dir/`): the check still sees them */
  ignored: string[];
}

export interface DiffEntry {
  path: string;
  /** A added, M modified, D deleted, T type changed */
  status: string;
  /** octal modes as git prints them: 100644, 100755, 120000 (symlink), 160000 (gitlink), 000000 (none) */
  oldMode: string;
  newMode: string;
  oldSha: string;
  newSha: string;
  /** bytes of the new blob (the old one for a deletion); null for a gitlink */
  size: number | null;
  binary: boolean;
  added: number;
  deleted: number;
}

export interface BlobText {
  size: number;
  /** null when the file is larger than asked for */
  text: string | null;
}
