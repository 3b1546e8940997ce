/**
 * File writes that never follow a link: for every file loopfleet creates in a folder an agent could write
 * (a worktree, a worktree's admin folder). An agent can leave a link named like any file loopfleet is
 * about to write, or replace a folder on the way with a link to a host folder.
 *
 * Invariants:
 * - a file is created with O_CREAT|O_EXCL|O_NOFOLLOW: a link (even a dangling one) or any existing file
 *   in its place is an EEXIST error, never opened, never truncated;
 * - a folder on the way is checked with lstat component by component and created one level at a time
 *   (mkdir fails on a link put there meanwhile); a link or a non-folder is refused, never entered.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** A new file at `p`, opened for writing; EEXIST when anything (a link included) is already there. */
export function createNew(p: string, mode = 0o644): Promise<FileHandle> {
  return open(p, CREATE_NEW, mode);
}

/** Writes `content` to a new file at `p` (see createNew), with exactly `mode`. */
export async function writeNew(p: string, content: string | Buffer, mode = 0o644): Promise<void> {
  const handle = await createNew(p, mode);
  try {
    await handle.writeFile(content);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/** Copies the regular file `src` to a new file `dest` (see createNew), with `mode`; streamed. */
export async function copyNew(src: string, dest: string, mode: number): Promise<void> {
  const input = await open(src, constants.O_RDONLY);
  try {
    const output = await createNew(dest, mode & 0o777);
    try {
      const buffer = Buffer.allocUnsafe(1 << 20);
      for (;;) {
        const { bytesRead } = await input.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        await output.write(buffer, 0, bytesRead);
      }
      await output.chmod(mode);
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}

export class LinkRefused extends Error {
  override readonly name = 'LinkRefused';
}

/**
 * Creates (or checks) the folders of `rel` below `root`, one component at a time; throws LinkRefused when
 * one of them is a link or not a folder. `root` itself must be a real path.
 */
export async function ensureRealFolder(root: string, rel: string): Promise<string> {
  let current = root;
  for (const part of rel.split(/[\\/]/).filter((p) => p !== '' && p !== '.')) {
    if (part === '..') throw new LinkRefused(`${rel} leads out of ${root}`);
    current = path.join(current, part);
    let info: import('node:fs').Stats | null = null;
    try {
      info = await lstat(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (info === null) await mkdir(current);
    else if (!info.isDirectory()) {
      throw new LinkRefused(`${path.relative(root, current)} is ${info.isSymbolicLink() ? 'a link' : 'not a folder'}`);
    }
  }
  return current;
}

/**
 * `p` holds exactly `content` afterwards, as a regular file of loopfleet's: whatever else is there (a link,
 * a folder left by an agent) is removed first, never written through.
 */
export async function rewriteFile(p: string, content: string, mode = 0o644): Promise<void> {
  let info: import('node:fs').Stats | null = null;
  try {
    info = await lstat(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (info?.isFile() === true && info.nlink === 1) {
    const handle = await open(p, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if ((await handle.readFile('utf8')) === content) return;
    } finally {
      await handle.close();
    }
  }
  // A hard link to a host file would be written through too: the name is replaced, not the file.
  if (info !== null) await rm(p, { recursive: true, force: true });
  await writeNew(p, content, mode);
}

/** `p` is a real folder of its own afterwards: a link or a file in its place is removed first. */
export async function realFolderAt(p: string): Promise<void> {
  let info: import('node:fs').Stats | null = null;
  try {
    info = await lstat(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (info?.isDirectory() === true) return;
  if (info !== null) await rm(p, { force: true });
  await mkdir(p);
}
