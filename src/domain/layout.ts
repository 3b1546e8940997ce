/** Names of the files and folders loopfleet keeps in a user's repository. */

/** worktrees, state, transcripts, reports and the lock; ignored through .git/info/exclude */
export const WORK_DIR = '.loop-worktrees';

/** the backlog, at the repository's top level */
export const BACKLOG_NAME = 'BACKLOG.md';

/** inside WORK_DIR: the person's uncommitted BACKLOG.md, kept for the instant a merge fast-forwards the checkout */
export const MERGE_BACKUP_NAME = 'BACKLOG.md.before-merge';
/** Entries of WORK_DIR that are loopfleet's own; every other entry is a task's worktree, named by its id. */
export const STATE_FILE = 'state.json';
export const LOCK_FILE = 'fleet.lock';
/** the changes since state.json was last written whole, one JSON line each (see LowdbStateStore) */
export const STATE_JOURNAL_FILE = 'state.journal';
/** room kept on the disk for the state: given up when the disk is full, so what was spent is still written */
export const STATE_RESERVE_FILE = 'state.reserve';
/** transcripts: `logs/<task>/<attempt>.jsonl` */
export const LOGS_DIR = 'logs';
/** overnight reports */
export const REPORTS_DIR = 'reports';
/** each check's result on a base commit, cached */
export const BASELINES_FILE = 'baselines.json';
/** BACKLOG.md's last parse, kept for a large backlog whose text has not changed since (see cachedParse) */
export const BACKLOG_PARSE_FILE = 'backlog.parsed.json';
/** what earlier attempts learned (`lessons:`), a person's to edit too */
export const LESSONS_FILE = 'lessons.md';
export const OWN_ENTRIES: readonly string[] = [
  STATE_FILE,
  STATE_JOURNAL_FILE,
  STATE_RESERVE_FILE,
  LOCK_FILE,
  LOGS_DIR,
  REPORTS_DIR,
  BASELINES_FILE,
  BACKLOG_PARSE_FILE,
  LESSONS_FILE,
  MERGE_BACKUP_NAME,
];

/** the prefix of every task branch */
export const BRANCH_PREFIX = 'loop/';

/** the branch of task `id`: `loop/<id>` */
export function taskBranch(id: string): string {
  return `${BRANCH_PREFIX}${id}`;
}

/** Where a task's worktree and branch are: the fleet's answer, given to every part that acts on a task. */
export interface TaskPaths {
  worktreeOf(id: string): string;
  branchOf(id: string): string;
}

/** the ref that keeps a discarded task's last commit reachable */
export function discardedRef(id: string): string {
  return `refs/loopfleet/discarded/${id}`;
}

/** the ref that keeps candidate `k` of a best-of-N task (`parallel:`) that was not chosen */
export function candidateRef(id: string, k: number): string {
  return `refs/loopfleet/candidates/${id}/${k}`;
}

/** the most candidates one attempt round of a `parallel:` task runs */
export const MAX_PARALLEL = 5;

/** the ref that keeps a task branch's tip from before it was replayed onto a new base (see GitPort.replayOnto) */
export function replayedRef(id: string): string {
  return `refs/loopfleet/replayed/${id}`;
}

/** The longest delay a Node.js timer honours (a signed 32-bit count of ms); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
