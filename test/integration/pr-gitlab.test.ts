import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backlogRepo, openFleet, runFleet } from '../helpers/fleet-harness.js';
import type { FakeScript } from '../helpers/fake-model.js';
import { FakeGitLab } from '../helpers/fake-gitlab.js';
import { bareOrigin, mergeOnRemote, remoteHead } from '../helpers/pr-remote.js';

/** The merge-request path against the loopback GitLab through the real adapter, chosen as a session chooses it. */

let cleanups: Array<() => Promise<void>> = [];
let gitlab: FakeGitLab;
beforeEach(async () => {
  gitlab = await new FakeGitLab('acme/platform/widgets').start();
});
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
  await gitlab.close();
});

const fixIt: FakeScript = ({ role, attempt }) =>
  role === 'implementer' ? { edits: { 'fixed.txt': `attempt ${attempt}\n` } } : {};
const env = () => ({ GITLAB_TOKEN: gitlab.token, GITLAB_API_URL: gitlab.url, GH_TOKEN: '', GITHUB_TOKEN: '' });

describe('merge requests on a loopback GitLab', () => {
  it('opens a draft MR that closes its issue, answers a failing pipeline on the same MR, and follows the merge', {
    timeout: 240_000,
  }, async () => {
    const root = await backlogRepo(
      cleanups,
      'land: pr\nforge: { type: gitlab, repo: acme/platform/widgets }\ncheck: test -f fixed.txt\nreview: false',
      '- [ ] T-1 Fix the parser\n  source: gl#5',
    );
    const bare = await bareOrigin(root, cleanups);
    await runFleet(root, fixIt, { env: env() });
    expect(gitlab.mergeRequests).toHaveLength(1);
    const mr = gitlab.mergeRequests[0]!;
    expect(mr.title).toBe('Draft: T-1 Fix the parser');
    expect([mr.source, mr.target, mr.labels]).toEqual(['loop/T-1', 'main', ['loopfleet']]);
    expect(mr.description.trimEnd().endsWith('Closes #5')).toBe(true);
    expect(mr.description).not.toContain('Fixes #');

    const head = (await remoteHead(bare, 'loop/T-1'))!;
    gitlab.pushHead(1, head);
    gitlab.addPipeline(head, 'failed', [{ name: 'unit', status: 'failed', log: 'expected UTC, got local time' }]);
    const prompts: string[] = [];
    const h = await openFleet(
      root,
      (call) => {
        if (call.role === 'implementer') prompts.push(call.request.prompt);
        return fixIt(call);
      },
      { env: env() },
    );
    expect((await h.fleet.sync()).sentBack.map((s) => s.id)).toEqual(['T-1']);
    h.fleet.start();
    await h.fleet.whenIdle();
    await h.session.close();
    expect(prompts.at(-1)).toContain('expected UTC, got local time');
    expect(gitlab.mergeRequests).toHaveLength(1);
    expect(gitlab.notesOn(1).some((n) => n.startsWith('loopfleet pushed a new attempt of T-1'))).toBe(true);
    // still a draft: the new title kept GitLab's draft marker
    expect(gitlab.mergeRequests[0]!.title).toBe('Draft: T-1 Fix the parser');

    gitlab.pushHead(1, (await remoteHead(bare, 'loop/T-1'))!);
    await mergeOnRemote(bare, 'loop/T-1');
    gitlab.mergeOnForge(1);
    const after = await openFleet(root, fixIt, { env: env() });
    expect((await after.fleet.sync()).merged).toEqual(['T-1']);
    await after.session.close();
    expect(after.fleet.task('T-1')).toMatchObject({ status: 'merged', pr: { state: 'merged' } });
    expect(await readFile(join(root, 'BACKLOG.md'), 'utf8')).toContain('- [x] T-1 Fix the parser');
  });
});
