import { ForgeError } from '../../ports/forge.js';
import type { IssueList, TrackerIssue } from '../../ports/tracker.js';
import type { GitLabClient, GitLabResponse } from '../forge/gitlab-client.js';

/**
 * The open issues of a GitLab project carrying a label, newest first, at most `maxPages` pages of 100.
 *
 * GitLab's REST API answers lists without honouring `If-None-Match`, so a later read asks only for the
 * project's issues `updated_after` the newest one seen (an issue labelled, unlabelled, closed or edited is
 * updated; the bound is inclusive, and an issue whose `updated_at` did not move is no change) and folds them
 * into the last list: a quiet project costs one request of an empty page. The first read, and any read after
 * a truncated one or a change larger than `maxPages` pages, lists the labelled open issues again.
 */

export interface RawIssue {
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

interface Kept {
  label: string;
  issues: Map<number, { issue: TrackerIssue; updatedAt: string }>;
  since: string;
  truncated: boolean;
}

export class GitLabIssueList {
  readonly #client: GitLabClient;
  readonly #project: string;
  readonly #issueOf: (raw: RawIssue) => TrackerIssue;
  #kept: Kept | null = null;

  constructor(client: GitLabClient, project: string, issueOf: (raw: RawIssue) => TrackerIssue) {
    this.#client = client;
    this.#project = project;
    this.#issueOf = issueOf;
  }

  async read(label: string, maxPages: number): Promise<IssueList> {
    // Without a time to read from (no issue was listed yet) the labelled issues are listed again.
    const kept = this.#kept?.label === label && !this.#kept.truncated && this.#kept.since !== '' ? this.#kept : null;
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

/** Whether GitLab names a page after this one: `x-next-page` (empty on the last), else the `link` header. */
export function hasNext(answer: GitLabResponse<unknown>): boolean {
  const next = answer.headers.get('x-next-page');
  if (next !== null) return next.trim() !== '';
  return /\brel="?next"?/.test(answer.headers.get('link') ?? '');
}
