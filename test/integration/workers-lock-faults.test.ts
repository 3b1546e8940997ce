/**
 * Faults of the workers themselves, with the built CLI over a real Redis and real git: a job lock lost while
 * Redis is frozen, and a worker killed while its push of the task's branch is landing.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import type { StateData } from '../../src/ports/state-store.js';
import { git } from '../helpers/git-repo.js';
import { holdFirstImplementer, pass, startFleet, type Fleet, type Proc } from '../helpers/workers-fleet.js';

let fleet: Fleet | null = null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await fleet?.close();
  fleet = null;
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A folder on a tmpfs of `size` (mounted as root): a disk that is full for real, not a simulated error. */
async function tinyDisk(size: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'loopfleet-tiny-disk-'));
  await execa('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  cleanups.push(async () => {
    await execa('umount', [dir]);
    await rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Redis frozen for three times the workers' lock timeout (3 s): the length of the freeze is the scenario. */
const FREEZE_MS = 9_000;

function counts(s: StateData) {
  const tasks = Object.values(s.tasks);
  return {
    verified: tasks.filter((t) => t.status === 'verified').length,
    merged: tasks.filter((t) => t.status === 'merged').length,
    lost: tasks.filter((t) => t.status !== 'verified' && t.status !== 'merged').length,
  };
}

const startedOn = (workers: Proc[], job: string) => workers.filter((w) => w.output().includes(`job ${job}: started`));

describe('worker faults', () => {
  it('Redis frozen past the lock timeout: the worker stays up and hands the job back, the task is verified once', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1', 'T-2'];
    const held = holdFirstImplementer(pass(ids), 'T-1');
    fleet = await startFleet({ ids, script: held.script, front: 'check: test -n "$(ls T-*.txt)"\nconcurrency: 2' });
    const workers = [await fleet.worker('w1'), await fleet.worker('w2')];
    const coordinator = fleet.coordinator();
    await held.reached;
    fleet.redis.pause();
    await new Promise((r) => setTimeout(r, FREEZE_MS));
    fleet.redis.resume();
    // The holder finds its lock gone once Redis answers, gives the job up, and stays up.
    const [holder] = startedOn(workers, 'T-1:1');
    await holder!.printed(/job T-1:1: handed back/);
    held.release();
    const done = await coordinator.child;
    expect(done.exitCode).toBe(0);
    for (const w of workers) {
      // Alive: signal 0 reaches it.
      expect(() => process.kill(w.child.pid!, 0)).not.toThrow();
      expect(w.output()).not.toMatch(/Unhandled|JobHandedBackError:|at .*\.js:\d+/);
    }
    const s = (await fleet.state())!;
    expect(counts(s)).toEqual({ verified: 2, merged: 0, lost: 0 });
    // One attempt charged: the hand-back restarted the same attempt.
    expect(s.tasks['T-1']!.attempt).toBe(1);
    expect(s.tasks['T-1']!.attempts.at(-1)!.outcome).toBe('verified');
    expect(await git(fleet.root, 'show', 'loop/T-1:T-1.txt')).toBe('T-1');
  });

  it('a worker killed with SIGKILL while its push lands: the next worker adopts the pushed branch (same attempt, same tree)', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1'];
    fleet = await startFleet({ ids, script: pass(ids), front: 'check: test -n "$(ls T-*.txt)"\nconcurrency: 1' });
    // The remote holds the first push of loop/T-1 after it updated the ref, until the test lets it go.
    const hook = join(fleet.remote, 'hooks', 'post-receive');
    const landed = join(fleet.remote, 'landed');
    const gate = join(fleet.remote, 'gate');
    await writeFile(
      hook,
      `#!/bin/sh\nwhile read old new ref; do\n  if [ "$ref" = refs/heads/loop/T-1 ] && [ ! -e "${landed}" ]; then\n    touch "${landed}"\n    while [ ! -e "${gate}" ]; do sleep 0.05; done\n  fi\ndone\n`,
    );
    await chmod(hook, 0o755);
    const first = await fleet.worker('w1');
    const coordinator = fleet.coordinator();
    await first.printed(/job T-1:1: started/);
    // The branch is on the remote; its worker has not said so yet.
    for (const deadline = Date.now() + 60_000; !existsSync(landed); await new Promise((r) => setTimeout(r, 50)))
      if (Date.now() > deadline) throw new Error(`the push never landed:\n${first.output()}`);
    const pushed = await git(fleet.remote, 'rev-parse', 'refs/heads/loop/T-1');
    first.child.kill('SIGKILL');
    await first.child;
    await writeFile(gate, '');
    const second = await fleet.worker('w2');
    const done = await coordinator.child;
    expect(done.exitCode).toBe(0);
    expect(second.output()).toMatch(/job T-1:1: started/);
    const s = (await fleet.state())!;
    expect(counts(s)).toEqual({ verified: 1, merged: 0, lost: 0 });
    expect(s.tasks['T-1']!.attempt).toBe(1);
    expect(s.tasks['T-1']!.attempts.map((a) => a.outcome)).toEqual(['verified']);
    expect(done.all).toMatch(/was pushed already by an earlier run of job T-1:1 with the same tree: adopted/);
    // The remote's branch was pushed once, and the coordinator's branch is that commit.
    expect(await git(fleet.remote, 'rev-parse', 'refs/heads/loop/T-1')).toBe(pushed);
    expect(await git(fleet.root, 'rev-parse', 'loop/T-1')).toBe(pushed);
  });

  it('a worker whose disk is full stops taking jobs and says why; a healthy worker finishes the backlog, nothing charged', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1', 'T-2'];
    fleet = await startFleet({ ids, script: pass(ids), front: 'check: test -n "$(ls T-*.txt)"\nconcurrency: 2' });
    const disk = await tinyDisk('16k');
    const full = await fleet.worker('full', ['--cache', join(disk, 'cache')]);
    const coordinator = fleet.coordinator();
    await full.printed(/refusing jobs: this machine cannot run attempts: its disk is full \(ENOSPC\)/);
    await full.printed(/job T-\d:1: handed back/);
    const given = /job (T-\d:1): handed back/.exec(full.output())![1]!;
    const healthy = await fleet.worker('healthy');
    const done = await coordinator.child;
    expect(done.exitCode).toBe(0);
    const s = (await fleet.state())!;
    expect(counts(s)).toEqual({ verified: 2, merged: 0, lost: 0 });
    for (const id of ids) {
      expect(s.tasks[id]!.attempt).toBe(1);
      expect(s.tasks[id]!.attempts.map((a) => a.outcome)).toEqual(['verified']);
    }
    // The full worker took one job, gave it back, and took no other; it is still up, saying why it refuses.
    expect([...full.output().matchAll(/job (\S+): started/g)].map((m) => m[1])).toEqual([given]);
    expect(() => process.kill(full.child.pid!, 0)).not.toThrow();
    expect(startedOn([healthy], given)).toEqual([healthy]);
    const id = /worker (\S+) on/.exec(full.output())![1]!;
    const beat = await fleet.redis.command('HGET', `lf:loopfleet:worker:${id}`, 'beat');
    expect(beat).toMatch(/"refusing":"this machine cannot run attempts: its disk is full \(ENOSPC\)"/);
  });
});
