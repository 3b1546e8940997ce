/**
 * Where task worktrees may live, and what `git worktree list` says about them.
 *
 * Invariant: a task worktree is a direct child of `<root>/.loop-worktrees/`, and that folder is a real
 * folder of the repository, not a link that could lead elsewhere.
 */
import { mkdir, realpath } from 'node:fs/promises';
import { exists } from '../fs/paths.js';
import path from 'node:path';
import { RefusedError } from '../../domain/errors.js';
import { WORK_DIR } from '../../domain/layout.js';
import type { WorktreeInfo } from '../../ports/git.js';

/**
 * The real path of the worktree folder `p` of the repository at `root` (a real path), or RefusedError
 * when it is not a direct child of `<root>/.loop-worktrees/`. `create` makes that folder first.
 */
export async function taskWorktreePath(root: string, p: string, create: boolean): Promise<string> {
  const container = path.join(root, WORK_DIR);
  if (create) await mkdir(container, { recursive: true });
  const resolved = path.resolve(root, p);
  const name = path.basename(resolved);
  let parent: string;
  try {
    parent = await realpath(path.dirname(resolved));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    parent = path.dirname(resolved);
  }
  const realContainer = (await exists(container)) ? await realpath(container) : container;
  if (realContainer !== container)
    throw new RefusedError(`${container} is a link; worktrees must stay inside the repository`);
  if (parent !== container || name === '' || name === '.' || name === '..') {
    throw new RefusedError(
      `worktree path ${p} is not inside ${container}${path.sep}; loopfleet keeps its worktrees there`,
    );
  }
  return path.join(container, name);
}

/** `git worktree list --porcelain -z`: NUL-terminated attributes, an empty one after each worktree. */
export function parseWorktreeList(stdout: string): WorktreeInfo[] {
  const result: WorktreeInfo[] = [];
  let current: WorktreeInfo | null = null;
  for (const field of stdout.split('\0')) {
    if (field === '') {
      if (current) result.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(' ');
    const key = space < 0 ? field : field.slice(0, space);
    const value = space < 0 ? '' : field.slice(space + 1);
    if (key === 'worktree') current = { path: value, branch: null, head: null, prunable: false };
    else if (!current) continue;
    else if (key === 'HEAD') current.head = value;
    else if (key === 'branch') current.branch = value.replace(/^refs\/heads\//, '');
    else if (key === 'prunable') current.prunable = true;
  }
  if (current) result.push(current);
  return result;
}
