import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockedError } from '../../domain/errors.js';
import { processAlive, processStart } from './process-identity.js';

export interface FleetLock {
  release(): Promise<void>;
}

/** Who holds a lock: a pid and, when it was known, that process's start. */
interface Owner {
  pid: number;
  start: string | null;
}

/** The lock file's text: `<pid> <start>` on one line (`<pid>` alone was an older format). */
function parseOwner(text: string): Owner | null {
  const m = /^(\d+)(?:[ \t]+(\S.*?))?\s*$/.exec(text.trim());
  if (m === null) return null;
  const pid = Number(m[1]);
  return pid > 0 ? { pid, start: m[2] ?? null } : null;
}

/**
 * Whether the owner is still the process that wrote the lock: its pid lives and (when the lock names a
 * start) started at that same moment — a reused pid is another process.
 */
function ownerAlive(owner: Owner): boolean {
  if (!processAlive(owner.pid)) return false;
  if (owner.start === null) return true;
  const now = processStart(owner.pid);
  return now === null || now === owner.start;
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function linkNew(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

export interface LockOptions {
  /** how long a second command waits for the holder to finish before it is refused */
  waitMs?: number;
}

/** A second command waits this long at most for the lock (merge and discard take about a second). */
export const LOCK_WAIT_MS = 5000;

/**
 * One fleet per repository.
 *
 * Invariants: the lock file never exists without its owner in it — the owner (pid and process start) is
 * written to a private temp file that is then hard-linked onto the lock name, which fails if the name
 * exists. A lock is stale only when its owner is gone (dead pid, or a live pid with another start time);
 * an unreadable or empty one (never written by this code) is stale too. A stale lock is removed only by
 * the holder of `.<lock>.break`, after it read the very same text again, so two starters that both saw it
 * stale cannot remove each other's fresh lock.
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<FleetLock> {
  await mkdir(dirname(path), { recursive: true });
  const me = `${process.pid} ${processStart(process.pid) ?? ''}`.trim();
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${me}\n`);
  const deadline = Date.now() + (options.waitMs ?? LOCK_WAIT_MS);
  let delay = 20;
  try {
    for (;;) {
      if (await linkNew(tmp, path)) {
        return {
          release: async () => {
            if ((await readText(path))?.trim() === me) await rm(path, { force: true });
          },
        };
      }
      const text = await readText(path);
      if (text === null) continue; // released meanwhile
      const owner = parseOwner(text);
      if (owner === null || !ownerAlive(owner)) {
        await breakStale(path, tmp, text);
        continue;
      }
      // Our own pid counts as held too: a second open in one process is as wrong as a second process.
      if (owner.pid === process.pid || Date.now() >= deadline) throw new LockedError(owner.pid, path);
      await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
      delay = Math.min(delay * 2, 400);
    }
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Removes the lock whose text was `stale`, if it still is, under `.<lock>.break`. */
async function breakStale(path: string, tmp: string, stale: string): Promise<void> {
  const guard = join(dirname(path), `.${basename(path)}.break`);
  if (!(await linkNew(tmp, guard))) {
    const text = await readText(guard);
    const owner = text === null ? null : parseOwner(text);
    // A breaker that died in its few milliseconds here leaves the guard: it is stale like a lock.
    if (text !== null && (owner === null || !ownerAlive(owner))) await rm(guard, { force: true });
    else await sleep(5);
    return;
  }
  try {
    if ((await readText(path)) === stale) await rm(path, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

/** The pid of a live fleet holding the lock, or null. */
export async function lockHolder(path: string): Promise<number | null> {
  const text = await readText(path);
  const owner = text === null ? null : parseOwner(text);
  return owner !== null && owner.pid !== process.pid && ownerAlive(owner) ? owner.pid : null;
}
