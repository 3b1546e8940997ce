/** Names of the files and folders loopfleet keeps in a user's repository. */

/** worktrees, state, transcripts, reports and the lock; ignored through .git/info/exclude */
export const WORK_DIR = '.loop-worktrees';

/** the backlog, at the repository's top level */
export const BACKLOG_NAME = 'BACKLOG.md';

/** inside WORK_DIR: the person's uncommitted BACKLOG.md, kept for the instant a merge fast-forwards the checkout */
export const MERGE_BACKUP_NAME = 'BACKLOG.md.before-merge';
