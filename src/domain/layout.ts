/** Names of the files and folders loopfleet keeps in a user's repository. */

/** worktrees, state, transcripts, reports and the lock; ignored through .git/info/exclude */
export const WORK_DIR = '.loop-worktrees';

/** the backlog, at the repository's top level */
export const BACKLOG_NAME = 'BACKLOG.md';
