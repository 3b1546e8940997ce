/**
 * BacklogFile and TextFiles on the local file system.
 *
 * Invariants of `replace`: a temporary file in the same folder is written, fsynced and renamed over the
 * target (so a reader never sees half a file), with the target's mode; the target's bytes are compared
 * with `expected` after the temporary file is complete and right before the rename, and a difference
 * writes nothing; no temporary file outlives the call.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, watch } from 'node:fs';
import * as fs from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BacklogFile, TextFiles } from '../../ports/files.js';

export class FsBacklogFile implements BacklogFile {
  constructor(readonly path: string) {}

  read(): Promise<Buffer> {
    return fs.readFile(this.path);
  }

  async readIfPresent(): Promise<Buffer | null> {
    try {
      return await fs.readFile(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async replace(expected: Buffer, content: Buffer): Promise<boolean> {
    // Through a symbolic link to the real file: renaming over the link would replace the link itself.
    const target = await fs.realpath(this.path);
    const mode = (await fs.stat(target)).mode & 0o7777;
    const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    let handle: FileHandle | null = null;
    try {
      handle = await fs.open(tmp, 'wx', mode);
      await handle.writeFile(content);
      await handle.chmod(mode);
      await handle.sync();
      await handle.close();
      handle = null;
      // A person's save that landed while the temporary file was written wins: the caller redoes the edit.
      const now = await fs.readFile(target);
      if (!now.equals(expected)) {
        await fs.rm(tmp, { force: true });
        return false;
      }
      await fs.rename(tmp, target);
    } catch (e) {
      await handle?.close().catch(() => undefined);
      await fs.rm(tmp, { force: true });
      throw e;
    }
    // The rename is durable once the folder is synced; a file system that cannot sync a folder still renamed.
    const dir = await fs.open(dirname(target), 'r').catch(() => null);
    await dir?.sync().catch(() => undefined);
    await dir?.close();
    return true;
  }

  watch(onEvent: () => void): () => void {
    // The folder, not the file: editors save by renaming a new file over the old one, which ends a watch on it.
    const file = resolve(this.path);
    const name = basename(file);
    const watcher = watch(dirname(file), { persistent: false }, (_event, filename) => {
      if (filename === null || filename === name) onEvent();
    });
    // A folder that goes away ends the watch; the fleet keeps the backlog it has.
    watcher.on('error', () => watcher.close());
    return () => watcher.close();
  }
}

export const fsTextFiles: TextFiles = {
  async readText(path) {
    try {
      return await fs.readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  },
};

/** The package's own agents/ folder, found upwards from this module (works from src/ and from dist/). */
export function packagedAgentsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'agents', 'implementer.md')))
      return join(dir, 'agents');
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error('the packaged agents/ folder is missing from the loopfleet installation');
}
