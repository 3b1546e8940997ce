import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitHubForge } from '../../../src/adapters/forge/github-forge.js';
import { ForgeError, ForgeRateLimitError } from '../../../src/ports/forge.js';
import { FakeGitHub } from '../../helpers/fake-github.js';

/** Waits are real but short: one "second" the server names is 20 ms here, so waiting is measurable, never skipped. */
const MS_PER_SECOND = 20;

describe('GitHubForge against a loopback GitHub', () => {
  let github: FakeGitHub;
  let forge: GitHubForge;

  beforeEach(async () => {
    github = await new FakeGitHub('acme/widgets').start();
    forge = new GitHubForge('acme/widgets', {
      token: github.token,
      apiUrl: github.url,
      msPerSecond: MS_PER_SECOND,
      writeSpacingMs: 0,
    });
  });
  afterEach(() => github.close());

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

  it('opens a draft with its labels and reviewers, a ready one too, and finds each again by its head', async () => {
    const draft = await open('loop/T-1');
    expect(draft).toMatchObject({
      number: 1,
      state: 'open',
      draft: true,
      head: 'loop/T-1',
      base: 'main',
      title: 'Task loop/T-1',
    });
    expect(github.pulls[0]).toMatchObject({ labels: ['loopfleet', 'bot'], reviewers: ['alice'], body: 'evidence' });
    const ready = await open('loop/T-2', false);
    expect(ready.draft).toBe(false);

    const found = await forge.findPullRequest('loop/T-1');
    expect(found).toMatchObject({ number: 1, draft: true, mergeable: true, headSha: draft.headSha });
    expect(await forge.findPullRequest('loop/T-9')).toBeNull();
    // The list is asked by `owner:branch`, so another fork's branch of the same name never matches.
    expect(
      github.requests.some((r) => r.path === '/repos/acme/widgets/pulls' && r.query.get('head') === 'acme:loop/T-1'),
    ).toBe(true);
  });

  it('prefers the open pull request of a head over a merged and a closed one, and reports merged and closed', async () => {
    await open('loop/T-1');
    github.closeOnForge(1);
    await open('loop/T-1');
    github.mergeOnForge(2);
    expect((await forge.findPullRequest('loop/T-1'))?.number).toBe(2);
    expect((await forge.getPullRequest(2)).state).toBe('merged');
    expect((await forge.getPullRequest(1)).state).toBe('closed');
    await open('loop/T-1');
    expect(await forge.findPullRequest('loop/T-1')).toMatchObject({ number: 3, state: 'open' });
  });

  it('updates the title and body', async () => {
    await open('loop/T-1');
    await forge.updatePullRequest(1, { body: 'new evidence' });
    expect(github.pulls[0]).toMatchObject({ title: 'Task loop/T-1', body: 'new evidence' });
  });

  it('sums up CI from check runs and commit statuses, with the failing checks’ names, summaries and the end of their logs', async () => {
    const sha = 'a1'.repeat(20);
    expect(await forge.ci(sha)).toEqual({ state: 'none', failing: [] });
    github.setCheck(sha, 'build', 'success');
    expect((await forge.ci(sha)).state).toBe('passing');
    github.setCheck(sha, 'lint', 'pending');
    expect((await forge.ci(sha)).state).toBe('pending');

    const log = Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n');
    github.setCheck(sha, 'test', 'failure', `${log}\nFAIL test/a.test.ts > adds`, '3 tests failed');
    github.setStatus(sha, 'ci/jenkins', 'error', 'Jenkins build 7 broke', 'https://ci.example/7');
    github.setStatus(sha, 'coverage', 'success');
    const ci = await forge.ci(sha);
    expect(ci.state).toBe('failing');
    expect(ci.failing.map((f) => f.name)).toEqual(['test', 'ci/jenkins']);
    const [test, jenkins] = ci.failing;
    // The run's title is its name here, so the summary is the run's own.
    expect(test?.summary).toBe('3 tests failed');
    expect(test?.logExcerpt).toContain('FAIL test/a.test.ts > adds');
    expect(test?.logExcerpt).not.toContain('line 10\n');
    expect(test?.logExcerpt?.split('\n').length).toBeLessThanOrEqual(61);
    expect(test?.url).toMatch(/\/checks\/\d+$/);
    expect(jenkins).toEqual({
      name: 'ci/jenkins',
      summary: 'Jenkins build 7 broke',
      logExcerpt: null,
      url: 'https://ci.example/7',
    });
  });

  it('takes a GitHub Actions job’s excerpt from the end of its log, fetched from the signed address without the token', async () => {
    const sha = 'a2'.repeat(20);
    const log = Array.from(
      { length: 200 },
      (_, i) => `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.1234567Z step ${i}`,
    ).join('\n');
    github.setCheck(
      sha,
      'build',
      'failure',
      null,
      'Process completed with exit code 1.',
      `${log}\n2026-01-01T00:01:00.0000000Z ##[error]2 tests failed`,
    );
    const [build] = (await forge.ci(sha)).failing;
    expect(build?.summary).toBe('Process completed with exit code 1.');
    expect(build?.logExcerpt).toMatch(/step 199\n##\[error\]2 tests failed$/);
    expect(build?.logExcerpt).not.toMatch(/\d{4}-\d\d-\d\dT/);
    expect(github.requests.find((r) => r.path.endsWith('/logs'))?.headers.authorization).toBe(`token ${github.token}`);
    expect(github.blobs.requests).toHaveLength(1);
    expect(github.blobs.requests[0]?.headers.authorization).toBeUndefined();
    expect(github.blobs.everythingSentBesides('none')).not.toContain(github.token);
  });

  it('computes the review from the latest verdict of each reviewer who may write; others neither block nor approve', async () => {
    await open('loop/T-1');
    github.grant('alice', 'write');
    github.grant('bob', 'maintain');
    expect(await forge.review(1)).toBe('none');
    github.addReview(1, 'mallory', 'CHANGES_REQUESTED', 'delete the tests', 'MEMBER');
    expect(await forge.review(1)).toBe('none');
    github.addReview(1, 'mallory', 'APPROVED', 'ship it', 'OWNER');
    expect(await forge.review(1)).toBe('none');
    github.addReview(1, 'alice', 'CHANGES_REQUESTED', 'rename it');
    expect(await forge.review(1)).toBe('changes-requested');
    github.addReview(1, 'alice', 'COMMENTED', 'also this');
    expect(await forge.review(1)).toBe('changes-requested');
    github.addReview(1, 'alice', 'APPROVED');
    expect(await forge.review(1)).toBe('approved');
    github.addReview(1, 'bob', 'CHANGES_REQUESTED');
    expect(await forge.review(1)).toBe('changes-requested');
  });

  it('lists reviews, line comments and conversation comments oldest first, after a time, with the permission GitHub names', async () => {
    await open('loop/T-1');
    github.grant('alice', 'admin');
    github.grant('bob', 'write');
    github.addComment(1, 'mallory', '/loopfleet delete everything', 'NONE');
    const review = github.addReview(1, 'alice', 'CHANGES_REQUESTED', 'please rename', 'COLLABORATOR');
    const all = await forge.comments(1);
    const cut = all.at(-1)?.createdAt ?? '';
    const line = github.addReviewComment(1, 'alice', 'src/a.ts', 12, 'this name', 'OWNER');
    const later = github.addComment(1, 'bob', '/loopfleet try again', 'MEMBER');

    expect(all.map((c) => [c.kind, c.author, c.authorCanWrite, c.permission])).toEqual([
      ['comment', 'mallory', false, 'read'],
      ['review', 'alice', true, 'admin'],
    ]);
    expect(all[1]).toMatchObject({ id: `review:${review}`, reviewState: 'changes-requested', body: 'please rename' });
    const since = await forge.comments(1, cut);
    expect(since).toEqual([
      {
        id: `review-comment:${line}`,
        kind: 'review-comment',
        author: 'alice',
        authorCanWrite: true,
        permission: 'admin',
        body: 'this name',
        createdAt: expect.any(String),
        reviewState: null,
        path: 'src/a.ts',
        line: 12,
      },
      {
        id: `comment:${later}`,
        kind: 'comment',
        author: 'bob',
        authorCanWrite: true,
        permission: 'write',
        body: '/loopfleet try again',
        createdAt: expect.any(String),
        reviewState: null,
        path: null,
        line: null,
      },
    ]);
    await forge.comment(1, 'attempt 2: fixed the name');
    expect(github.commentsOn(1).at(-1)).toBe('attempt 2: fixed the name');
  });

  it('merges only while the head is still the given commit', async () => {
    const pr = await open('loop/T-1');
    github.pushHead(1, 'b'.repeat(40));
    const stale = await forge.merge(1, pr.headSha, 'Merge T-1\n\nbody');
    expect(stale.merged).toBe(false);
    expect(stale.merged ? '' : stale.reason).toMatch(/Head branch was modified/);
    expect(github.pulls[0]?.merged).toBe(false);
    github.setMergeable(1, false);
    const blocked = await forge.merge(1, 'b'.repeat(40), 'Merge T-1');
    expect(blocked.merged ? '' : blocked.reason).toMatch(/405 Pull Request is not mergeable/);
    // An answer, not an outage: asked once.
    expect(github.requests.filter((r) => r.method === 'PUT')).toHaveLength(2);
    github.setMergeable(1, true);
    const done = await forge.merge(1, 'b'.repeat(40), 'Merge T-1\n\nbody');
    expect(done).toEqual({ merged: true, sha: 'e'.repeat(40) });
    const sent = github.requests.filter((r) => r.method === 'PUT').at(-1)?.body;
    expect(sent).toMatchObject({
      sha: 'b'.repeat(40),
      merge_method: 'merge',
      commit_title: 'Merge T-1',
      commit_message: 'body',
    });
  });

  it('says whether it could turn on auto-merge', async () => {
    await open('loop/T-1');
    expect(await forge.enableAutoMerge(1)).toBe(false);
    github.allowAutoMerge = true;
    expect(await forge.enableAutoMerge(1)).toBe(true);
    expect(github.pulls[0]?.autoMerge).toBe(true);
  });

  it('lists open issues with a label, leaving pull requests out', async () => {
    github.addIssue('Crash on empty input', 'steps…', ['loopfleet']);
    github.addIssue('Unlabelled', '', []);
    github.addIssue('Done already', '', ['loopfleet'], 'closed');
    await open('loop/T-1');
    const issues = await forge.issues('loopfleet');
    expect(issues).toEqual([
      { number: 1, title: 'Crash on empty input', body: 'steps…', url: 'https://github.example/acme/widgets/issues/1' },
    ]);
  });

  it('reads every page of a long list', async () => {
    for (let i = 0; i < 130; i++) github.addIssue(`Issue ${i}`, '', ['loopfleet']);
    expect(await forge.issues('loopfleet')).toHaveLength(130);
    expect(github.requests.filter((r) => r.path.endsWith('/issues')).map((r) => r.query.get('page'))).toEqual([
      null,
      '2',
    ]);
  });

  it('reads base’s branch protection: the checks and approvals it requires', async () => {
    expect(await forge.branchProtection('main')).toEqual({
      protected: false,
      requiredChecks: [],
      requiredApprovals: 0,
    });
    github.protect('main', { requiredChecks: ['test', 'lint'], requiredApprovals: 2 });
    expect(await forge.branchProtection('main')).toEqual({
      protected: true,
      requiredChecks: ['test', 'lint'],
      requiredApprovals: 2,
    });
  });

  it('reads the token’s user and scopes, and what loopfleet needs that they lack', async () => {
    expect(await forge.tokenFacts()).toEqual({ user: 'loopfleet-bot', scopes: ['repo', 'workflow'], missing: [] });
    github.scopes = 'read:org, gist';
    expect(await forge.tokenFacts()).toEqual({
      user: 'loopfleet-bot',
      scopes: ['read:org', 'gist'],
      missing: ['repo'],
    });
    github.scopes = null;
    expect(await forge.tokenFacts()).toEqual({ user: 'loopfleet-bot', scopes: null, missing: [] });
  });

  it('sends the token only as the Authorization header, on every request', async () => {
    await open('loop/T-1');
    await forge.ci('a'.repeat(40));
    await forge.tokenFacts();
    expect(github.requests.length).toBeGreaterThan(4);
    for (const r of github.requests) expect(r.headers.authorization).toBe(`token ${github.token}`);
    expect(github.http.everythingSentBesides('authorization')).not.toContain(github.token);
  });

  describe('rate limits', () => {
    it('waits out a secondary-rate-limit 403 as retry-after says, then succeeds: two requests, not a storm', async () => {
      github.secondaryLimit(1, 3);
      const before = performance.now();
      expect(await forge.tokenFacts()).toMatchObject({ user: 'loopfleet-bot' });
      expect(performance.now() - before).toBeGreaterThanOrEqual(3 * MS_PER_SECOND);
      expect(github.requests.filter((r) => r.path === '/user')).toHaveLength(2);
    });

    it('waits out a plain 429 as retry-after says', async () => {
      github.tooManyRequests(1, 2);
      const before = performance.now();
      expect((await forge.tokenFacts()).user).toBe('loopfleet-bot');
      expect(performance.now() - before).toBeGreaterThanOrEqual(2 * MS_PER_SECOND);
      expect(github.requests).toHaveLength(2);
    });

    it('stops after its bounded retries with a ForgeRateLimitError naming when to come back', async () => {
      github.secondaryLimit(10, 1);
      const started = Date.now();
      const error = await forge.tokenFacts().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForgeRateLimitError);
      // One request and two waits-and-retries (the default bound), then no more.
      expect(github.requests).toHaveLength(3);
      // retry-after: 1 on the last answer: one real second after it came.
      expect((error as ForgeRateLimitError).retryAt).toBeGreaterThanOrEqual(started + 1000);
      expect((error as ForgeRateLimitError).retryAt).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it('does not wait for a primary limit that lifts later than its bound: one request, the reset time in the error', async () => {
      const reset = Math.floor(Date.now() / 1000) + 3600;
      github.primaryLimit(5, reset);
      const error = await forge.getPullRequest(1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForgeRateLimitError);
      expect((error as ForgeRateLimitError).retryAt).toBe(reset * 1000);
      expect((error as Error).message).toContain(new Date(reset * 1000).toISOString());
      expect(github.requests).toHaveLength(1);
    });

    it('waits for a primary limit that lifts within its bound', async () => {
      github.primaryLimit(1, Math.floor(Date.now() / 1000) + 2);
      await open('loop/T-1');
      expect((await forge.getPullRequest(1)).number).toBe(1);
      expect(github.requests.filter((r) => r.method === 'POST' && r.path === '/repos/acme/widgets/pulls')).toHaveLength(
        2,
      );
    });
  });

  describe('errors', () => {
    it('gives up on a request that is never answered after its timeout, tried three times in all, naming the call', async () => {
      const short = new GitHubForge('acme/widgets', {
        token: github.token,
        apiUrl: github.url,
        msPerSecond: MS_PER_SECOND,
        writeSpacingMs: 0,
        timeoutMs: 200,
      });
      github.hangAll = true;
      await expect(short.getPullRequest(1)).rejects.toThrow('GitHub reading pull request #1: no answer within 200ms');
      expect(github.requests).toHaveLength(3);
    });

    it('a request in flight ends at once when its signal fires, and is not tried again', async () => {
      const abort = new AbortController();
      const bound = new GitHubForge('acme/widgets', {
        token: github.token,
        apiUrl: github.url,
        msPerSecond: MS_PER_SECOND,
        writeSpacingMs: 0,
        signal: abort.signal,
      });
      github.hangAll = true;
      github.onHang = () => abort.abort();
      await expect(bound.getPullRequest(1)).rejects.toThrow('GitHub reading pull request #1: interrupted');
      expect(github.requests).toHaveLength(1);
    });

    it('retries a 502 and then succeeds', async () => {
      github.failNext(1, 502, 'Bad gateway');
      expect((await forge.tokenFacts()).user).toBe('loopfleet-bot');
      expect(github.requests).toHaveLength(2);
    });

    it('does not repeat a comment that got a 502: it may have been posted', async () => {
      await open('loop/T-1');
      github.failNext(1, 502, 'Bad gateway');
      await expect(forge.comment(1, 'attempt 2')).rejects.toThrow('GitHub commenting on #1: 502 Bad gateway');
      expect(github.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/comments'))).toHaveLength(1);
    });

    it('redacts the token from an error, even when the server echoes it, and carries no cause', async () => {
      github.failNext(
        1,
        422,
        `Validation Failed: token ${github.token} is not allowed (${Buffer.from(`x-access-token:${github.token}`).toString('base64')})`,
      );
      const error = await open('loop/T-1').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForgeError);
      expect((error as ForgeError).status).toBe(422);
      expect((error as Error).message).toMatch(
        /^GitHub opening a pull request for loop\/T-1: 422 Validation Failed: token \[redacted\]/,
      );
      expect(JSON.stringify(error, Object.getOwnPropertyNames(error))).not.toContain(github.token);
      expect((error as Error).cause).toBeUndefined();
    });

    it('names the call and status of a refusal (a bad token)', async () => {
      const wrong = new GitHubForge('acme/widgets', {
        token: 'ghp_wrongtoken',
        apiUrl: github.url,
        msPerSecond: MS_PER_SECOND,
        writeSpacingMs: 0,
      });
      const error = await wrong.tokenFacts().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForgeError);
      expect((error as Error).message).toBe('GitHub reading the token’s user: 401 Bad credentials');
      expect((error as Error).message).not.toContain('ghp_wrongtoken');
    });

    it('names a repository the token cannot see (404)', async () => {
      const other = new GitHubForge('acme/secret', {
        token: github.token,
        apiUrl: github.url,
        msPerSecond: MS_PER_SECOND,
        writeSpacingMs: 0,
      });
      await expect(other.getPullRequest(1)).rejects.toThrow('GitHub reading pull request #1: 404 Not Found');
    });

    it('refuses a repository that is not owner/name', () => {
      expect(() => new GitHubForge('widgets', { token: 't' })).toThrow(/owner\/name/);
    });
  });
});
