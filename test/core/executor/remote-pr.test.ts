import { afterEach, describe, expect, it } from 'vitest';
import type { FakeScript } from '../../helpers/fake-model.js';
import { backlogRepo, openFleet } from '../../helpers/fleet-harness.js';
import { git } from '../../helpers/git-repo.js';
import { FakeAttemptQueue } from '../../helpers/fake-attempt-queue.js';
import { FakeForge } from '../../helpers/fake-forge.js';
import { remoteHead, withForge } from '../../helpers/pr-remote.js';
import { bareRemote, remoteServices, workerMachine } from '../../helpers/remote-harness.js';

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

const CHECK = `if [ -f fixed.txt ]; then printf '# tests 22\\n# pass 22\\n# fail 0\\n'; else printf '# tests 22\\n# pass 15\\n# fail 7\\n'; exit 1; fi`;
const fixIt: FakeScript = ({ role }) => (role === 'implementer' ? { edits: { 'fixed.txt': 'fixed\n' } } : {});

describe('pull requests of attempts that ran on workers', () => {
  it('opens the PR from the coordinator on the commit the worker pushed, with the evidence of the coordinator’s own check', {
    timeout: 120_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'land: pr\ncheck: sh check.sh\nreview: false',
      '- [ ] T-1 Fix the parser\n  source: gh#7',
      { 'check.sh': `${CHECK}\n` },
    );
    const remote = await bareRemote(cleanups, root);
    const forge = new FakeForge((branch) => remoteHead(remote, branch));
    const queue = new FakeAttemptQueue();
    const worker = await workerMachine(cleanups, queue, remote, fixIt, 'host-a');
    worker.start();
    const queued = remoteServices(queue, remote);
    const h = await openFleet(root, fixIt, { services: (s) => withForge(forge)(queued(s)) });
    cleanups.push(() => h.session.close());
    const logs: string[] = [];
    h.fleet.events.on('log', (e) => logs.push(`${e.level} ${e.id ?? ''} ${e.message}`));
    h.fleet.start();
    await h.fleet.whenIdle();
    // Closing waits for the pull-request part, as the end of a run does.
    await h.session.close();

    const task = h.fleet.task('T-1')!;
    expect(task.status).toBe('verified');
    expect(task.worker).toBe(worker.identity.id);
    // The coordinator ran no model: the worker did the attempt, the coordinator opened the PR.
    expect(h.model.calls).toHaveLength(0);
    // The worker pushed loop/T-1 itself: that is loopfleet's own commit, not one to refuse as a teammate's.
    expect(logs.filter((l) => /not opened|not overwritten/.test(l))).toEqual([]);
    expect(forge.pulls).toHaveLength(1);
    const pull = forge.pulls[0]!;
    const pushed = await remoteHead(remote, 'loop/T-1');
    expect(pull.headSha).toBe(pushed);
    expect(await git(root, 'rev-parse', 'loop/T-1')).toBe(pushed);
    expect(pull.body).toContain('7/22 failing → 0/22');
    expect(pull.body.trimEnd().endsWith('Fixes #7')).toBe(true);
    expect(task.pr).toMatchObject({ number: pull.number, state: 'open', pushed });
  });
});
