import { afterEach, describe, expect, it } from 'vitest';
import { FakeAttemptQueue } from '../../helpers/fake-attempt-queue.js';
import type { FakeScript } from '../../helpers/fake-model.js';
import { backlogRepo, openFleet } from '../../helpers/fleet-harness.js';
import { bareRemote, remoteServices, workerMachine } from '../../helpers/remote-harness.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const writeOwnFile: FakeScript = ({ role, task }) =>
  role === 'implementer' ? { edits: { [`${task}.txt`]: `${task}\n` } } : {};

describe('the coordinator’s decision on where a worker runs setup, carried in the job', () => {
  it('vouches for base until an agent’s work has landed on it; the next job’s setup then runs in the worker’s sandbox', {
    timeout: 120_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'check: test -f T-1.txt -o -f T-2.txt\nreview: false\nconcurrency: 1\nsetup: "true"',
      '- [ ] T-1 One\n- [ ] T-2 Two',
    );
    const remote = await bareRemote(cleanups, root);
    const queue = new FakeAttemptQueue();
    const w = await workerMachine(cleanups, queue, remote, writeOwnFile, 'host-a');
    w.start();
    const h = await openFleet(root, writeOwnFile, { autoMerge: true, services: remoteServices(queue, remote) });
    cleanups.push(() => h.session.close());
    h.fleet.start();
    await h.fleet.whenIdle();
    expect(['T-1', 'T-2'].map((id) => h.fleet.task(id)!.status)).toEqual(['merged', 'merged']);
    // T-1 started on the person's base; T-2 on a base holding T-1's landing.
    expect(queue.job('T-1:1')!.job.setupOnHost).toBe(true);
    expect(queue.job('T-2:1')!.job.setupOnHost).toBe(false);
    const said = (id: string) =>
      queue
        .job(id)!
        .events.flatMap((e) => (e.event.kind === 'output' ? [e.event.chunk] : []))
        .join('');
    expect(said('T-1:1')).not.toMatch(/runs in the sandbox/);
    expect(said('T-2:1')).toMatch(/setup `true` runs in the sandbox: this worker has not been told/);
  });
});
