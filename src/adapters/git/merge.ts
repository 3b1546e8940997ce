/**
 * Merging a task branch into its base without ever touching uncommitted work.
 *
 * The merge is computed in the object store (`git merge-tree --write-tree`, git ≥ 2.38) and recorded with
 * `git commit-tree`; only then is `base` moved:
 * - base checked out in the main worktree: refused when any tracked file is dirty; otherwise a
 *   fast-forward of that checkout to the merge commit, which git itself refuses, touching nothing, when
 *   an untracked or ignored file would be overwritten;
 * - base checked out in another worktree: refused (its checkout is not ours to move);
 * - base checked out nowhere: a compare-and-swap `update-ref` from the commit the merge was computed on.
 * A conflict is detected before anything is written except unreachable objects, so base, the index and
 * the working tree stay byte-identical.
 */
import type { MergeFileEdit, MergeResult, WorktreeInfo } from '../../ports/git.js';
import { COMMIT_CONFIG, GitCommandError, fields, lines, type GitExec } from './exec.js';
import { committedFileEdit, keepWorkingCopy } from './merge-edit.js';

export interface MergeContext {
  git: GitExec;
  /** the repository's top-level folder (the main checkout) */
  root: string;
  /** where a dirty working copy of an edited file is kept while the checkout fast-forwards */
  backupPath: string;
  worktrees: () => Promise<WorktreeInfo[]>;
  dirtyFiles: () => Promise<string[]>;
}

export async function computeMergeTree(
  git: GitExec,
  baseCommit: string,
  branchCommit: string,
): Promise<{ tree: string; conflicts: string[] }> {
  const { stdout, exitCode } = await git.run(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', baseCommit, branchCommit],
    { ok: [0, 1] },
  );
  const [tree, ...conflicted] = fields(stdout);
  if (!tree) throw new GitCommandError(['merge-tree', baseCommit, branchCommit], exitCode, '', stdout);
  return { tree, conflicts: exitCode === 1 ? [...new Set(conflicted)] : [] };
}

async function resolveBranches(git: GitExec, base: string, branch: string): Promise<[string, string]> {
  const out = lines(await git.out(['rev-parse', `refs/heads/${base}^{commit}`, `refs/heads/${branch}^{commit}`]));
  if (out.length !== 2 || !out[0] || !out[1]) throw new Error(`cannot resolve ${base} and ${branch}: ${out.join(' ')}`);
  return [out[0], out[1]];
}

/** Paths git lists, one per tab-indented line, after "would be overwritten". */
function overwrittenFiles(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('\t'))
    .map((line) => line.trim());
}

export async function mergeBranch(
  ctx: MergeContext,
  branch: string,
  base: string,
  message: string,
  ignoreDirty: readonly string[] = [],
  fileEdit?: MergeFileEdit,
): Promise<MergeResult> {
  const { git } = ctx;
  const [[baseCommit, branchCommit], worktrees] = await Promise.all([
    resolveBranches(git, base, branch),
    ctx.worktrees(),
  ]);
  const main = worktrees[0];
  const holder = worktrees.find((w) => w.branch === base && !w.prunable);
  if (holder && holder !== main) {
    return {
      kind: 'refused',
      reason: `${base} is checked out in ${holder.path}; merge it there or switch that checkout away from ${base}`,
    };
  }
  const inMain = holder !== undefined;

  const [merged, alreadyMerged, dirty] = await Promise.all([
    computeMergeTree(git, baseCommit, branchCommit),
    git.run(['merge-base', '--is-ancestor', branchCommit, baseCommit], { ok: [0, 1] }).then((r) => r.exitCode === 0),
    inMain ? ctx.dirtyFiles() : Promise.resolve([]),
  ]);
  if (merged.conflicts.length > 0) return { kind: 'conflict', files: merged.conflicts };
  if (alreadyMerged) return { kind: 'merged', commit: baseCommit };
  // loopfleet's own edit of a file (BACKLOG.md's tick) goes into the merge commit, not the checkout.
  const edited = fileEdit === undefined ? null : await committedFileEdit(ctx, merged.tree, fileEdit, inMain);
  const tree = edited?.tree ?? merged.tree;
  let names = dirty.map((line) => line.slice(3));
  if (names.some((name) => ignoreDirty.includes(name))) {
    // A file loopfleet itself edits (BACKLOG.md) may be dirty, as long as the branch leaves it alone:
    // the fast-forward below then keeps the working copy's change, as git does for any untouched file.
    const changed = new Set(
      lines(await git.out(['diff', '--name-only', '--ignore-submodules=none', baseCommit, merged.tree])),
    );
    names = names.filter((name) => !ignoreDirty.includes(name) || changed.has(name));
  }
  // Staged changes of the edited file cannot be kept apart from the commit's version: refuse, touch nothing.
  const staged =
    edited === null || !inMain
      ? []
      : dirty.filter((line) => line.slice(3) === edited.path && line[0] !== ' ' && line[0] !== '?');
  if (staged.length > 0) {
    return {
      kind: 'refused',
      reason: `${edited!.path} has staged changes in ${main?.path ?? 'the checkout'}; commit or unstage them, then merge again`,
    };
  }
  if (names.length > 0) {
    return {
      kind: 'refused',
      reason: `uncommitted changes in ${main?.path ?? 'the checkout'} on ${base}: ${names.join(', ')}; commit or stash them, then merge again`,
    };
  }

  const commit = (
    await git.out([...COMMIT_CONFIG, 'commit-tree', tree, '-p', baseCommit, '-p', branchCommit, '-m', message])
  ).trim();

  if (!inMain) {
    try {
      await git.run(['update-ref', '-m', `merge ${branch}`, `refs/heads/${base}`, commit, baseCommit]);
    } catch (error) {
      const now = await git.run(['rev-parse', '--verify', '-q', `refs/heads/${base}`], { ok: [0, 1] });
      if (now.stdout.trim() !== baseCommit)
        return { kind: 'refused', reason: `${base} moved while merging; merge again` };
      throw error;
    }
    return { kind: 'merged', commit };
  }

  const fastForward = () =>
    // No hooks (commitApi runs with core.hooksPath=/dev/null): the tree being checked out is agent-written,
    // and so may be a hooks folder it points to.
    git.commitApi(['merge', '--ff-only', commit], (g) => g.merge(['--ff-only', '--no-overwrite-ignore', '-q', commit]));
  try {
    if (edited === null || !dirty.some((line) => line.slice(3) === edited.path)) await fastForward();
    else await keepWorkingCopy(ctx, edited.path, ctx.backupPath, fastForward);
  } catch (error) {
    if (!(error instanceof GitCommandError)) throw error;
    if (/would be overwritten/.test(error.stderr)) {
      const files = overwrittenFiles(error.stderr);
      return {
        kind: 'refused',
        reason: `the merge would overwrite files in ${main?.path ?? 'the checkout'}: ${files.join(', ') || error.stderr.trim()}; move them away, then merge again`,
      };
    }
    if (/Not possible to fast-forward/i.test(error.stderr)) {
      return { kind: 'refused', reason: `${base} moved while merging; merge again` };
    }
    throw error;
  }
  return { kind: 'merged', commit };
}
