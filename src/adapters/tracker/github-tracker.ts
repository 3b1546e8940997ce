import { ForgeError } from '../../ports/forge.js';
import type { IssueList, StatusComment, TrackerIssue, TrackerPermission, TrackerPort } from '../../ports/tracker.js';
import { type GitHubClientOptions, type GitHubOctokit, githubCall, githubOctokit } from '../forge/github-client.js';
import { GitHubPermissions } from '../forge/github-permissions.js';

/**
 * TrackerPort on GitHub Issues through the forge's Octokit client (GitHub's throttling, retries, timeouts
 * and the token's redaction: {@link githubCall}). The issue list is read with `If-None-Match`: GitHub
 * answers an unchanged list with a 304, which does not count against the rate limit, and the last list
 * stands. Who labelled an issue comes from its events (`labeled`, the actor), who may ask from the
 * collaborator permission API ({@link GitHubPermissions}), never from `author_association`.
 */

/** A create that got a 5xx may have been done (a comment posted twice): it is not repeated on a 5xx. */
const NOT_REPEATED = { retries: 0 };
/** Pages of events or comments read per issue: the label and the status comment are found among the first. */
const PAGES_PER_ISSUE = 3;

interface RawIssue {
  number: number;
  title: string;
  body?: string | null;
  html_url: string;
  user?: { login?: string } | null;
  labels?: Array<string | { name?: string }>;
  pull_request?: unknown;
  state?: string;
}

export class GitHubTracker implements TrackerPort {
  readonly type = 'github' as const;
  readonly repo: string;
  readonly #where: { owner: string; repo: string };
  readonly #options: GitHubClientOptions;
  readonly #octokit: GitHubOctokit;
  readonly #permissions: GitHubPermissions;
  #etag: { label: string; etag: string; list: IssueList } | null = null;
  #self: Promise<string> | null = null;

  constructor(repo: string, options: GitHubClientOptions) {
    const [owner, name, ...rest] = repo.split('/');
    if (owner === undefined || owner === '' || name === undefined || name === '' || rest.length > 0)
      throw new ForgeError(`GitHub repository must be owner/name, not ${JSON.stringify(repo)}`, null);
    this.repo = repo;
    this.#where = { owner, repo: name };
    this.#options = options;
    this.#octokit = githubOctokit(options);
    this.#permissions = new GitHubPermissions((what, call) => this.#call(what, call));
  }

  #call<T>(
    what: string,
    call: (octokit: GitHubOctokit, where: { owner: string; repo: string }) => Promise<T>,
  ): Promise<T> {
    return githubCall(what, this.#options, () => call(this.#octokit, this.#where));
  }

  async issues(label: string, maxPages: number): Promise<IssueList> {
    const kept = this.#etag?.label === label ? this.#etag : null;
    const issues: TrackerIssue[] = [];
    let etag: string | null = null;
    for (let page = 1; page <= maxPages; page++) {
      let answer: { data: RawIssue[]; headers: Record<string, unknown> };
      try {
        answer = await this.#call(`listing issues labelled ${label}`, (o, where) =>
          o.request('GET /repos/{owner}/{repo}/issues', {
            ...where,
            labels: label,
            state: 'open',
            sort: 'created',
            direction: 'desc',
            per_page: 100,
            page,
            ...(page === 1 && kept !== null ? { headers: { 'if-none-match': kept.etag } } : {}),
          }),
        );
      } catch (error) {
        if (page === 1 && kept !== null && error instanceof ForgeError && error.status === 304)
          return { ...kept.list, changed: false };
        throw error;
      }
      if (page === 1) etag = typeof answer.headers.etag === 'string' ? answer.headers.etag : null;
      for (const raw of answer.data) if (raw.pull_request === undefined) issues.push(issueOf(raw));
      const more = /\brel="next"/.test(String(answer.headers.link ?? ''));
      if (!more) return this.#keep(label, etag, { issues, changed: true, truncated: false });
      if (page === maxPages) return this.#keep(label, etag, { issues, changed: true, truncated: true });
    }
    return { issues, changed: true, truncated: false };
  }

  #keep(label: string, etag: string | null, list: IssueList): IssueList {
    this.#etag = etag === null ? null : { label, etag, list };
    return list;
  }

  /**
   * The issue's events come oldest first: the newest pages are read, from the last backwards (at most
   * {@link PAGES_PER_ISSUE}), so a long history cannot hide who labelled it last.
   */
  async labelledBy(number: number, label: string): Promise<string | null> {
    type Event = { event?: string; label?: { name?: string }; actor?: { login?: string } | null };
    const page = (n: number) =>
      this.#call(`reading the events of issue #${number}`, (o, where) =>
        o.request('GET /repos/{owner}/{repo}/issues/{issue_number}/events', {
          ...where,
          issue_number: number,
          per_page: 100,
          page: n,
        }),
      );
    const first = await page(1);
    const last = Number(/[?&]page=(\d+)[^>]*>;\s*rel="last"/.exec(String(first.headers.link ?? ''))?.[1] ?? '1');
    for (let n = last, read = 0; n >= 1 && read < PAGES_PER_ISSUE; n--, read++) {
      const events = (n === 1 ? first : await page(n)).data as Event[];
      for (const e of [...events].reverse()) {
        if (e.label?.name !== label) continue;
        if (e.event === 'unlabeled') return null;
        if (e.event === 'labeled') return typeof e.actor?.login === 'string' ? e.actor.login : null;
      }
    }
    return null;
  }

  permission(login: string): Promise<TrackerPermission> {
    return this.#permissions.of(login);
  }

  async blockers(number: number): Promise<number[]> {
    const out = new Set<number>();
    const lists: Array<[string, string]> = [
      ['its "blocked by" dependencies', 'GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by'],
      ['its sub-issues', 'GET /repos/{owner}/{repo}/issues/{issue_number}/sub_issues'],
    ];
    for (const [what, route] of lists) {
      let data: RawIssue[];
      try {
        ({ data } = (await this.#call(`reading ${what} of issue #${number}`, (o, where) =>
          o.request(route, { ...where, issue_number: number, per_page: 100 }),
        )) as { data: RawIssue[] });
      } catch (error) {
        // A GitHub without the feature (an older Enterprise Server) answers 404: the issue has none.
        if (error instanceof ForgeError && error.status === 404) continue;
        throw error;
      }
      for (const i of data) if (i.state !== 'closed' && Number.isInteger(i.number)) out.add(i.number);
    }
    return [...out].sort((a, b) => a - b);
  }

  async relabel(number: number, add: readonly string[], remove: readonly string[]): Promise<void> {
    if (add.length > 0)
      await this.#call(`labelling issue #${number}`, (o, where) =>
        o.rest.issues.addLabels({ ...where, issue_number: number, labels: [...add] }),
      );
    for (const name of remove) {
      try {
        await this.#call(`removing the label ${name} from issue #${number}`, (o, where) =>
          o.rest.issues.removeLabel({ ...where, issue_number: number, name }),
        );
      } catch (error) {
        // 404: the label is not on the issue, which is what was wanted.
        if (!(error instanceof ForgeError && error.status === 404)) throw error;
      }
    }
  }

  async findComment(number: number, marker: string): Promise<StatusComment | null> {
    const self = await this.#login();
    for (let page = 1; page <= PAGES_PER_ISSUE; page++) {
      const { data, headers } = await this.#call(`reading the comments of issue #${number}`, (o, where) =>
        o.rest.issues.listComments({ ...where, issue_number: number, per_page: 100, page }),
      );
      // Only loopfleet's own comment: a marker anyone else wrote is text, not the status comment.
      const mine = data.find((c) => c.user?.login === self && (c.body ?? '').startsWith(marker));
      if (mine !== undefined) return { id: mine.id, body: mine.body ?? '' };
      if (!/\brel="next"/.test(String(headers.link ?? ''))) break;
    }
    return null;
  }

  async createComment(number: number, body: string): Promise<StatusComment> {
    const { data } = await this.#call(`commenting on issue #${number}`, (o, where) =>
      o.rest.issues.createComment({ ...where, issue_number: number, body, request: NOT_REPEATED }),
    );
    return { id: data.id, body };
  }

  async editComment(id: StatusComment['id'], body: string): Promise<void> {
    await this.#call(`editing comment ${id}`, (o, where) =>
      o.rest.issues.updateComment({ ...where, comment_id: Number(id), body }),
    );
  }

  self(): Promise<string> {
    return this.#login();
  }

  async hasLabel(label: string): Promise<boolean> {
    try {
      await this.#call(`reading the label ${label}`, (o, where) => o.rest.issues.getLabel({ ...where, name: label }));
      return true;
    } catch (error) {
      if (error instanceof ForgeError && error.status === 404) return false;
      throw error;
    }
  }

  #login(): Promise<string> {
    this.#self ??= this.#call('reading the token’s user', (o) => o.rest.users.getAuthenticated()).then(
      ({ data }) => data.login,
    );
    // The caller still gets the failure; this branch only forgets it, so the next call asks again.
    this.#self.catch(() => (this.#self = null));
    return this.#self;
  }
}

function issueOf(raw: RawIssue): TrackerIssue {
  return {
    number: raw.number,
    title: raw.title,
    body: raw.body ?? '',
    url: raw.html_url,
    author: raw.user?.login ?? '',
    labels: (raw.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter((l) => l !== ''),
  };
}
