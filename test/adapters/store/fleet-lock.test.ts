import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockedError } from '../../../src/domain/errors.js';

/**
 * The next file write (a write of a whole file, or through a handle) waits for `release`: the moment
 * between creating a file and filling it, held open so another starter can look at it then.
 */
const gate = vi.hoisted(() => ({
  armed: false,
  paused: null as Promise<void> | null,
  release: () => {},
  reached: () => {},
}));
vi.mock('node:fs/promises', async (original) => {
  const fs = await original<typeof import('node:fs/promises')>();
  const hold = async () => {
    if (!gate.armed) return;
    gate.armed = false;
    const paused = new Promise<void>((done) => (gate.release = done));
    gate.reached();
    await paused;
  };
  const writeFile: typeof fs.writeFile = async (...args) => {
    await hold();
    return fs.writeFile(...args);
  };
  const open: typeof fs.open = async (...args) => {
    const handle = await fs.open(...args);
    const write = handle.writeFile.bind(handle);
    handle.writeFile = async (...a: Parameters<typeof write>) => {
      await hold();
      return write(...a);
    };
    return handle;
  };
  return { ...fs, default: { ...fs, writeFile, open }, writeFile, open };
});

const { acquireLock } = await import('../../../src/adapters/store/fleet-lock.js');
const { processStart } = await import('../../../src/adapters/store/process-identity.js');

let dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});
async function lockPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-lock-'));
  dirs.push(dir);
  return join(dir, '.loop-worktrees', 'fleet.lock');
}

describe('the fleet lock', () => {
  it('is never visible before its owner is in it: a starter that looks in that moment does not take it too', async () => {
    const path = await lockPath();
    gate.armed = true;
    const reached = new Promise<void>((done) => (gate.reached = done));
    const first = acquireLock(path, { waitMs: 0 }).then(
      (l) => ({ lock: l }),
      (error: Error) => ({ error }),
    );
    await reached; // the first starter is between creating and filling its file
    const second = await acquireLock(path, { waitMs: 0 }).then(
      (l) => ({ lock: l }),
      (error: Error) => ({ error }),
    );
    gate.release();
    const results = [await first, second];
    const holders = results.filter((r) => 'lock' in r);
    expect(holders).toHaveLength(1);
    expect(results.find((r) => 'error' in r)).toMatchObject({ error: expect.any(LockedError) });
    for (const h of holders) await (h as { lock: { release(): Promise<void> } }).lock.release();
  });

  it('holds its owner from the start: pid and process start time', async () => {
    const path = await lockPath();
    const lock = await acquireLock(path);
    expect((await readFile(path, 'utf8')).trim()).toBe(`${process.pid} ${processStart(process.pid)}`);
    await lock.release();
    await expect(readFile(path, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('an empty lock file (no owner in it) is stale and taken over', async () => {
    const path = await lockPath();
    await (await acquireLock(path)).release(); // makes the folder
    await writeFile(path, '');
    const lock = await acquireLock(path, { waitMs: 0 });
    expect((await readFile(path, 'utf8')).trim()).toMatch(new RegExp(`^${process.pid} `));
    await lock.release();
  });

  it('a lock naming a live pid that started at another time (a reused pid) is stale and taken over', async () => {
    const path = await lockPath();
    await (await acquireLock(path)).release();
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((done) => other.once('spawn', done));
      const start = processStart(other.pid!);
      expect(start).not.toBeNull();
      // the same live process is a holder: refused, after waiting a moment
      await writeFile(path, `${other.pid} ${start}\n`);
      await expect(acquireLock(path, { waitMs: 50 })).rejects.toThrow(
        `another loopfleet (pid ${other.pid}) is running`,
      );
      // the pid alive but started at another time: the owner is gone
      await writeFile(path, `${other.pid} ${Number(start) + 1}\n`);
      const lock = await acquireLock(path, { waitMs: 0 });
      expect((await readFile(path, 'utf8')).trim()).toMatch(new RegExp(`^${process.pid} `));
      await lock.release();
    } finally {
      other.kill();
    }
  });

  it('a second command waits for the holder to let go, then takes the lock', async () => {
    const path = await lockPath();
    await (await acquireLock(path)).release();
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await new Promise((done) => other.once('spawn', done));
      await writeFile(path, `${other.pid} ${processStart(other.pid!)}\n`);
      let settled = false;
      const waiting = acquireLock(path, { waitMs: 30_000 }).finally(() => (settled = true));
      await new Promise((done) => setTimeout(done, 100));
      expect(settled).toBe(false); // still waiting while the holder runs
      await rm(path); // the holder finishes
      const lock = await waiting;
      expect((await readFile(path, 'utf8')).trim()).toMatch(new RegExp(`^${process.pid} `));
      await lock.release();
    } finally {
      other.kill();
    }
  });
});
