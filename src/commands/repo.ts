import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FsBacklogFile } from '../adapters/store/file-store.js';
import { cachedParse } from './backlog-cache.js';
import { SimpleGitAdapter } from '../adapters/git/simple-git.js';
import { addIds } from '../core/backlog/write-back.js';
import { defaultConfig, parseBacklog } from '../core/backlog/parse.js';
import { UsageError } from '../domain/errors.js';
import { BACKLOG_NAME, LOCK_FILE, STATE_FILE, WORK_DIR } from '../domain/layout.js';
import type { Backlog } from '../domain/types.js';
import type { GitPort } from '../ports/git.js';

export const BACKLOG_FILE = BACKLOG_NAME;

export interface Repo {
  root: string;
  workDir: string;
  statePath: string;
  lockPath: string;
  backlogPath: string;
}

/** The repository around `cwd`, or a clear refusal: not a repository, no commits yet. */
export async function findRepo(cwd: string): Promise<Repo> {
  const root = await SimpleGitAdapter.topLevel(cwd);
  if (root === null)
    throw new UsageError(
      `${cwd} is not inside a git repository: run loopfleet in the repository whose backlog it should work on`,
    );
  if (!(await new SimpleGitAdapter(root).hasCommits()))
    throw new UsageError(`${root} has no commits yet: commit something first, task branches start from a commit`);
  const workDir = join(root, WORK_DIR);
  return {
    root,
    workDir,
    statePath: join(workDir, STATE_FILE),
    lockPath: join(workDir, LOCK_FILE),
    backlogPath: join(root, BACKLOG_FILE),
  };
}

/**
 * Read and validate BACKLOG.md. Missing ids are written back only when `writeIds` (a run is starting):
 * read-only commands such as `status` must not change files.
 */
/**
 * BACKLOG.md parsed. `allowMissing` (merge, discard, retry, prune: they work from state) reads a missing
 * file as an empty backlog with the default settings instead of refusing.
 */
export async function loadBacklog(
  repo: Repo,
  writeIds: boolean,
  takenIds: Iterable<string> = [],
  allowMissing = false,
  earlier?: BacklogRead,
): Promise<Backlog> {
  return (await readBacklog(repo, writeIds, takenIds, allowMissing, earlier)).backlog;
}

/** A backlog file as read: its text (null when missing) and what it parsed to, with or without new ids. */
export interface BacklogRead {
  text: string | null;
  backlog: Backlog;
  /** every task had its id in the file: no id was chosen here */
  complete: boolean;
  /** read back from the kept parse of this very text ({@link cachedParse}): no need to keep it again */
  kept?: boolean;
}

/**
 * {@link loadBacklog} with the text it read. With `earlier`, a read of the same file: when the text is the
 * same and every task had its id, the earlier parse is the answer (new ids are all `takenIds` changes).
 */
export async function readBacklog(
  repo: Repo,
  writeIds: boolean,
  takenIds: Iterable<string> = [],
  allowMissing = false,
  earlier?: BacklogRead,
): Promise<BacklogRead> {
  let text: string;
  try {
    text = await readFile(repo.backlogPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      if (allowMissing)
        return { text: null, backlog: { path: repo.backlogPath, config: defaultConfig(), tasks: [] }, complete: true };
      throw new UsageError(`no ${BACKLOG_FILE} in ${repo.root}: run \`loopfleet init\` to write one`);
    }
    throw error;
  }
  if (earlier !== undefined && earlier.complete && earlier.text === text) return earlier;
  const kept = await cachedParse(repo.workDir, repo.backlogPath, text);
  if (kept !== null) return { text, backlog: kept, complete: true, kept: true };
  const parsed = parseBacklog(text, repo.backlogPath, { takenIds });
  if (writeIds && parsed.missingIds.length > 0) await addIds(new FsBacklogFile(repo.backlogPath), parsed.missingIds);
  return { text, backlog: parsed.backlog, complete: parsed.missingIds.length === 0 };
}

/** The base branch: the front matter's, or the branch checked out now. Detached HEAD or a missing branch → exit 2. */
export async function resolveBase(repo: Repo, backlog: Backlog, git: GitPort): Promise<string> {
  if (backlog.config.base !== null) {
    if (!(await git.branchExists(backlog.config.base)))
      throw new UsageError(`${repo.backlogPath}: base branch '${backlog.config.base}' does not exist`);
    return backlog.config.base;
  }
  const current = await git.currentBranch();
  if (current === null)
    throw new UsageError(
      `HEAD is detached in ${repo.root}: check out a branch, or set \`base:\` in ${repo.backlogPath}`,
    );
  return current;
}
