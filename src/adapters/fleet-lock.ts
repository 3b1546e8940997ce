import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LockedError } from '../domain/errors.js';

export interface FleetLock {
  release(): Promise<void>;
}

/** Whether a process with `pid` exists (one of another user's counts: EPERM). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function holder(path: string): Promise<number | null> {
  try {
    const pid = Number.parseInt((await readFile(path, 'utf8')).trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * One fleet per repository. The lock file holds the owner's pid and is created with O_EXCL, so two starts
 * racing cannot both win; a lock whose pid is dead (crash, kill -9) is stale and taken over.
 */
export async function acquireLock(path: string): Promise<FleetLock> {
  await mkdir(dirname(path), { recursive: true });
  for (let tries = 0; tries < 3; tries++) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return {
        release: async () => {
          if ((await holder(path)) === process.pid) await rm(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = await holder(path);
    // Our own pid counts as held too: a second open in one process is as wrong as a second process.
    if (pid !== null && processAlive(pid)) throw new LockedError(pid, path);
    await rm(path, { force: true }); // stale: its owner is gone
  }
  throw new Error(`could not take the fleet lock ${path}`);
}

/** The pid of a live fleet holding the lock, or null. */
export async function lockHolder(path: string): Promise<number | null> {
  const pid = await holder(path);
  return pid !== null && pid !== process.pid && processAlive(pid) ? pid : null;
}
