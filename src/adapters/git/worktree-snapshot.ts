/**
 * What a read-only agent may not change: the worktree's files as git sees them (tracked and untracked,
 * ignored files excepted). A snapshot is a tree object written through a private index, so the worktree's
 * own index and refs are never touched; restoring puts every file back as it was and removes the new ones.
 * A file too large to hash (SNAPSHOT_MAX_HASHED_BYTES) is never written into the object store: it is
 * compared by its metadata, and a new one is removed on restore like any other new file.
 */
import { lstat, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentSetupError } from '../../domain/errors.js';
import { NO_NESTED_CONFIG } from './commit.js';
import { GitExec, gitEnvironment } from './exec.js';

/**
 * git in the worktree, hardened like every GitExec (the worktree's index and config may be the agent's:
 * no fsmonitor, hook or nested repository runs), on the private `index` when given.
 */
async function git(worktree: string, args: string[], index?: string): Promise<string> {
  const exec = new GitExec(worktree, gitEnvironment(index ? { GIT_INDEX_FILE: index } : {}));
  return (await exec.out([...NO_NESTED_CONFIG, ...args])).trim();
}

/**
 * `use` on a private index read fresh from HEAD: the worktree's own index is the agent's (a gitlink, a
 * skip-worktree bit), so it is never read, and never written.
 */
async function withPrivateIndex<T>(worktree: string, use: (index: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-index-'));
  const index = path.join(dir, 'index');
  try {
    await git(worktree, ['read-tree', 'HEAD'], index);
    return await use(index);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Files larger than this are never hashed by a snapshot (hashing writes their blob into the repository's
 * object store): they are compared by size, modification time and inode instead.
 */
export const SNAPSHOT_MAX_HASHED_BYTES = 16 * 1024 * 1024;

export interface WorktreeSnapshot {
  tree: string;
  /** files over SNAPSHOT_MAX_HASHED_BYTES, left out of `tree`: path → "size:mtime:inode" */
  large: Map<string, string>;
}

/** Regular files of the worktree, tracked or untracked (not ignored), over SNAPSHOT_MAX_HASHED_BYTES. */
async function largeFiles(worktree: string, index: string): Promise<Map<string, string>> {
  const listed = (await git(worktree, ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], index)).split(
    '\0',
  );
  const large = new Map<string, string>();
  for (const rel of new Set(listed)) {
    if (rel === '' || rel.endsWith('/')) continue;
    try {
      const info = await lstat(path.join(worktree, rel), { bigint: true });
      if (info.isFile() && info.size > SNAPSHOT_MAX_HASHED_BYTES)
        large.set(rel, `${info.size}:${info.mtimeNs}:${info.ino}`);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
  }
  return large;
}

/** The tree of the worktree's current files, large ones apart (see WorktreeSnapshot). */
export function snapshotWorktree(worktree: string): Promise<WorktreeSnapshot> {
  return withPrivateIndex(worktree, async (index) => {
    const large = await largeFiles(worktree, index);
    const skip = [...large.keys()].map((p) => `:(exclude,literal)${p}`);
    await git(worktree, ['add', '-A', '--', '.', ...skip], index);
    return { tree: await git(worktree, ['write-tree'], index), large };
  });
}

/** Paths that differ between two snapshots. */
export async function changedPaths(worktree: string, before: string, after: string): Promise<string[]> {
  if (before === after) return [];
  // Tree against tree: no working tree is read, so a gitlink's change is listed without entering it
  // (a nested repository a read-only role made is a change like any other).
  const out = await git(worktree, ['diff', '--name-only', '--no-renames', '--ignore-submodules=none', before, after]);
  return out.split('\n').filter((l) => l !== '');
}

/** Puts the worktree's files back to `tree`: changed files restored, new ones removed. */
export function restoreWorktree(worktree: string, tree: string): Promise<void> {
  return withPrivateIndex(worktree, async (index) => {
    await git(worktree, ['read-tree', tree], index);
    await git(worktree, ['checkout-index', '-a', '-f'], index);
    // `-f -f`: a nested repository the run made goes too (one in `tree` is a gitlink of the index: kept).
    await git(worktree, ['clean', '-f', '-f', '-d', '-q'], index);
  });
}

/**
 * Watches the worktree across a read-only role's run. `verify()`, called once the run is over and its usage
 * booked, puts back anything the run changed and then fails (`read-only-violated`), naming what changed.
 */
export async function watchReadOnly(worktree: string, who: string): Promise<{ verify(): Promise<void> }> {
  const before = await snapshotWorktree(worktree);
  return {
    async verify() {
      const after = await snapshotWorktree(worktree);
      const changed = new Set(await changedPaths(worktree, before.tree, after.tree));
      for (const p of new Set([...before.large.keys(), ...after.large.keys()])) {
        if (before.large.get(p) !== after.large.get(p)) changed.add(p);
      }
      if (changed.size === 0) return;
      await restoreWorktree(worktree, before.tree);
      const list = [...changed].sort();
      const shown = list.slice(0, 5).join(', ') + (list.length > 5 ? `, … (${list.length} files)` : '');
      throw new AgentSetupError(`${who} changed the worktree (${shown}); the change was reset`, 'read-only-violated');
    },
  };
}
