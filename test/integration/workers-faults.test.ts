import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Script } from '../../src/demo/script-types.js';
import { git } from '../helpers/git-repo.js';
import { holdFirstImplementer, pass, startFleet, type Fleet } from '../helpers/workers-fleet.js';

let fleet: Fleet | null = null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await fleet?.close();
  fleet = null;
  for (const c of cleanups.splice(0)) await c();
});

/** The outage's length is the scenario itself (a Redis away for five seconds), not a wait for something. */
const OUTAGE_MS = 5_000;

describe('faults of a fleet on workers', () => {
  it('Redis stopped for five seconds mid-run: the run completes and no event is lost', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1', 'T-2', 'T-3'];
    const held = holdFirstImplementer(pass(ids), 'T-1');
    fleet = await startFleet({ ids, script: held.script, front: 'check: test -n "$(ls T-*.txt)"\nconcurrency: 3' });
    // Locks outlast the outage: a job whose worker is alive is not taken by another meanwhile.
    const w1 = await fleet.worker('w1', ['--lock-timeout', '30s']);
    const w2 = await fleet.worker('w2', ['--lock-timeout', '30s']);
    const coordinator = fleet.coordinator();
    await held.reached;
    await fleet.redis.stop({ save: true });
    // The implementer answers while Redis is away: its events wait in the worker's offline queue.
    held.release();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await fleet.redis.start();
    const done = await coordinator.child;
    expect(done.exitCode).toBe(0);
    const s = (await fleet.state())!;
    for (const id of ids) {
      expect(s.tasks[id]!.status).toBe('verified');
      expect(s.tasks[id]!.attempts.map((a) => a.outcome)).toEqual(['verified']);
      expect(await git(fleet.root, 'show', `loop/${id}:${id}.txt`)).toBe(id);
    }
    // The same script for every task: the same usage booked for each, the one whose events crossed the outage too.
    const outputs = ids.map((id) => s.tasks[id]!.usage.output);
    expect(new Set(outputs).size).toBe(1);
    expect(outputs[0]).toBeGreaterThan(0);
    // Each job ran once, on one worker.
    const started = [w1, w2].flatMap((w) => [...w.output().matchAll(/job (\S+): started/g)].map((m) => m[1]));
    expect(started.sort()).toEqual(['T-1:1', 'T-2:1', 'T-3:1']);
  });

  it('the coordinator killed with SIGKILL and started again follows the job that still runs: one claim, verified, nothing booked twice', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1', 'T-2'];
    const held = holdFirstImplementer(pass(ids), 'T-1');
    const calls: string[] = [];
    const script: Script = (req) => {
      // An agent's first turn: one run of the role.
      if (req.assistantTurns === 0) calls.push(`${req.taskId}/${req.role}`);
      return held.script(req);
    };
    fleet = await startFleet({ ids, script, front: 'check: test -n "$(ls T-*.txt)"\nconcurrency: 2' });
    const workers = [await fleet.worker('w1'), await fleet.worker('w2')];
    const first = fleet.coordinator();
    await held.reached;
    // The kill comes once the coordinator's state holds the attempt and the explorer's usage: what a crash
    // loses of the last quarter second before it (applied, not yet saved) is not what this test is about.
    await fleet.until('T-1 running with its explorer booked', (st) => {
      const t = st.tasks['T-1'];
      return t?.status === 'running' && t.attempts.some((a) => (a.usageByRole?.explorer?.output ?? 0) > 0);
    });
    first.child.kill('SIGKILL');
    await first.child;
    const crashed = (await fleet.state())!;
    expect(crashed.tasks['T-1']!.status).toBe('running');
    const second = fleet.coordinator();
    // The worker is still in T-1's implementer when the new coordinator takes its job up again.
    await second.printed(/attempt 1 goes on as job T-1:1/);
    held.release();
    const done = await second.child;
    expect(done.exitCode).toBe(0);
    const s = (await fleet.state())!;
    for (const id of ids) {
      expect(s.tasks[id]!.status).toBe('verified');
      expect(await git(fleet.root, 'show', `loop/${id}:${id}.txt`)).toBe(id);
    }
    // The interrupted attempt was followed again, not charged as another attempt, not run again.
    expect(s.tasks['T-1']!.attempt).toBe(1);
    expect(s.tasks['T-1']!.attempts.at(-1)!.outcome).toBe('verified');
    expect(done.all).toMatch(
      /attempt 1 goes on as job T-1:1 \(on worker \S+\): followed again from its first unacknowledged event/,
    );
    const started = workers.flatMap((w) => [...w.output().matchAll(/job (\S+): started/g)].map((m) => m[1]));
    expect(started.filter((j) => j!.startsWith('T-1:'))).toEqual(['T-1:1']);
    const holder = workers.find((w) => /job T-1:1: started/.test(w.output()))!;
    expect(s.tasks['T-1']!.worker).toBe(/worker (\S+) on/.exec(holder.output())![1]);
    // Each role of T-1 was asked once, and its usage is booked in one attempt record: the explorer's in the
    // run the crash interrupted, the rest in the run that followed the same job; nothing twice.
    const t1 = s.tasks['T-1']!;
    expect(calls.filter((c) => c.startsWith('T-1/')).sort()).toEqual([
      'T-1/explorer',
      'T-1/implementer',
      'T-1/verifier',
    ]);
    expect(t1.attempts.map((a) => [a.n, a.outcome, Object.keys(a.usageByRole).sort()])).toEqual([
      [-1, 'interrupted', ['explorer']],
      [1, 'verified', ['implementer', 'verifier']],
    ]);
    const booked = t1.attempts.flatMap((a) => Object.values(a.usageByRole)).reduce((n, u) => n + u.output, 0);
    expect(t1.usage.output).toBe(booked);
    expect(booked).toBeGreaterThan(0);
  });

  it('a worker whose sandbox fails its self-test refuses jobs, says why, and a sound worker takes the job', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1'];
    fleet = await startFleet({ ids, script: pass(ids), front: 'check: test -n "$(ls T-*.txt)"' });
    // A "bubblewrap" that isolates nothing: the self-test's escapes succeed.
    const bin = await mkdtemp(join(tmpdir(), 'loopfleet-fake-bwrap-'));
    cleanups.push(() => rm(bin, { recursive: true, force: true }));
    await writeFile(
      join(bin, 'bwrap'),
      '#!/bin/sh\nwhile [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n',
    );
    await chmod(join(bin, 'bwrap'), 0o755);
    const weak = await fleet.worker('weak', [], { PATH: `${bin}:${process.env.PATH ?? ''}` });
    await weak.printed(/refusing jobs: the sandbox is weaker than promised/);
    await weak.printed(/refusing jobs until it is stopped/);
    const id = weak.output().match(/worker (\S+) on/)![1]!;
    // The heartbeat is one sealed text: its refusal is in it.
    const beat = await fleet.redis.command('HGET', `lf:loopfleet:worker:${id}`, 'beat');
    expect(beat).toMatch(/"refusing":"the sandbox is weaker than promised/);
    const coordinator = fleet.coordinator();
    // The job waits: the only worker refuses it (the queue's state, polled: another process).
    while ((await fleet.redis.command('LLEN', 'lf:loopfleet:attempts:wait')) !== ':1\r\n') {
      await new Promise((r) => setTimeout(r, 50));
    }
    await coordinator.printed(
      /warning: no worker takes jobs from redis:\/\/127\.0\.0\.1:\d+\/0 yet \(1 refusing: the sandbox is weaker than promised/,
    );
    const sound = await fleet.worker('sound');
    const done = await coordinator.child;
    expect(done.exitCode).toBe(0);
    expect((await fleet.state())!.tasks['T-1']!.status).toBe('verified');
    expect(weak.output()).not.toMatch(/job \S+: started/);
    expect(sound.output()).toMatch(/job T-1:1: started/);
    weak.child.kill('SIGTERM');
    expect((await weak.child).exitCode).toBe(0);
  });

  it('SIGTERM: the worker takes no new job, hands back what still runs when the grace period ends, and exits 0; another worker finishes it', {
    timeout: 120_000,
  }, async () => {
    const ids = ['T-1'];
    const held = holdFirstImplementer(pass(ids), 'T-1');
    fleet = await startFleet({ ids, script: held.script, front: 'check: test -n "$(ls T-*.txt)"' });
    const leaving = await fleet.worker('leaving', ['--grace', '1s']);
    const coordinator = fleet.coordinator();
    await held.reached;
    leaving.child.kill('SIGTERM');
    const left = await leaving.child;
    expect(left.exitCode).toBe(0);
    expect(left.all).toMatch(/received SIGTERM: no new jobs/);
    expect(left.all).toMatch(/handing back the attempts that still run/);
    expect(left.all).toMatch(/job T-1:1: handed back/);
    held.release();
    const staying = await fleet.worker('staying');
    const done = await coordinator.child;
    expect(done.exitCode).toBe(0);
    const s = (await fleet.state())!;
    expect(s.tasks['T-1']!.status).toBe('verified');
    expect(s.tasks['T-1']!.attempt).toBe(1);
    expect(staying.output()).toMatch(/job T-1:1: started/);
  });
});
