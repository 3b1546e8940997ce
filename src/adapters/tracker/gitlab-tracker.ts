import { ForgeError } from '../../ports/forge.js';
import type { IssueList, StatusComment, TrackerIssue, TrackerPermission, TrackerPort } from '../../ports/tracker.js';
import { GitLabClient, type GitLabClientOptions, type GitLabResponse } from '../forge/gitlab-client.js';
import { GitLabMembers } from '../forge/gitlab-members.js';
import { GitLabIssueList, hasNext, type RawIssue } from './gitlab-issue-list.js';

/**
 * TrackerPort on GitLab issues through the forge's REST client ({@link GitLabClient}: the token only as
 * `PRIVATE-TOKEN`, 429 and `Retry-After` waited out within bounds, a 5xx retried except for a POST, the
 * token redacted). Who labelled an issue comes from its resource label events, who may ask from the members
 * API ({@link GitLabMembers}: Developer, level 30, or higher); the status note is edited in place
 * (`PUT …/issues/:iid/notes/:id`); the labels move in one `PUT …/issues/:iid` with `add_labels` and
 * `remove_labels`, which never closes the issue. The labelled issues are read by {@link GitLabIssueList}.
 */

/** Pages of label events or notes read per issue: the label and the status note are found among them. */
const PAGES_PER_ISSUE = 3;

interface RawNote {
  id: number;
  body?: string;
  system?: boolean;
  author?: { id?: number; username?: string } | null;
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
  readonly #list: GitLabIssueList;
  #projectId: number | null = null;
  #self: Promise<{ id: number; username: string }> | null = null;

  constructor(repo: string, options: GitLabClientOptions) {
    if (!/^[^/\s]+(\/[^/\s]+)+$/.test(repo))
      throw new ForgeError(`GitLab project must be group/…/project, not ${JSON.stringify(repo)}`, null);
    this.repo = repo;
    this.#client = new GitLabClient(options);
    this.#project = `/projects/${encodeURIComponent(repo)}`;
    this.#members = new GitLabMembers(this.#client, this.#project);
    this.#list = new GitLabIssueList(this.#client, this.#project, (raw) => this.#issueOf(raw));
  }

  issues(label: string, maxPages: number): Promise<IssueList> {
    return this.#list.read(label, maxPages);
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
    const own = await this.#ownId();
    const out = new Set<number>();
    for (const i of Array.isArray(data) ? data : []) {
      // Only this project's issues: an iid names another issue in another project.
      if (i.link_type === 'is_blocked_by' && i.state === 'opened' && i.project_id === own && Number.isInteger(i.iid))
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

  async editComment(id: StatusComment['id'], body: string): Promise<void> {
    const issue = this.#noteIssue.get(Number(id));
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

  /** The project's numeric id: from the issues already listed, else asked once. */
  async #ownId(): Promise<number> {
    if (this.#projectId === null) {
      const { data } = await this.#client.request<{ id: number }>('reading the project', 'GET', this.#project);
      this.#projectId = data.id;
    }
    return this.#projectId;
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

/** The last page's number: `x-total-pages` (absent beyond 10,000 rows), else the `link` header's `last`. */
function lastPage(answer: GitLabResponse<unknown>): number {
  const total = Number(answer.headers.get('x-total-pages') ?? '');
  if (Number.isInteger(total) && total >= 1) return total;
  const link = /[?&]page=(\d+)[^>]*>\s*;\s*rel="?last"?/.exec(answer.headers.get('link') ?? '');
  return Number(link?.[1] ?? '1');
}
