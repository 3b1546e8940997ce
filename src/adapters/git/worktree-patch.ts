/**
 * What an agent's run changed in a worktree, as a binary patch, and putting such a patch back. Used by the
 * recording and replaying model clients ({@link RecordingModelClient}): a replayed writing role makes the
 * same change to the worktree that the recorded one made, without a model.
 *
 * Invariants: the worktree's own index and refs are never read or written (snapshots go through a private
 * index, {@link snapshotWorktree}); a patch is applied by `git apply` on the working tree only, which
 * refuses paths outside it, inside `.git` or beyond a symbolic link; a patch naming such a path is refused
 * here first, with its name, before git sees it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NO_NESTED_CONFIG } from './commit.js';
import { GitExec, gitEnvironment } from './exec.js';
import { snapshotWorktree } from './worktree-snapshot.js';

function exec(worktree: string): GitExec {
  return new GitExec(worktree, gitEnvironment());
}

/** Starts watching `worktree`; `patch()` returns the binary diff from then to now ('' when nothing changed). */
export async function watchChanges(worktree: string): Promise<{ patch(): Promise<string> }> {
  const before = await snapshotWorktree(worktree);
  return {
    async patch() {
      const after = await snapshotWorktree(worktree);
      if (after.tree === before.tree) return '';
      return exec(worktree).out([
        ...NO_NESTED_CONFIG,
        'diff',
        '--binary',
        '--no-renames',
        '--no-ext-diff',
        '--no-textconv',
        '--full-index',
        before.tree,
        after.tree,
      ]);
    },
  };
}

/** The file paths a patch names (both sides of every `diff --git` header and of `---`/`+++` lines). */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const line of patch.split('\n')) {
    const header = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
    if (header) {
      paths.add(header[1]!);
      paths.add(header[2]!);
      continue;
    }
    const side = /^(?:---|\+\+\+) (?:a|b)\/(.+)$/.exec(line);
    if (side) paths.add(side[1]!);
  }
  return [...paths];
}

/** Why `rel` may not be written by a patch, or null when it may. */
export function refusedPatchPath(rel: string): string | null {
  if (rel.startsWith('"')) return `${rel}: quoted (unusual) path names are not replayed`;
  if (path.posix.isAbsolute(rel) || /^[A-Za-z]:/.test(rel)) return `${rel}: an absolute path`;
  const parts = rel.split(/[\\/]/);
  if (parts.includes('..')) return `${rel}: leads out of the worktree`;
  if (parts.some((p) => p.toLowerCase() === '.git')) return `${rel}: inside .git`;
  return null;
}

/** Applies `patch` to the working tree of `worktree`; throws naming the first refused path, or git's reason. */
export async function applyPatch(worktree: string, patch: string): Promise<void> {
  if (patch === '') return;
  for (const rel of patchPaths(patch)) {
    const refused = refusedPatchPath(rel);
    if (refused !== null) throw new Error(`the recorded change is refused: ${refused}`);
  }
  // The patch file lives outside the worktree, so nothing in the worktree can stand in its place.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-patch-'));
  try {
    const file = path.join(dir, 'change.patch');
    await writeFile(file, patch, { mode: 0o600 });
    await exec(worktree).out([...NO_NESTED_CONFIG, 'apply', '--binary', '--whitespace=nowarn', file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
