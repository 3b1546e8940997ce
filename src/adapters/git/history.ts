/**
 * The commits of a stretch of history, for `loopfleet eval`: newest first, as git lists them, so the same
 * range always gives the same commits in the same order.
 */
import { GitExec, assertRefName, gitEnvironment } from './exec.js';

export interface HistoryCommit {
  commit: string;
  parents: string[];
  subject: string;
  body: string;
}

export type HistoryRange = { range: string } | { since: Date };

const RECORD = '\u001e';
const FIELD = '\u0000';

/** At most `limit` commits of `range` (`A..B`), or of HEAD since a date; newest first. */
export async function historyCommits(root: string, which: HistoryRange, limit: number): Promise<HistoryCommit[]> {
  const git = new GitExec(root, gitEnvironment());
  const args = ['log', `--max-count=${limit}`, '--format=%H%x00%P%x00%s%x00%b%x1e'];
  if ('range' in which) {
    for (const side of which.range.split('..')) if (side !== '') assertRefName(side, '--range');
    args.push(which.range, '--');
  } else {
    args.push(`--since=${which.since.toISOString()}`, 'HEAD', '--');
  }
  const out = await git.out(args);
  return out
    .split(RECORD)
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r.trim() !== '')
    .map((r) => {
      const [commit = '', parents = '', subject = '', body = ''] = r.split(FIELD);
      return { commit, parents: parents.split(' ').filter((p) => p !== ''), subject, body: body.trim() };
    });
}

/** Paths `commit` changes against `parent` (added, modified, deleted), with their change letter. */
export async function changedPaths(
  root: string,
  parent: string,
  commit: string,
): Promise<Array<{ status: string; path: string }>> {
  const git = new GitExec(root, gitEnvironment());
  const out = await git.out(['diff', '--name-status', '--no-renames', '-z', parent, commit, '--']);
  const parts = out.split('\0').filter((p) => p !== '');
  const changes: Array<{ status: string; path: string }> = [];
  for (let i = 0; i + 1 < parts.length; i += 2) changes.push({ status: parts[i]!, path: parts[i + 1]! });
  return changes;
}
