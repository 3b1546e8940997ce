import { afterEach, describe, expect, it } from 'vitest';
import { demoScript } from '../../src/demo/scripts.js';
import { git } from '../helpers/git-repo.js';
import { startFleet, type Fleet } from './workers-fleet.js';

let fleet: Fleet | null = null;
afterEach(async () => {
  await fleet?.close();
  fleet = null;
});

const pass = (ids: string[]) => demoScript(ids.map((id) => ({ taskId: id, kind: 'pass' as const, edits: [{ path: `${id}.txt`, content: `${id}\n` }] })), { chunkDelayMs: 5, delayMs: 10 });

describe('a coordinator and workers in processes of their own, over a real Redis', () => {
  it('lands twelve tasks verified on three workers, their branches fetched back from the remote', { timeout: 120_000 }, async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `T-${i + 1}`);
    fleet = await startFleet({ ids, script: pass(ids) });
    const workers = [await fleet.worker('w1'), await fleet.worker('w2'), await fleet.worker('w3')];
    const coordinator = fleet.coordinator();
    const done = await coordinator.child;
    expect(done.all).toMatch(/done: 12 verified/);
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
});
