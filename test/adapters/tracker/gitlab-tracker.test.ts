import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GitLabTracker } from '../../../src/adapters/tracker/gitlab-tracker.js';
import { ForgeError, ForgeRateLimitError } from '../../../src/ports/forge.js';
import { FakeGitLab } from '../../helpers/fake-gitlab.js';

/**
 * The GitLab tracker adapter against the loopback GitLab: the capped, newest-first list and the reads of
 * what changed since, who labelled an issue and whether they may ask, blocking links, the one status note,
 * rate limits and outages waited out within bounds, never a note posted twice.
 */

const PROJECT = 'acme/platform/widgets';
let gitlab: FakeGitLab;
let first = 0;

beforeAll(async () => {
  gitlab = await new FakeGitLab(PROJECT).start();
  gitlab.addUser('dana', 30);
  gitlab.addUser('rita', 20);
  for (let i = 0; i < 230; i++) gitlab.addIssue(`Issue ${i}`, '', ['loopfleet'], 'opened', { author: 'dana' });
  first = gitlab.issues.length;
});
afterAll(() => gitlab.close());

const tracker = () =>
  new GitLabTracker(PROJECT, { token: gitlab.token, apiUrl: gitlab.url, msPerSecond: 1, maxWaitSeconds: 5 });
const listReads = () => gitlab.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`${PROJECT}/issues`));

let t: GitLabTracker;
beforeEach(() => {
  t = tracker();
});

describe('GitLabTracker', () => {
  it('reads at most `pages` pages, newest first, and says the list is truncated', async () => {
    const list = await t.issues('loopfleet', 2);
    expect(list.issues).toHaveLength(200);
    expect(list.issues[0]?.number).toBe(first);
    expect(list).toMatchObject({ changed: true, truncated: true });
    const asked = listReads().at(-1)!.query;
    expect(Object.fromEntries(asked)).toMatchObject({
      labels: 'loopfleet',
      state: 'opened',
      order_by: 'created_at',
      sort: 'desc',
      per_page: '100',
    });
  });

  it('then asks only for what changed since, and folds labels, closes and new issues in', async () => {
    const all = await t.issues('loopfleet', 3);
    expect(all).toMatchObject({ changed: true, truncated: false });
    expect(all.issues).toHaveLength(230);
    const quiet = await t.issues('loopfleet', 3);
    expect(quiet.changed).toBe(false);
    expect(quiet.issues).toHaveLength(230);
    const since = listReads().at(-1)!.query;
    expect(since.get('updated_after')).toBe(gitlab.issue(first).updatedAt);
    expect(since.has('labels')).toBe(false);

    gitlab.relabelIssue(5, 'dana', [], ['loopfleet']);
    gitlab.issue(6).state = 'closed';
    gitlab.issue(6).updatedAt = gitlab.tick();
    const added = gitlab.addIssue('Newest', 'body', ['loopfleet'], 'opened', { author: 'rita' });
    const after = await t.issues('loopfleet', 3);
    expect(after.changed).toBe(true);
    expect(after.issues.map((i) => i.number)).not.toContain(5);
    expect(after.issues.map((i) => i.number)).not.toContain(6);
    expect(after.issues[0]).toMatchObject({ number: added, title: 'Newest', author: 'rita', body: 'body' });
    expect(after.issues).toHaveLength(229);
    // An issue labelled again comes back.
    gitlab.relabelIssue(5, 'dana', ['loopfleet'], []);
    expect((await t.issues('loopfleet', 3)).issues.map((i) => i.number)).toContain(5);
  });

  it('lists again while no issue carries the label, never asking for updates after no time', async () => {
    expect((await t.issues('unused-label', 1)).issues).toEqual([]);
    expect((await t.issues('unused-label', 1)).issues).toEqual([]);
    const last = listReads().at(-1)!.query;
    expect([last.get('labels'), last.has('updated_after')]).toEqual(['unused-label', false]);
  });

  it('names who last put the label on, and asks the members API whether they may write', async () => {
    const n = gitlab.addIssue('Labelled twice', '', [], 'opened', { author: 'rita' });
    gitlab.relabelIssue(n, 'rita', ['loopfleet'], []);
    gitlab.relabelIssue(n, 'rita', [], ['loopfleet']);
    gitlab.relabelIssue(n, 'dana', ['loopfleet'], []);
    expect(await t.labelledBy(n, 'loopfleet')).toBe('dana');
    gitlab.relabelIssue(n, 'dana', [], ['loopfleet']);
    expect(await t.labelledBy(n, 'loopfleet')).toBeNull();
    // A long history: the newest page of events names who labelled it last.
    const long = gitlab.addIssue('Long history', '', ['loopfleet'], 'opened', { author: 'rita' });
    for (let i = 0; i < 120; i++) gitlab.relabelIssue(long, 'rita', [`noise-${i}`], []);
    gitlab.relabelIssue(long, 'rita', [], ['loopfleet']);
    gitlab.relabelIssue(long, 'dana', ['loopfleet'], []);
    expect(await t.labelledBy(long, 'loopfleet')).toBe('dana');
    const pages = gitlab.requests.filter((r) => r.path.endsWith(`/issues/${long}/resource_label_events`));
    expect(pages.map((r) => r.query.get('page'))).toEqual(['1', '2']);
    expect(await t.permission('dana')).toEqual({ canWrite: true, permission: 'Developer' });
    expect(await t.permission('rita')).toEqual({ canWrite: false, permission: 'Reporter' });
    expect(await t.permission('nobody-here')).toEqual({ canWrite: false, permission: 'none' });
  });

  it('takes only open blocking issues of its own project as blockers', async () => {
    const a = gitlab.addIssue('Blocker', '', ['loopfleet']);
    const b = gitlab.addIssue('Closed blocker', '', ['loopfleet'], 'closed');
    const c = gitlab.addIssue('Blocked', '', ['loopfleet']);
    gitlab.issue(c).blockedBy.push(a, b);
    // Issue #1 of another project blocks it too: an iid there names another issue than #1 here.
    gitlab.issue(c).blockedByElsewhere.push(1);
    expect(await t.blockers(c)).toEqual([a]);
    await t.issues('loopfleet', 1);
    expect(await t.blockers(c)).toEqual([a]);
    // The blocker sees a `blocks` link, which blocks nothing of its own.
    expect(await t.blockers(a)).toEqual([]);
  });

  it('keeps one status note: finds its own after a restart, never another user’s marker, edits it in place', async () => {
    const n = gitlab.addIssue('Noted', '', ['loopfleet']);
    const notes = gitlab.issue(n).notes;
    notes.push({
      id: gitlab.newId(),
      userId: gitlab.userIdOf('rita'),
      body: '<!-- m --> fake',
      system: false,
      createdAt: gitlab.tick(),
    });
    expect(await t.findComment(n, '<!-- m -->')).toBeNull();
    const made = await t.createComment(n, '<!-- m --> one');
    const again = tracker();
    const found = await again.findComment(n, '<!-- m -->');
    expect(found).toEqual({ id: made.id, body: '<!-- m --> one' });
    await again.editComment(made.id, '<!-- m --> two');
    expect(gitlab.issueNotesOn(n)).toEqual(['<!-- m --> fake', '<!-- m --> two']);
    await expect(tracker().editComment(made.id, 'x')).rejects.toThrow(/not a status note this tracker found/);
  });

  it('moves the state labels in one request and never closes the issue', async () => {
    const n = gitlab.addIssue('Labels', '', ['loopfleet', 'loopfleet:queued']);
    await t.relabel(n, ['loopfleet:running'], ['loopfleet:queued', 'loopfleet:failed']);
    expect(gitlab.issue(n)).toMatchObject({ labels: ['loopfleet', 'loopfleet:running'], state: 'opened' });
    const put = gitlab.requests.filter((r) => r.method === 'PUT').at(-1)!;
    expect(put.body).toEqual({ add_labels: 'loopfleet:running', remove_labels: 'loopfleet:queued,loopfleet:failed' });
    expect(await t.hasLabel('loopfleet')).toBe(true);
    expect(await t.hasLabel('no-such-label')).toBe(false);
    expect(await t.self()).toBe('loopfleet-bot');
  });

  it('waits out a rate limit and a 5xx on a read, within bounds, and never repeats a note after a 5xx', async () => {
    gitlab.rateLimit(1, { retryAfter: 2 });
    gitlab.failNext(1, 502, '502 Bad Gateway');
    expect((await t.issues('loopfleet', 1)).issues.length).toBeGreaterThan(0);
    gitlab.rateLimit(3, { retryAfter: 1 });
    await expect(t.issues('loopfleet', 1)).rejects.toBeInstanceOf(ForgeRateLimitError);
    gitlab.rateLimit(1, { retryAfter: 3600 });
    await expect(tracker().issues('loopfleet', 1)).rejects.toThrow(/rate limited until/);
    const n = gitlab.addIssue('Posting', '', ['loopfleet']);
    gitlab.failNext(1, 500, '500 Internal Server Error');
    const error = await t.createComment(n, 'once').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForgeError);
    expect(gitlab.requests.filter((r) => r.method === 'POST' && r.path.endsWith(`/issues/${n}/notes`))).toHaveLength(1);
    expect(String((error as Error).message)).not.toContain(gitlab.token);
  });
});
