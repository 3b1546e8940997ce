import { afterEach, describe, expect, it } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import type { Script } from '../../src/demo/script-types.js';
import { git } from '../helpers/git-repo.js';
import { deferred, holdFirstImplementer, pass, startFleet, type Fleet } from '../helpers/workers-fleet.js';

let fleet: Fleet | null = null;
afterEach(async () => {
  await fleet?.close();
  fleet = null;
});

describe('a coordinator and workers in processes of their own, over a real Redis', () => {
  it('lands twelve tasks verified on three workers, their branches fetched back from the remote', {
    timeout: 120_000,
  }, async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `T-${i + 1}`);
    fleet = await startFleet({ ids, script: pass(ids) });
    const workers = [await fleet.worker('w1'), await fleet.worker('w2'), await fleet.worker('w3')];
    const coordinator = fleet.coordinator();
    const done = await coordinator.child;
    expect(done.all).toMatch(/done: 12 verified/);
    expect(done.all).toContain(`3 worker(s) take jobs from ${fleet.redis.url}/0, 3 attempt(s) at once`);
    expect(done.exitCode).toBe(0);
    const s = (await fleet.state())!;
    for (const id of ids) {
      expect(s.tasks[id]!.status).toBe('verified');
      expect(s.tasks[id]!.attempts.map((a) => a.outcome)).toEqual(['verified']);
      expect(await git(fleet.root, 'show', `loop/${id}:${id}.txt`)).toBe(id);
      expect(await git(fleet.remote, 'rev-parse', `loop/${id}`)).toBe(await git(fleet.root, 'rev-parse', `loop/${id}`));
    }
    // Every worker took part, and each job ran once.
    const started = workers.map((w) => (w.output().match(/job T-\d+:1: started/g) ?? []).length);
    expect(started.reduce((a, b) => a + b, 0)).toBe(12);
    for (const n of started) expect(n).toBeGreaterThan(0);
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) {
      const r = await w.child;
      expect(r.exitCode).toBe(0);
      expect(r.all).toMatch(/stopped/);
    }
  });

  it('a worker killed with SIGKILL mid-attempt: the attempt restarts on another worker, one attempt charged, its spending kept, one push', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1', 'T-2'];
    const held = holdFirstImplementer(pass(ids), 'T-1');
    fleet = await startFleet({ ids, script: held.script, front: 'check: test -n "$(ls T-*.txt)"\nconcurrency: 2' });
    await execa('git', ['-C', fleet.remote, 'config', 'core.logAllRefUpdates', 'always']);
    const w1 = await fleet.worker('w1');
    const w2 = await fleet.worker('w2');
    const coordinator = fleet.coordinator();
    await held.reached;
    const victim = /job T-1:1: started/.test(w1.output()) ? w1 : w2;
    const survivor = victim === w1 ? w2 : w1;
    victim.child.kill('SIGKILL');
    await victim.child;
    held.release();
    const done = await coordinator.child;
    expect(done.exitCode).toBe(0);
    const s = (await fleet.state())!;
    for (const id of ids) expect(s.tasks[id]!.status).toBe('verified');
    const t1 = s.tasks['T-1']!;
    expect(t1.attempt).toBe(1);
    expect(t1.attempts.map((a) => a.outcome)).toEqual(['verified']);
    // The explorer ran twice (once on the dead worker): both are booked.
    expect(t1.usage.output).toBeGreaterThan(s.tasks['T-2']!.usage.output);
    expect(survivor.output()).toMatch(/job T-1:1: started/);
    expect(t1.worker).toContain(survivor.output().match(/worker (\S+) on/)![1]);
    expect(await git(fleet.root, 'show', 'loop/T-1:T-1.txt')).toBe('T-1');
    // One push of loop/T-1 (the reflog of the remote's branch: created once, never moved).
    const pushes = (await git(fleet.remote, 'reflog', 'show', 'refs/heads/loop/T-1')).split('\n').filter(Boolean);
    expect(pushes).toHaveLength(1);
  });

  it('a fleet cost gate trips on usage summed across workers and stops every running attempt, queued ones never start', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-6'];
    const release = deferred();
    const base = pass(ids);
    // Every implementer waits: the explorers' spending alone trips the gate while three attempts run.
    const script: Script = async (req) => {
      if (req.role === 'implementer') await release.promise;
      return base(req);
    };
    fleet = await startFleet({ ids, script, front: 'check: test -n "$(ls T-*.txt)"\nconcurrency: 3' });
    const workers = [await fleet.worker('w1'), await fleet.worker('w2'), await fleet.worker('w3')];
    const coordinator = fleet.coordinator(['--overnight', '--max-cost', '0.006']);
    const done = await coordinator.child;
    release.resolve();
    expect(done.exitCode).toBe(1);
    expect(done.all).toMatch(/fleet gate fleet_cost/);
    const s = (await fleet.state())!;
    // No one task spent the limit: the gate summed what several workers reported.
    const spent = ids.map((id) => s.tasks[id]!.costUsd);
    expect(Math.max(...spent)).toBeLessThan(0.006);
    expect(spent.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(0.006);
    const spenders = new Set(ids.filter((id) => s.tasks[id]!.costUsd > 0).map((id) => s.tasks[id]!.worker));
    expect(spenders.size).toBeGreaterThan(1);
    const statuses = ids.map((id) => s.tasks[id]!.status);
    expect(statuses.filter((x) => x === 'running')).toEqual([]);
    expect(statuses.filter((x) => x === 'verified')).toEqual([]);
    // Every job a worker started was stopped and reported; none is left waiting for a worker.
    for (const w of workers) {
      const started = w.output().match(/job (\S+): started/g) ?? [];
      const reported = w.output().match(/job (\S+): reported/g) ?? [];
      expect(reported.length).toBe(started.length);
    }
    const startedIds = workers.flatMap((w) => [...w.output().matchAll(/job (\S+): started/g)].map((m) => m[1]));
    expect(startedIds.length).toBeLessThan(ids.length);
    expect(await fleet.redis.command('LLEN', 'lf:loopfleet:attempts:wait')).toBe(':0\r\n');
  });
  it('a split task on workers: its parts are parsed and written on the coordinator and run on the workers', {
    timeout: 120_000,
  }, async () => {
    const parts = ['T-1.1', 'T-1.2'];
    const base = pass(parts);
    const split = `Too big for one attempt.\n\n\`\`\`parts\n${JSON.stringify([
      { title: 'Write T-1.1.txt', files: ['T-1.1.txt'] },
      { title: 'Write T-1.2.txt', files: ['T-1.2.txt'] },
    ])}\n\`\`\`\n`;
    const script: Script = (req) =>
      req.role === 'explorer' && req.taskId === 'T-1' ? { text: split, chunkDelayMs: 5 } : base(req);
    fleet = await startFleet({
      ids: ['T-1'],
      script,
      front: 'check: test -n "$(ls T-*.txt)"\nconcurrency: 2\nautonomy: auto\nreview: false',
    });
    const text = (await readFile(join(fleet.root, 'BACKLOG.md'), 'utf8')).replace(
      'Write T-1.txt',
      'Write T-1.txt\n  split: auto',
    );
    await writeFile(join(fleet.root, 'BACKLOG.md'), text);
    await git(fleet.root, 'commit', '--quiet', '-am', 'T-1 may be split');
    const w1 = await fleet.worker('w1');
    const done = await fleet.coordinator().child;
    expect(done.exitCode, done.all).toBe(0);
    const s = (await fleet.state())!;
    expect(parts.map((id) => `${id} ${s.tasks[id]?.status}`)).toEqual(['T-1.1 merged', 'T-1.2 merged']);
    expect(s.tasks['T-1']).toMatchObject({ status: 'merged', parts });
    // The explorer ran on a worker; the parts were written to BACKLOG.md by the coordinator, each ran as a job.
    expect(w1.output()).toMatch(/job T-1:1: started/);
    for (const id of parts) expect(w1.output()).toMatch(new RegExp(`job ${id.replace('.', '\\.')}:1: started`));
    expect(await readFile(join(fleet.root, 'BACKLOG.md'), 'utf8')).toContain(
      '- [x] T-1.1 Write T-1.1.txt\n  Part of T-1. Planned files: T-1.1.txt\n- [x] T-1.2 Write T-1.2.txt',
    );
    expect(await git(fleet.root, 'show', 'main:T-1.2.txt')).toBe('T-1.2');
  });
});
