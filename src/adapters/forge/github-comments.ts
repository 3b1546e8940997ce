import type { ForgeComment, ReviewState } from '../../ports/forge.js';
import type { GitHubCaller } from './github-ci.js';
import type { GitHubPermissions } from './github-permissions.js';
import { COMMENT_PAGES, reviewFromVerdicts } from './text.js';

/**
 * A pull request's reviews, line comments and conversation comments on GitHub, read newest first and capped.
 *
 * Invariants:
 * - one read of one list costs at most {@link MAX_PAGES} + 1 pages of {@link PER_PAGE}: line comments are
 *   asked newest first (`sort=created&direction=desc`); reviews and conversation comments have no such order
 *   on GitHub, so the first page's `link: rel="last"` names the last page and the newest pages are read
 *   from there backwards. 20,000 comments cost as much as 400;
 * - whether an author counts is their permission ({@link GitHubPermissions}), never `author_association`;
 * - the review state counts only the latest verdict of each person who may write.
 */

export const PER_PAGE = 100;
const MAX_PAGES = COMMENT_PAGES;

type Page<T> = { data: T[]; headers: { link?: string } };

/** The page number of `rel="last"` in a `link` header; 1 when there is none (a single page). */
function lastPage(link: string | undefined): number {
  for (const part of (link ?? '').split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="last"/.exec(part);
    if (match?.[1] !== undefined) return Number(new URL(match[1]).searchParams.get('page') ?? '1') || 1;
  }
  return 1;
}

/** The newest items of a list GitHub pages oldest first: page 1, then the last pages backwards; oldest first. */
async function newest<T>(read: (page: number) => Promise<Page<T>>): Promise<T[]> {
  const first = await read(1);
  const last = lastPage(first.headers.link);
  const from = Math.max(2, last - MAX_PAGES + 1);
  const later: T[][] = [];
  for (let page = last; page >= from; page--) later.unshift((await read(page)).data);
  return [...(from === 2 ? first.data : []), ...later.flat()];
}

type Verdict = 'approved' | 'changes-requested' | 'dismissed';

function verdictOf(state: string): Verdict | null {
  if (state === 'APPROVED') return 'approved';
  if (state === 'CHANGES_REQUESTED') return 'changes-requested';
  if (state === 'DISMISSED') return 'dismissed';
  return null;
}

interface RawReview {
  id: number;
  user: { login: string } | null;
  body: string | null;
  state: string;
  submitted_at?: string | null;
}

function readReviews(call: GitHubCaller, number: number): Promise<RawReview[]> {
  return newest((page) =>
    call(`reading reviews of #${number}`, (o, where) =>
      o.rest.pulls.listReviews({ ...where, pull_number: number, per_page: PER_PAGE, page }),
    ),
  );
}

/** The review state from the latest verdict of each reviewer who may write. */
export async function githubReview(
  call: GitHubCaller,
  permissions: GitHubPermissions,
  number: number,
): Promise<ReviewState> {
  const latest = new Map<string, Verdict>();
  for (const r of await readReviews(call, number)) {
    const verdict = verdictOf(r.state);
    if (verdict !== null) latest.set(r.user?.login ?? '', verdict);
  }
  const counted: Verdict[] = [];
  for (const [login, verdict] of latest) if ((await permissions.of(login)).canWrite) counted.push(verdict);
  return reviewFromVerdicts(counted);
}

export async function githubComments(
  call: GitHubCaller,
  permissions: GitHubPermissions,
  number: number,
  since?: string,
): Promise<ForgeComment[]> {
  const sinceArg = since === undefined ? {} : { since };
  const [reviews, lineComments, comments] = await Promise.all([
    readReviews(call, number),
    call(`reading review comments of #${number}`, async (o, where) => {
      const pages: Array<Awaited<ReturnType<typeof o.rest.pulls.listReviewComments>>['data']> = [];
      for (let page = 1; page <= MAX_PAGES + 1; page++) {
        const { data } = await o.rest.pulls.listReviewComments({
          ...where,
          pull_number: number,
          sort: 'created',
          direction: 'desc',
          per_page: PER_PAGE,
          page,
          ...sinceArg,
        });
        pages.push(data);
        if (data.length < PER_PAGE) break;
      }
      return pages.flat();
    }),
    newest((page) =>
      call(`reading comments of #${number}`, (o, where) =>
        o.rest.issues.listComments({ ...where, issue_number: number, per_page: PER_PAGE, page, ...sinceArg }),
      ),
    ),
  ]);
  const all: Array<Omit<ForgeComment, 'authorCanWrite' | 'permission'>> = [];
  for (const r of reviews) {
    if (r.state === 'PENDING' || r.submitted_at === undefined || r.submitted_at === null) continue;
    const verdict = verdictOf(r.state);
    all.push({
      id: `review:${r.id}`,
      kind: 'review',
      author: r.user?.login ?? '',
      body: r.body ?? '',
      createdAt: r.submitted_at,
      reviewState: verdict === 'approved' || verdict === 'changes-requested' ? verdict : 'commented',
      path: null,
      line: null,
    });
  }
  for (const c of lineComments) {
    all.push({
      id: `review-comment:${c.id}`,
      kind: 'review-comment',
      author: c.user?.login ?? '',
      body: c.body,
      createdAt: c.created_at,
      reviewState: null,
      path: c.path,
      line: c.line ?? c.original_line ?? null,
    });
  }
  for (const c of comments) {
    all.push({
      id: `comment:${c.id}`,
      kind: 'comment',
      author: c.user?.login ?? '',
      body: c.body ?? '',
      createdAt: c.created_at,
      reviewState: null,
      path: null,
      line: null,
    });
  }
  // GitHub's `since` compares update times and reviews take none: the creation time decides here.
  const kept = all
    .filter((c) => since === undefined || Date.parse(c.createdAt) > Date.parse(since))
    .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
  const out: ForgeComment[] = [];
  for (const c of kept) {
    const { canWrite, permission } = await permissions.of(c.author);
    out.push({ ...c, authorCanWrite: canWrite, permission });
  }
  return out;
}
