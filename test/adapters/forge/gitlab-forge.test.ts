import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitLabForge } from '../../../src/adapters/forge/gitlab-forge.js';
import { ForgeError, ForgeRateLimitError } from '../../../src/ports/forge.js';
import { FakeGitLab } from '../../helpers/fake-gitlab.js';

const MS_PER_SECOND = 20;

describe('GitLabForge against a loopback GitLab', () => {
  let gitlab: FakeGitLab;
  let forge: GitLabForge;
  let alice: number;

  beforeEach(async () => {
    gitlab = await new FakeGitLab('acme/platform/widgets').start();
    alice = gitlab.addUser('alice', 30);
    forge = new GitLabForge('acme/platform/widgets', {
      token: gitlab.token,
      apiUrl: gitlab.url,
      msPerSecond: MS_PER_SECOND,
    });
  });
  afterEach(() => gitlab.close());

  const open = (head: string, draft = true) =>
    forge.openPullRequest({
      head,
      base: 'main',
      title: `Task ${head}`,
      body: 'evidence',
      draft,
      labels: ['loopfleet', 'bot'],
      reviewers: ['alice'],
    });

  it('opens a draft as a `Draft:` title with labels and reviewers by id, a ready one too, and finds each by its source branch', async () => {
    const draft = await open('loop/T-1');
    expect(draft).toMatchObject({
      number: 1,
      state: 'open',
      draft: true,
      title: 'Task loop/T-1',
      head: 'loop/T-1',
      base: 'main',
      mergeable: true,
    });
    expect(gitlab.mergeRequests[0]).toMatchObject({
      title: 'Draft: Task loop/T-1',
      labels: ['loopfleet', 'bot'],
      reviewerIds: [alice],
      description: 'evidence',
    });
    expect((await open('loop/T-2', false)).draft).toBe(false);
    expect(await forge.findPullRequest('loop/T-1')).toMatchObject({ number: 1, draft: true });
    expect(await forge.findPullRequest('loop/T-9')).toBeNull();
    // The project is addressed by its URL-encoded path.
    expect(
      gitlab.requests.some(
        (r) => r.method === 'POST' && r.path === '/api/v4/projects/acme/platform/widgets/merge_requests',
      ),
    ).toBe(true);
  });

  it('refuses a reviewer GitLab does not know, naming them', async () => {
    await expect(
      forge.openPullRequest({
        head: 'loop/T-1',
        base: 'main',
        title: 't',
        body: '',
        draft: false,
        labels: [],
        reviewers: ['nobody'],
      }),
    ).rejects.toThrow(/no user "nobody"/);
    expect(gitlab.mergeRequests).toHaveLength(0);
  });

  it('prefers the open merge request of a branch, and reports merged and closed ones', async () => {
    await open('loop/T-1');
    gitlab.closeOnForge(1);
    await open('loop/T-1');
    gitlab.mergeOnForge(2);
    expect(await forge.findPullRequest('loop/T-1')).toMatchObject({ number: 2, state: 'merged' });
    expect((await forge.getPullRequest(1)).state).toBe('closed');
    await open('loop/T-1');
    expect(await forge.findPullRequest('loop/T-1')).toMatchObject({ number: 3, state: 'open' });
  });

  it('keeps the draft marker when the title changes, and reports conflicts as not mergeable', async () => {
    await open('loop/T-1');
    await forge.updatePullRequest(1, { title: 'Better title', body: 'more evidence' });
    expect(gitlab.mergeRequests[0]).toMatchObject({ title: 'Draft: Better title', description: 'more evidence' });
    gitlab.setConflicts(1, true);
    expect((await forge.getPullRequest(1)).mergeable).toBe(false);
  });

  it('sums up CI from the head’s latest pipeline: failed jobs with the end of their logs, external statuses, allowed failures left out', async () => {
    const sha = 'd1'.repeat(20);
    expect(await forge.ci(sha)).toEqual({ state: 'none', failing: [] });
    gitlab.addPipeline(sha, 'failed', [{ name: 'old', status: 'failed', log: 'old failure' }]);
    gitlab.addPipeline(sha, 'running', [{ name: 'unit', status: 'running' }]);
    expect(await forge.ci(sha)).toEqual({ state: 'pending', failing: [] });

    const log = `${Array.from({ length: 300 }, (_, i) => `\u001b[32mstep ${i}\u001b[0m`).join('\n')}\nERROR: 2 tests failed`;
    gitlab.addPipeline(sha, 'failed', [
      { name: 'unit', stage: 'test', status: 'failed', log },
      { name: 'flaky', status: 'failed', allowFailure: true, log: 'ignored' },
      { name: 'build', stage: 'build', status: 'success' },
    ]);
    gitlab.setStatus(sha, 'jenkins', 'failed', 'Jenkins #7 failed', 'https://ci.example/7');
    const ci = await forge.ci(sha);
    expect(ci.state).toBe('failing');
    expect(ci.failing.map((f) => f.name)).toEqual(['unit', 'jenkins']);
    expect(ci.failing[0]?.summary).toBe('test: script_failure');
    expect(ci.failing[0]?.logExcerpt).toMatch(/ERROR: 2 tests failed$/);
    expect(ci.failing[0]?.logExcerpt).not.toContain('\u001b[');
    expect(ci.failing[0]?.logExcerpt).not.toContain('step 10\n');
    expect(ci.failing[1]).toEqual({
      name: 'jenkins',
      summary: 'Jenkins #7 failed',
      logExcerpt: null,
      url: 'https://ci.example/7',
    });

    const green = 'd2'.repeat(20);
    gitlab.addPipeline(green, 'success', [{ name: 'unit', status: 'success' }]);
    expect(await forge.ci(green)).toEqual({ state: 'passing', failing: [] });
  });

  it('reads the review from approvals and reviewers’ requested changes, counting only members who may push', async () => {
    await open('loop/T-1');
    expect(await forge.review(1)).toBe('none');
    gitlab.approve(1, gitlab.addUser('rita', 20));
    expect(await forge.review(1)).toBe('none');
    gitlab.requestChanges(1, alice);
    expect(await forge.review(1)).toBe('changes-requested');
    gitlab.reviewerStates = false;
    expect(await forge.review(1)).toBe('changes-requested');
    gitlab.reviewerStates = true;
    gitlab.approve(1, alice);
    expect(await forge.review(1)).toBe('approved');
  });

  it('reads every page of a long list', async () => {
    for (let i = 0; i < 130; i++) gitlab.addIssue(`Issue ${i}`, '', ['loopfleet']);
    expect(await forge.issues('loopfleet')).toHaveLength(130);
    expect(gitlab.requests.filter((r) => r.path.endsWith('/issues')).map((r) => r.query.get('page'))).toEqual([
      null,
      '2',
    ]);
  });

  it('lists written notes oldest first after a time, line notes with their place, and whether the author may push', async () => {
    await open('loop/T-1');
    const guest = gitlab.addUser('mallory', 10);
    const stranger = gitlab.addUser('eve', 0);
    gitlab.addNote(1, guest, '/loopfleet rm -rf');
    gitlab.addNote(1, alice, 'approved this merge request', null, true);
    const first = await forge.comments(1);
    const cut = first.at(-1)?.createdAt ?? '';
    const line = gitlab.addNote(1, alice, 'rename this', { path: 'src/a.ts', line: 3 });
    const later = gitlab.addNote(1, stranger, 'drive-by');

    expect(first.map((c) => [c.author, c.kind, c.authorCanWrite, c.permission])).toEqual([
      ['mallory', 'comment', false, 'Guest'],
    ]);
    expect(await forge.comments(1, cut)).toEqual([
      {
        id: `note:${line}`,
        kind: 'review-comment',
        author: 'alice',
        authorCanWrite: true,
        permission: 'Developer',
        body: 'rename this',
        createdAt: expect.any(String),
        reviewState: null,
        path: 'src/a.ts',
        line: 3,
      },
      {
        id: `note:${later}`,
        kind: 'comment',
        author: 'eve',
        authorCanWrite: false,
        permission: 'none',
        body: 'drive-by',
        createdAt: expect.any(String),
        reviewState: null,
        path: null,
        line: null,
      },
    ]);
    await forge.comment(1, 'attempt 2');
    expect(gitlab.notesOn(1).at(-1)).toBe('attempt 2');
  });

  it('merges only while the head is the given commit, and turns on merge-when-pipeline-succeeds', async () => {
    const mr = await open('loop/T-1');
    gitlab.pushHead(1, 'b'.repeat(40));
    const stale = await forge.merge(1, mr.headSha, 'Merge T-1');
    expect(stale.merged).toBe(false);
    expect(stale.merged ? '' : stale.reason).toMatch(/409.*SHA does not match/);
    expect(await forge.enableAutoMerge(1)).toBe(true);
    expect(gitlab.mergeRequests[0]?.autoMerge).toBe(true);
    expect(await forge.merge(1, 'b'.repeat(40), 'Merge T-1')).toEqual({ merged: true, sha: 'e'.repeat(40) });
    expect(await forge.enableAutoMerge(1)).toBe(false);
  });

  it('lists open issues with a label', async () => {
    gitlab.addIssue('Crash', 'steps', ['loopfleet']);
    gitlab.addIssue('Other', '', ['bug']);
    gitlab.addIssue('Closed', '', ['loopfleet'], 'closed');
    expect(await forge.issues('loopfleet')).toEqual([
      { number: 1, title: 'Crash', body: 'steps', url: 'https://gitlab.example/acme/platform/widgets/-/issues/1' },
    ]);
  });

  it('reads base’s protection: protected, the pipeline it requires, the approvals', async () => {
    expect(await forge.branchProtection('main')).toEqual({
      protected: false,
      requiredChecks: [],
      requiredApprovals: 0,
    });
    gitlab.protect('main', 1);
    gitlab.pipelineMustSucceed = true;
    expect(await forge.branchProtection('main')).toEqual({
      protected: true,
      requiredChecks: ['pipeline'],
      requiredApprovals: 1,
    });
  });

  it('reads the token’s user and scopes: `api` is what loopfleet needs', async () => {
    expect(await forge.tokenFacts()).toEqual({ user: 'loopfleet-bot', scopes: ['api'], missing: [] });
    gitlab.scopes = ['read_api', 'read_repository'];
    expect(await forge.tokenFacts()).toEqual({
      user: 'loopfleet-bot',
      scopes: ['read_api', 'read_repository'],
      missing: ['api'],
    });
    gitlab.scopes = null;
    expect(await forge.tokenFacts()).toEqual({ user: 'loopfleet-bot', scopes: null, missing: [] });
  });

  it('sends the token only as PRIVATE-TOKEN', async () => {
    await open('loop/T-1');
    await forge.comments(1);
    for (const r of gitlab.requests) expect(r.headers['private-token']).toBe(gitlab.token);
    expect(gitlab.http.everythingSentBesides('private-token')).not.toContain(gitlab.token);
  });

  describe('rate limits', () => {
    it('waits out a 429 as Retry-After says: two requests', async () => {
      gitlab.rateLimit(1, { retryAfter: 2 });
      const before = performance.now();
      expect((await forge.tokenFacts()).user).toBe('loopfleet-bot');
      expect(performance.now() - before).toBeGreaterThanOrEqual(2 * MS_PER_SECOND);
      expect(gitlab.requests.filter((r) => r.path === '/api/v4/user')).toHaveLength(2);
    });

    it('does not wait past its bound for RateLimit-Reset: one request, the reset time in the error', async () => {
      const reset = Math.floor(Date.now() / 1000) + 3600;
      gitlab.rateLimit(5, { reset });
      const error = await forge.getPullRequest(1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForgeRateLimitError);
      expect((error as ForgeRateLimitError).retryAt).toBe(reset * 1000);
      expect(gitlab.requests).toHaveLength(1);
    });

    it('stops after its bounded retries', async () => {
      gitlab.rateLimit(10, { retryAfter: 1 });
      await expect(forge.tokenFacts()).rejects.toBeInstanceOf(ForgeRateLimitError);
      expect(gitlab.requests).toHaveLength(3);
    });
  });

  describe('errors', () => {
    it('names the call and status of a refusal, never the token', async () => {
      const wrong = new GitLabForge('acme/platform/widgets', {
        token: 'glpat-wrong-token',
        apiUrl: gitlab.url,
        msPerSecond: MS_PER_SECOND,
      });
      const error = await wrong.tokenFacts().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForgeError);
      expect((error as Error).message).toBe('GitLab reading the token’s user: 401 Unauthorized');
    });

    it('redacts the token from a server that echoes it', async () => {
      gitlab.failNext(1, 400, `PRIVATE-TOKEN ${gitlab.token} rejected`);
      const error = await forge.tokenFacts().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForgeError);
      expect((error as Error).message).toBe('GitLab reading the token’s user: 400 PRIVATE-TOKEN [redacted] rejected');
      expect((error as Error).cause).toBeUndefined();
    });

    it('does not repeat a POST that got a 502: it may have been done', async () => {
      await open('loop/T-1');
      gitlab.failNext(1, 502, 'Bad gateway');
      await expect(forge.comment(1, 'attempt 2')).rejects.toThrow('GitLab commenting on !1: 502 Bad gateway');
      expect(gitlab.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/notes'))).toHaveLength(1);
    });

    it('retries a 502 and then succeeds', async () => {
      gitlab.failNext(1, 502, 'Bad gateway');
      expect((await forge.tokenFacts()).user).toBe('loopfleet-bot');
      expect(gitlab.requests.filter((r) => r.path === '/api/v4/user')).toHaveLength(2);
    });

    it('names an unreachable server after its bounded retries', async () => {
      await gitlab.close();
      const error = await forge.tokenFacts().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForgeError);
      expect((error as Error).message).toMatch(/^GitLab reading the token’s user: fetch failed/);
    });
  });
});
