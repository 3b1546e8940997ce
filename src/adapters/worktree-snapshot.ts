/**
 * What a read-only agent may not change: the worktree's files as git sees them (tracked and untracked,
 * ignored files excepted). A snapshot is a tree object written through a private index, so the worktree's
 * own index and refs are never touched; restoring puts every file back as it was and removes the new ones.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { AgentSetupError } from '../domain/errors.js';

async function git(worktree: string, args: string[], index?: string): Promise<string> {
  const result = await execa('git', args, {
    cwd: worktree,
    reject: false,
    env: { ...(index ? { GIT_INDEX_FILE: index } : {}), GIT_OPTIONAL_LOCKS: '0' },
  });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(' ')} failed in ${worktree}: ${String(result.stderr).trim()}`);
  return String(result.stdout).trim();
}

async function withPrivateIndex<T>(worktree: string, use: (index: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'loopfleet-index-'));
  const index = path.join(dir, 'index');
  try {
    const real = path.resolve(worktree, await git(worktree, ['rev-parse', '--git-path', 'index']));
    try {
      await copyFile(real, index);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return await use(index);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The tree of the worktree's current files. */
export function snapshotWorktree(worktree: string): Promise<string> {
  return withPrivateIndex(worktree, async (index) => {
    await git(worktree, ['add', '-A', '--', '.'], index);
    return git(worktree, ['write-tree'], index);
  });
}

/** Paths that differ between two snapshots. */
export async function changedPaths(worktree: string, before: string, after: string): Promise<string[]> {
  if (before === after) return [];
  const out = await git(worktree, ['diff', '--name-only', '--no-renames', before, after]);
  return out.split('\n').filter((l) => l !== '');
}

/** Puts the worktree's files back to `tree`: changed files restored, new ones removed. */
export function restoreWorktree(worktree: string, tree: string): Promise<void> {
  return withPrivateIndex(worktree, async (index) => {
    await git(worktree, ['read-tree', tree], index);
    await git(worktree, ['checkout-index', '-a', '-f'], index);
    await git(worktree, ['clean', '-f', '-d', '-q'], index);
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
      const changed = await changedPaths(worktree, before, await snapshotWorktree(worktree));
      if (changed.length === 0) return;
      await restoreWorktree(worktree, before);
      const shown = changed.slice(0, 5).join(', ') + (changed.length > 5 ? `, … (${changed.length} files)` : '');
      throw new AgentSetupError(`${who} changed the worktree (${shown}); the change was reset`, 'read-only-violated');
    },
  };
}
