import { ForgeError } from '../../ports/forge.js';
import type { IssueList, StatusComment, TrackerIssue, TrackerPermission, TrackerPort } from '../../ports/tracker.js';
import { GitLabClient, type GitLabClientOptions, type GitLabResponse } from '../forge/gitlab-client.js';
import { GitLabMembers } from '../forge/gitlab-members.js';

/**
 * TrackerPort on GitLab issues through the forge's REST client ({@link GitLabClient}: the token only as
 * `PRIVATE-TOKEN`, 429 and `Retry-After` waited out within bounds, a 5xx retried except for a POST, the
 * token redacted). Who labelled an issue comes from its resource label events, who may ask from the members
 * API ({@link GitLabMembers}: Developer, level 30, or higher); the status note is edited in place
 * (`PUT …/issues/:iid/notes/:id`); the labels move in one `PUT …/issues/:iid` with `add_labels` and
 * `remove_labels`, which never closes the issue.
 *
 * GitLab's REST API answers lists without honouring `If-None-Match`, so a later read asks only for the
 * project's issues `updated_after` the newest one seen (an issue labelled, unlabelled, closed or edited is
 * updated) and folds them into the last list: a quiet project costs one request of an empty page. The first
 * read, and any read after a truncated one or a change larger than `maxPages` pages, lists the labelled
 * open issues again, newest first.
 */

/** Pages of label events or notes read per issue: the label and the status note are found among them. */
const PAGES_PER_ISSUE = 3;

interface RawIssue {
  iid: number;
  project_id?: number;
  title: string;
  description?: string | null;
  web_url: string;
  state: string;
  labels?: string[];
  updated_at?: string;
  author?: { id?: number; username?: string } | null;
}

interface RawNote {
  id: number;
  body?: string;
  system?: boolean;
  author?: { id?: number; username?: string } | null;
}

interface Kept {
  label: string;
  issues: Map<number, { issue: TrackerIssue; updatedAt: string }>;
  since: string;
  truncated: boolean;
}

export class GitLabTracker implements TrackerPort {
  readonly type = 'gitlab' as const;
  readonly repo: string;
  readonly #client: GitLabClient;
  readonly #project: string;
  readonly #members: GitLabMembers;
  /** user names to ids, from what GitLab said (authors, label events, `/user`), so few lookups are needed */
  readonly #ids = new Map<string, number>();
  /** the issue each of this tracker's notes is on: GitLab edits a note through its issue */
  readonly #noteIssue = new Map<number, number>();
  #projectId: number | null = null;
  #kept: Kept | null = null;
  #self: Promise<{ id: number; username: string }> | null = null;

  constructor(repo: string, options: GitLabClientOptions) {
    if (!/^[^/\s]+(\/[^/\s]+)+$/.test(repo))
      throw new ForgeError(`GitLab project must be group/…/project, not ${JSON.stringify(repo)}`, null);
    this.repo = repo;
    this.#client = new GitLabClient(options);
    this.#project = `/projects/${encodeURIComponent(repo)}`;
    this.#members = new GitLabMembers(this.#client, this.#project);
  }

  async issues(label: string, maxPages: number): Promise<IssueList> {
    const kept = this.#kept?.label === label && !this.#kept.truncated ? this.#kept : null;
    if (kept !== null) {
      const delta = await this.#pages('listing the issues updated lately', '/issues', maxPages, {
        updated_after: kept.since,
        order_by: 'updated_at',
        sort: 'desc',
      });
      if (!delta.truncated) return this.#fold(kept, delta.items);
    }
    const all = await this.#pages(`listing issues labelled ${label}`, '/issues', maxPages, {
      labels: label,
      state: 'opened',
      order_by: 'created_at',
      sort: 'desc',
    });
    const issues = new Map<number, { issue: TrackerIssue; updatedAt: string }>();
    for (const raw of all.items) issues.set(raw.iid, { issue: this.#issueOf(raw), updatedAt: raw.updated_at ?? '' });
    this.#kept = { label, issues, since: newest(all.items, ''), truncated: all.truncated };
    return { issues: listOf(issues), changed: true, truncated: all.truncated };
  }

  /** The issues updated since the last read, folded in: those still open and labelled stay, the rest go. */
  #fold(kept: Kept, updated: RawIssue[]): IssueList {
    let changed = false;
    for (const raw of updated) {
      const before = kept.issues.get(raw.iid);
      if (before !== undefined && before.updatedAt === raw.updated_at) continue;
      if (raw.state === 'opened' && (raw.labels ?? []).includes(kept.label)) {
        kept.issues.set(raw.iid, { issue: this.#issueOf(raw), updatedAt: raw.updated_at ?? '' });
        changed = true;
      } else if (before !== undefined) {
        kept.issues.delete(raw.iid);
        changed = true;
      }
    }
    kept.since = newest(updated, kept.since);
    return { issues: listOf(kept.issues), changed, truncated: false };
  }

  /** At most `maxPages` pages of a project list; `truncated` when GitLab names a page after the last read. */
  async #pages(
    what: string,
    path: string,
    maxPages: number,
    query: Record<string, string>,
  ): Promise<{ items: RawIssue[]; truncated: boolean }> {
    const items: RawIssue[] = [];
    for (let page = 1; page <= maxPages; page++) {
      const answer = await this.#client.request<RawIssue[]>(what, 'GET', `${this.#project}${path}`, {
        query: { ...query, per_page: 100, page },
      });
      if (!Array.isArray(answer.data)) throw new ForgeError(`GitLab ${what}: the answer is not a list`, null);
      items.push(...answer.data);
      if (!hasNext(answer)) return { items, truncated: false };
    }
    return { items, truncated: true };
  }

  /**
   * The label events come oldest first: the newest pages are read, from the last backwards (at most
   * {@link PAGES_PER_ISSUE}), so a long history cannot hide who labelled it last.
   */
  async labelledBy(number: number, label: string): Promise<string | null> {
    type Event = {
      action?: string;
      label?: { name?: string } | null;
      user?: { id?: number; username?: string } | null;
    };
    const page = (n: number) =>
      this.#client.request<Event[]>(
        `reading the label events of issue #${number}`,
        'GET',
        `${this.#project}/issues/${number}/resource_label_events`,
        { query: { per_page: 100, page: n } },
      );
    const first = await page(1);
    const last = lastPage(first);
    for (let n = last, read = 0; n >= 1 && read < PAGES_PER_ISSUE; n--, read++) {
      const events = (n === 1 ? first : await page(n)).data;
      for (const e of [...events].reverse()) {
        if (e.label?.name !== label) continue;
        if (e.action === 'remove') return null;
        if (e.action !== 'add' || typeof e.user?.username !== 'string') return null;
        this.#learn(e.user);
        return e.user.username;
      }
    }
    return null;
  }

  async permission(login: string): Promise<TrackerPermission> {
    if (login === '') return { canWrite: false, permission: 'none' };
    const id = this.#ids.get(login.toLowerCase()) ?? (await this.#userId(login));
    if (id === null) return { canWrite: false, permission: 'none' };
    return this.#members.of(id, login);
  }

  async blockers(number: number): Promise<number[]> {
    type Linked = { iid?: number; project_id?: number; state?: string; link_type?: string };
    const { data } = await this.#client.request<Linked[]>(
      `reading the links of issue #${number}`,
      'GET',
      `${this.#project}/issues/${number}/links`,
    );
    const out = new Set<number>();
    for (const i of Array.isArray(data) ? data : []) {
      // Only this project's issues: an iid names another issue in another project.
      const here = this.#projectId === null || i.project_id === this.#projectId;
      if (i.link_type === 'is_blocked_by' && i.state === 'opened' && here && Number.isInteger(i.iid))
        out.add(i.iid as number);
    }
    return [...out].sort((a, b) => a - b);
  }

  async relabel(number: number, add: readonly string[], remove: readonly string[]): Promise<void> {
    if (add.length === 0 && remove.length === 0) return;
    // GitLab ignores a label already there or already gone; a label it does not know yet it creates.
    await this.#client.request(`labelling issue #${number}`, 'PUT', `${this.#project}/issues/${number}`, {
      body: {
        ...(add.length > 0 ? { add_labels: add.join(',') } : {}),
        ...(remove.length > 0 ? { remove_labels: remove.join(',') } : {}),
      },
    });
  }

  async findComment(number: number, marker: string): Promise<StatusComment | null> {
    const self = await this.#login();
    for (let page = 1; page <= PAGES_PER_ISSUE; page++) {
      const answer = await this.#client.request<RawNote[]>(
        `reading the notes of issue #${number}`,
        'GET',
        `${this.#project}/issues/${number}/notes`,
        { query: { sort: 'asc', order_by: 'created_at', per_page: 100, page } },
      );
      // Only loopfleet's own note: a marker anyone else wrote is text, not the status note.
      const mine = answer.data.find(
        (n) => n.system !== true && n.author?.id === self.id && (n.body ?? '').startsWith(marker),
      );
      if (mine !== undefined) {
        this.#noteIssue.set(mine.id, number);
        return { id: mine.id, body: mine.body ?? '' };
      }
      if (!hasNext(answer)) break;
    }
    return null;
  }

  async createComment(number: number, body: string): Promise<StatusComment> {
    // A POST is never repeated by the client: a 5xx may have posted it.
    const { data } = await this.#client.request<RawNote>(
      `commenting on issue #${number}`,
      'POST',
      `${this.#project}/issues/${number}/notes`,
      { body: { body } },
    );
    this.#noteIssue.set(data.id, number);
    return { id: data.id, body };
  }

  async editComment(id: number, body: string): Promise<void> {
    const issue = this.#noteIssue.get(id);
    if (issue === undefined) throw new ForgeError(`GitLab note ${id}: not a status note this tracker found`, null);
    await this.#client.request(`editing note ${id}`, 'PUT', `${this.#project}/issues/${issue}/notes/${id}`, {
      body: { body },
    });
  }

  async self(): Promise<string> {
    return (await this.#login()).username;
  }

  async hasLabel(label: string): Promise<boolean> {
    const { status } = await this.#client.request(
      `reading the label ${label}`,
      'GET',
      `${this.#project}/labels/${encodeURIComponent(label)}`,
      { accept: [404] },
    );
    return status === 200;
  }

  #login(): Promise<{ id: number; username: string }> {
    this.#self ??= this.#client
      .request<{ id: number; username: string }>('reading the token’s user', 'GET', '/user')
      .then(({ data }) => {
        this.#learn(data);
        return { id: data.id, username: data.username };
      });
    // The caller still gets the failure; this branch only forgets it, so the next call asks again.
    this.#self.catch(() => (this.#self = null));
    return this.#self;
  }

  async #userId(username: string): Promise<number | null> {
    const { data } = await this.#client.request<{ id: number; username: string }[]>(
      `finding the user ${username}`,
      'GET',
      '/users',
      { query: { username } },
    );
    const user = (Array.isArray(data) ? data : []).find((u) => u.username.toLowerCase() === username.toLowerCase());
    if (user === undefined) return null;
    this.#learn(user);
    return user.id;
  }

  #learn(user: { id?: number; username?: string } | null | undefined): void {
    if (typeof user?.id === 'number' && typeof user.username === 'string')
      this.#ids.set(user.username.toLowerCase(), user.id);
  }

  #issueOf(raw: RawIssue): TrackerIssue {
    if (typeof raw.project_id === 'number') this.#projectId ??= raw.project_id;
    this.#learn(raw.author);
    return {
      number: raw.iid,
      title: raw.title,
      body: raw.description ?? '',
      url: raw.web_url,
      author: raw.author?.username ?? '',
      labels: raw.labels ?? [],
    };
  }
}

/** Whether GitLab names a page after this one: `x-next-page` (empty on the last), else the `link` header. */
function hasNext(answer: GitLabResponse<unknown>): boolean {
  const next = answer.headers.get('x-next-page');
  if (next !== null) return next.trim() !== '';
  return /\brel="?next"?/.test(answer.headers.get('link') ?? '');
}

/** The last page's number: `x-total-pages` (absent beyond 10,000 rows), else the `link` header's `last`. */
function lastPage(answer: GitLabResponse<unknown>): number {
  const total = Number(answer.headers.get('x-total-pages') ?? '');
  if (Number.isInteger(total) && total >= 1) return total;
  const link = /[?&]page=(\d+)[^>]*>\s*;\s*rel="?last"?/.exec(answer.headers.get('link') ?? '');
  return Number(link?.[1] ?? '1');
}

/** The latest `updated_at` among `items` and `since`, as GitLab wrote it (compared as times, not as text). */
function newest(items: readonly RawIssue[], since: string): string {
  let out = since;
  for (const i of items) {
    const at = Date.parse(i.updated_at ?? '');
    if (Number.isFinite(at) && (out === '' || at > Date.parse(out))) out = i.updated_at as string;
  }
  return out;
}

/** The kept issues newest first, as the first read listed them. */
function listOf(issues: Map<number, { issue: TrackerIssue }>): TrackerIssue[] {
  return [...issues.values()].map((k) => k.issue).sort((a, b) => b.number - a.number);
}
