import { afterEach, describe, expect, it } from 'vitest';
import { findRepo } from '../../../src/commands/repo.js';
import { statusRows } from '../../../src/commands/status.js';
import { backlogRepo, openFleet } from '../../helpers/fleet-harness.js';
import { git } from '../../helpers/git-repo.js';
import { MemoryAttemptQueue } from '../../helpers/memory-attempt-queue.js';
import { bareRemote, remoteServices, workerMachine } from './remote-harness.js';
import type { FakeScript } from '../../helpers/fake-model.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const WORDS: Record<string, string> = { 'T-1': 'one', 'T-2': 'two', 'T-3': 'three', 'T-4': 'four' };
const writeOwnFile: FakeScript = ({ role, task }) => (role === 'implementer' ? { edits: { [`${WORDS[task]}.txt`]: `${task}\n` } } : {});

describe('attempts that run on workers', () => {
  it('lands every task verified through two workers, each branch fetched back into the coordinator and merged there', { timeout: 120_000 }, async () => {
    const root = await backlogRepo(cleanups, 'check: test -f one.txt -o -f two.txt -o -f three.txt\nreview: false\nconcurrency: 3', '- [ ] T-1 One\n- [ ] T-2 Two\n- [ ] T-3 Three');
    const remote = await bareRemote(cleanups, root);
    const queue = new MemoryAttemptQueue();
    const a = await workerMachine(cleanups, queue, remote, writeOwnFile, 'host-a');
    const b = await workerMachine(cleanups, queue, remote, writeOwnFile, 'host-b', 2);
    a.start();
    b.start();
    const h = await openFleet(root, writeOwnFile, { services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();

    const tasks = h.fleet.tasks();
    expect(tasks.map((t) => t.status)).toEqual(['verified', 'verified', 'verified']);
    expect(tasks.map((t) => t.attempts.map((x) => [x.outcome, x.reason]))).toEqual(tasks.map(() => [['verified', null]]));
    // Nothing ran here: the coordinator's model was never called, the workers' were.
    expect(h.model.calls).toHaveLength(0);
    expect(a.model.calls.length + b.model.calls.length).toBe(6);
    expect(new Set(tasks.map((t) => t.worker))).toEqual(new Set([a.identity.id, b.identity.id]));
    for (const t of tasks) {
      expect([a.identity.id, b.identity.id]).toContain(t.worker);
      expect(t.attempts.map((x) => [x.outcome, x.reason])).toEqual([["verified", null]]);
      expect(t.usage).toEqual({ input: 200, output: 40, cacheWrite: 0, cacheRead: 0 });
      const local = await git(root, 'rev-parse', `loop/${t.id}`);
      expect(await git(remote, 'rev-parse', `loop/${t.id}`)).toBe(local);
      expect(t.attempts[0]!.commit).toBe(local);
      // the coordinator's worktree of the task is at the pushed commit, so its diff is the worker's change
      expect(await h.fleet.diff(t.id)).toContain(`+++ b/${WORDS[t.id]}.txt`);
    }
    expect(queue.enqueued.sort()).toEqual(['T-1:1', 'T-2:1', 'T-3:1']);

    const workers = new Map(tasks.map((t) => [t.id, t.worker]));
    const merged = await h.fleet.mergeAll();
    expect(merged.merged).toEqual(['T-1', 'T-2', 'T-3']);
    await h.session.close();
    // status --json says which worker ran each task
    const rows = await statusRows(await findRepo(root));
    expect(rows.map((r) => [r.id, r.status, r.worker])).toEqual(['T-1', 'T-2', 'T-3'].map((id) => [id, 'merged', workers.get(id)]));
    expect((await git(root, 'ls-tree', '--name-only', 'main')).split('\n')).toEqual(expect.arrayContaining(['one.txt', 'two.txt', 'three.txt']));
  });
});
