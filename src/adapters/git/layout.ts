/**
 * Where a checkout keeps its git data, read from the file system without running git.
 *
 * A linked worktree has a `.git` *file* (`gitdir: <common>/worktrees/<name>`); its admin folder holds its
 * own HEAD and index, and a `commondir` file pointing at the shared repository (objects, refs, config,
 * hooks). A main checkout has a `.git` folder that is both.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Object store that git inside the sandbox writes to: the shared store is read-only there, so objects
 * written by an agent's `git add` land in this folder of the worktree's admin folder, which lists the
 * shared store as an alternate. They are never moved into the shared store; the committer re-stages from
 * the working tree instead.
 */
export const SANDBOX_OBJECTS = 'loopfleet-objects';

export interface GitLayout {
  /** top folder of the checkout (holds `.git`) */
  checkout: string;
  /** the `.git` entry of the checkout */
  dotGit: string;
  /** true when `.git` is a file, i.e. a linked worktree */
  linked: boolean;
  /** per-checkout git data (HEAD, index); the `.git` folder itself for a main checkout */
  adminDir: string;
  /** shared repository folder: objects, refs, config, hooks */
  commonDir: string;
}

async function kind(p: string): Promise<'file' | 'dir' | null> {
  try {
    const s = await stat(p);
    return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return null;
    throw error;
  }
}

/** The git layout of the checkout containing `dir`, or null when `dir` is not inside one. */
export async function discoverGitLayout(dir: string): Promise<GitLayout | null> {
  let current = path.resolve(dir);
  for (;;) {
    const dotGit = path.join(current, '.git');
    const found = await kind(dotGit);
    if (found === 'dir') {
      return { checkout: current, dotGit, linked: false, adminDir: dotGit, commonDir: dotGit };
    }
    if (found === 'file') {
      const content = await readFile(dotGit, 'utf8');
      const match = /^gitdir:\s*(.+?)\s*$/m.exec(content);
      if (!match?.[1]) throw new Error(`${dotGit} is not a valid gitdir file`);
      const adminDir = path.resolve(current, match[1]);
      let commonDir = adminDir;
      try {
        commonDir = path.resolve(adminDir, (await readFile(path.join(adminDir, 'commondir'), 'utf8')).trim());
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      return { checkout: current, dotGit, linked: true, adminDir, commonDir };
    }
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}
