import type {
  BranchProtection,
  CiSummary,
  ForgeComment,
  ForgeIssue,
  ForgePort,
  MergeOutcome,
  OpenPullRequest,
  PullRequest,
  ReviewState,
  TokenFacts,
} from '../../ports/forge.js';
import { ForgeError } from '../../ports/forge.js';
import { gitlabCi } from './gitlab-ci.js';
import { GitLabClient, type GitLabClientOptions } from './gitlab-client.js';
import { COMMENT_PAGES, reviewFromVerdicts } from './text.js';
import { GitLabMembers } from './gitlab-members.js';

/**
 * ForgePort on GitLab's merge requests (REST v4, {@link GitLabClient}). A draft is GitLab's `Draft: ` title
 * prefix; the review is GitLab's approvals and, where the server has them, reviewers' "requested changes";
 * CI is the latest pipeline of the head commit ({@link gitlabCi}). GitLab's notes carry no access level, so
 * whether an author's words count is their project membership (Developer, level 30, or higher, asked once
 * per person per run) or their name on `pr.allow`; approvals and "requested changes" of others count for
 * nothing. Notes are read newest first, at most {@link COMMENT_PAGES} pages.
 */

export interface GitLabForgeOptions extends GitLabClientOptions {
  /** user names whose notes and reviews count whatever their membership (`pr.allow`) */
  allow?: readonly string[];
}
/** GitLab's draft markers at the start of a title (`WIP:` as older servers wrote it). */
const DRAFT = /^\s*(\[draft\]|\(draft\)|draft:|\[wip\]|wip:)\s*/i;
const COMPUTING = new Set(['unchecked', 'checking', 'preparing', 'approvals_syncing']);

interface RawMergeRequest {
  iid: number;
  web_url: string;
  state: string;
  draft?: boolean;
  work_in_progress?: boolean;
  source_branch: string;
  target_branch: string;
  sha: string;
  title: string;
  detailed_merge_status?: string;
  has_conflicts?: boolean;
  merge_commit_sha?: string | null;
}

interface RawNote {
  id: number;
  body: string;
  author: { id: number; username: string };
  created_at: string;
  system: boolean;
  type: string | null;
  position?: {
    new_path?: string | null;
    new_line?: number | null;
    old_path?: string | null;
    old_line?: number | null;
  } | null;
}

export class GitLabForge implements ForgePort {
  readonly kind = 'gitlab' as const;
  readonly repo: string;
  #client: GitLabClient;
  #project: string;
  #members: GitLabMembers;

  constructor(repo: string, options: GitLabForgeOptions) {
    if (!/^[^/\s]+(\/[^/\s]+)+$/.test(repo))
      throw new ForgeError(`GitLab project must be group/…/project, not ${JSON.stringify(repo)}`, null);
    this.repo = repo;
    this.#client = new GitLabClient(options);
    this.#project = `/projects/${encodeURIComponent(repo)}`;
    this.#members = new GitLabMembers(this.#client, this.#project, options.allow);
  }

  async findPullRequest(head: string): Promise<PullRequest | null> {
    const listed = await this.#client.all<RawMergeRequest>(
      `listing merge requests of ${head}`,
      `${this.#project}/merge_requests`,
      { source_branch: head, state: 'all', order_by: 'created_at', sort: 'desc' },
    );
    const rank = (m: RawMergeRequest): number => (m.state === 'opened' ? 0 : m.state === 'merged' ? 1 : 2);
    const best = listed.filter((m) => m.source_branch === head).sort((a, b) => rank(a) - rank(b) || b.iid - a.iid)[0];
    return best === undefined ? null : this.getPullRequest(best.iid);
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    return mergeRequestOf(await this.#get(number));
  }

  async openPullRequest(input: OpenPullRequest): Promise<PullRequest> {
    const reviewerIds = await Promise.all(input.reviewers.map((name) => this.#userId(name)));
    const { data } = await this.#client.request<RawMergeRequest>(
      `opening a merge request for ${input.head}`,
      'POST',
      `${this.#project}/merge_requests`,
      {
        body: {
          source_branch: input.head,
          target_branch: input.base,
          title: input.draft ? `Draft: ${input.title}` : input.title,
          description: input.body,
          labels: input.labels.join(','),
          ...(reviewerIds.length > 0 ? { reviewer_ids: reviewerIds } : {}),
        },
      },
    );
    return mergeRequestOf(data);
  }

  async updatePullRequest(number: number, change: { title?: string; body?: string }): Promise<void> {
    const body: Record<string, string> = {};
    if (change.body !== undefined) body.description = change.body;
    if (change.title !== undefined) {
      // The draft marker is the title's prefix: a new title keeps it while the merge request is a draft.
      const current = await this.#get(number);
      body.title = isDraft(current) ? `Draft: ${change.title}` : change.title;
    }
    await this.#client.request(
      `updating merge request !${number}`,
      'PUT',
      `${this.#project}/merge_requests/${number}`,
      { body },
    );
  }

  ci(sha: string): Promise<CiSummary> {
    return gitlabCi(this.#client, this.#project, sha);
  }

  async review(number: number): Promise<ReviewState> {
    const verdicts: ('approved' | 'changes-requested')[] = [];
    type Person = { user?: { id?: number; username?: string } };
    const counts = async (p: Person): Promise<boolean> =>
      p.user?.id !== undefined && (await this.#members.of(p.user.id, p.user.username ?? '')).canWrite;
    const reviewers = await this.#client.request<(Person & { state?: string })[] | null>(
      `reading reviewers of !${number}`,
      'GET',
      `${this.#project}/merge_requests/${number}/reviewers`,
      { accept: [404] },
    );
    if (reviewers.status === 200 && Array.isArray(reviewers.data)) {
      for (const r of reviewers.data)
        if (r.state === 'requested_changes' && (await counts(r))) verdicts.push('changes-requested');
    } else if ((await this.#get(number)).detailed_merge_status === 'requested_changes') {
      // Older GitLab has no reviewer states (404): its own merge status is all it says.
      verdicts.push('changes-requested');
    }
    const { data: approvals } = await this.#client.request<{ approved_by?: Person[] }>(
      `reading approvals of !${number}`,
      'GET',
      `${this.#project}/merge_requests/${number}/approvals`,
    );
    for (const a of approvals.approved_by ?? []) if (await counts(a)) verdicts.push('approved');
    return reviewFromVerdicts(verdicts);
  }

  async comments(number: number, since?: string): Promise<ForgeComment[]> {
    const notes = await this.#client.all<RawNote>(
      `reading notes of !${number}`,
      `${this.#project}/merge_requests/${number}/notes`,
      { sort: 'desc', order_by: 'created_at' },
      COMMENT_PAGES,
    );
    const written = notes.filter(
      (n) => !n.system && (since === undefined || Date.parse(n.created_at) > Date.parse(since)),
    );
    const out: ForgeComment[] = [];
    for (const n of written) {
      const onLine = n.type === 'DiffNote' && n.position != null;
      const member = await this.#members.of(n.author.id, n.author.username);
      out.push({
        id: `note:${n.id}`,
        kind: onLine ? 'review-comment' : 'comment',
        author: n.author.username,
        authorCanWrite: member.canWrite,
        permission: member.permission,
        body: n.body,
        createdAt: n.created_at,
        reviewState: null,
        path: onLine ? (n.position?.new_path ?? n.position?.old_path ?? null) : null,
        line: onLine ? (n.position?.new_line ?? n.position?.old_line ?? null) : null,
      });
    }
    return out.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
  }

  async comment(number: number, body: string): Promise<void> {
    await this.#client.request(`commenting on !${number}`, 'POST', `${this.#project}/merge_requests/${number}/notes`, {
      body: { body },
    });
  }

  async merge(number: number, sha: string, message: string): Promise<MergeOutcome> {
    const { status, data } = await this.#client.request<RawMergeRequest & { message?: string }>(
      `merging !${number}`,
      'PUT',
      `${this.#project}/merge_requests/${number}/merge`,
      {
        body: { sha, merge_commit_message: message, should_remove_source_branch: false },
        // 405/406/422: it cannot be merged now; 409: the head is no longer `sha`.
        accept: [405, 406, 409, 422],
      },
    );
    if (status !== 200)
      return {
        merged: false,
        reason: `GitLab refused to merge !${number} (${status}): ${String(data?.message ?? 'not mergeable')}`,
      };
    if (data.state !== 'merged' || typeof data.merge_commit_sha !== 'string')
      return { merged: false, reason: `GitLab did not merge !${number}: it is ${data.state}` };
    return { merged: true, sha: data.merge_commit_sha };
  }

  async enableAutoMerge(number: number): Promise<boolean> {
    const current = await this.#get(number);
    const { status } = await this.#client.request(
      `turning on merge when the pipeline succeeds for !${number}`,
      'PUT',
      `${this.#project}/merge_requests/${number}/merge`,
      {
        body: {
          sha: current.sha,
          merge_when_pipeline_succeeds: true,
          auto_merge: true,
          should_remove_source_branch: false,
        },
        accept: [405, 406, 409, 422],
      },
    );
    return status === 200;
  }

  async issues(label: string): Promise<ForgeIssue[]> {
    const listed = await this.#client.all<{ iid: number; title: string; description: string | null; web_url: string }>(
      `listing issues labelled ${label}`,
      `${this.#project}/issues`,
      { labels: label, state: 'opened' },
    );
    return listed.map((i) => ({ number: i.iid, title: i.title, body: i.description ?? '', url: i.web_url }));
  }

  async branchProtection(branch: string): Promise<BranchProtection> {
    const found = await this.#client.request(
      `reading the protection of ${branch}`,
      'GET',
      `${this.#project}/protected_branches/${encodeURIComponent(branch)}`,
      { accept: [404] },
    );
    if (found.status === 404) return { protected: false, requiredChecks: [], requiredApprovals: 0 };
    const { data: project } = await this.#client.request<{ only_allow_merge_if_pipeline_succeeds?: boolean }>(
      'reading the project',
      'GET',
      this.#project,
    );
    // Approval rules are a paid tier's: on the free tier (403/404) a merge needs no approval.
    const rules = await this.#client.request<{ approvals_required?: number }[] | null>(
      'reading approval rules',
      'GET',
      `${this.#project}/approval_rules`,
      { accept: [403, 404] },
    );
    const approvals =
      rules.status === 200 && Array.isArray(rules.data)
        ? Math.max(0, ...rules.data.map((r) => r.approvals_required ?? 0))
        : 0;
    return {
      protected: true,
      requiredChecks: project.only_allow_merge_if_pipeline_succeeds === true ? ['pipeline'] : [],
      requiredApprovals: approvals,
    };
  }

  async tokenFacts(): Promise<TokenFacts> {
    const { data: user } = await this.#client.request<{ username: string }>('reading the token’s user', 'GET', '/user');
    const self = await this.#client.request<{ scopes?: string[] }>(
      'reading the token’s scopes',
      'GET',
      '/personal_access_tokens/self',
      { accept: [401, 403, 404] },
    );
    if (self.status !== 200 || !Array.isArray(self.data.scopes))
      return { user: user.username, scopes: null, missing: [] };
    const scopes = self.data.scopes;
    return { user: user.username, scopes, missing: scopes.includes('api') ? [] : ['api'] };
  }

  async #get(number: number): Promise<RawMergeRequest> {
    const { data } = await this.#client.request<RawMergeRequest>(
      `reading merge request !${number}`,
      'GET',
      `${this.#project}/merge_requests/${number}`,
    );
    return data;
  }

  async #userId(username: string): Promise<number> {
    const { data } = await this.#client.request<{ id: number; username: string }[]>(
      `finding reviewer ${username}`,
      'GET',
      '/users',
      { query: { username } },
    );
    const user = data.find((u) => u.username.toLowerCase() === username.toLowerCase());
    if (user === undefined)
      throw new ForgeError(`GitLab has no user ${JSON.stringify(username)} to request a review from`, 404);
    return user.id;
  }
}

function isDraft(m: RawMergeRequest): boolean {
  return m.draft === true || m.work_in_progress === true || DRAFT.test(m.title);
}

function mergeRequestOf(m: RawMergeRequest): PullRequest {
  const status = m.detailed_merge_status ?? '';
  // Like GitHub's `mergeable`: whether it merges without conflicts, not whether checks and approvals allow it yet.
  const mergeable =
    m.has_conflicts === true || status === 'conflict' || status === 'need_rebase'
      ? false
      : COMPUTING.has(status)
        ? null
        : true;
  return {
    number: m.iid,
    url: m.web_url,
    state: m.state === 'merged' ? 'merged' : m.state === 'opened' ? 'open' : 'closed',
    draft: isDraft(m),
    head: m.source_branch,
    headSha: m.sha,
    base: m.target_branch,
    title: m.title.replace(DRAFT, ''),
    mergeable,
  };
}
