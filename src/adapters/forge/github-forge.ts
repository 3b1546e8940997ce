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
import { githubCi } from './github-ci.js';
import { type GitHubClientOptions, type GitHubOctokit, githubCall, githubOctokit } from './github-client.js';
import { githubComments, githubReview } from './github-comments.js';
import { GitHubPermissions } from './github-permissions.js';

/**
 * ForgePort on GitHub's REST API through Octokit (see {@link githubOctokit} and {@link githubCall} for
 * throttling, retries, timeouts and the token's redaction). Auto-merge is GitHub's GraphQL mutation: REST
 * has none. Whose words count is asked of GitHub per person ({@link GitHubPermissions}).
 */

export interface GitHubForgeOptions extends GitHubClientOptions {
  /** user names whose comments and reviews count whatever their permission (`pr.allow`) */
  allow?: readonly string[];
}
/** A create that got a 5xx may have been done (a comment posted twice): it is not repeated on a 5xx. */
const NOT_REPEATED = { retries: 0 };

interface RawPull {
  number: number;
  html_url: string;
  state: string;
  draft?: boolean;
  merged_at: string | null;
  merged?: boolean;
  mergeable?: boolean | null;
  title: string;
  head: { ref: string; sha: string };
  base: { ref: string };
}

export class GitHubForge implements ForgePort {
  readonly kind = 'github' as const;
  readonly repo: string;
  #owner: string;
  #name: string;
  #options: GitHubClientOptions;
  #octokit: GitHubOctokit;
  #permissions: GitHubPermissions;

  constructor(repo: string, options: GitHubForgeOptions) {
    const [owner, name, ...rest] = repo.split('/');
    if (owner === undefined || owner === '' || name === undefined || name === '' || rest.length > 0) {
      throw new ForgeError(`GitHub repository must be owner/name, not ${JSON.stringify(repo)}`, null);
    }
    this.repo = repo;
    this.#owner = owner;
    this.#name = name;
    this.#options = options;
    this.#octokit = githubOctokit(options);
    this.#permissions = new GitHubPermissions((what, call) => this.#call(what, call), options.allow);
  }

  #call<T>(
    what: string,
    call: (octokit: GitHubOctokit, where: { owner: string; repo: string }) => Promise<T>,
  ): Promise<T> {
    return githubCall(what, this.#options, () => call(this.#octokit, { owner: this.#owner, repo: this.#name }));
  }

  async findPullRequest(head: string): Promise<PullRequest | null> {
    const listed = await this.#call(`listing pull requests of ${head}`, (o, where) =>
      o.paginate(o.rest.pulls.list, { ...where, head: `${this.#owner}:${head}`, state: 'all', per_page: 100 }),
    );
    const rank = (p: (typeof listed)[number]): number => (p.state === 'open' ? 0 : p.merged_at !== null ? 1 : 2);
    const best = [...listed]
      .filter((p) => p.head.ref === head)
      .sort((a, b) => rank(a) - rank(b) || b.number - a.number)[0];
    // The list leaves `mergeable` out: GitHub computes it for one pull request at a time.
    return best === undefined ? null : this.getPullRequest(best.number);
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    const { data } = await this.#call(`reading pull request #${number}`, (o, where) =>
      o.rest.pulls.get({ ...where, pull_number: number }),
    );
    return pullOf(data);
  }

  async openPullRequest(input: OpenPullRequest): Promise<PullRequest> {
    const { data } = await this.#call(`opening a pull request for ${input.head}`, (o, where) =>
      o.rest.pulls.create({
        ...where,
        head: input.head,
        base: input.base,
        title: input.title,
        body: input.body,
        draft: input.draft,
        request: NOT_REPEATED,
      }),
    );
    if (input.labels.length > 0) {
      await this.#call(`labelling pull request #${data.number}`, (o, where) =>
        o.rest.issues.addLabels({ ...where, issue_number: data.number, labels: [...input.labels] }),
      );
    }
    if (input.reviewers.length > 0) {
      await this.#call(`requesting reviewers on pull request #${data.number}`, (o, where) =>
        o.rest.pulls.requestReviewers({ ...where, pull_number: data.number, reviewers: [...input.reviewers] }),
      );
    }
    return pullOf(data);
  }

  async updatePullRequest(number: number, change: { title?: string; body?: string }): Promise<void> {
    await this.#call(`updating pull request #${number}`, (o, where) =>
      o.rest.pulls.update({ ...where, pull_number: number, ...change }),
    );
  }

  ci(sha: string): Promise<CiSummary> {
    const { timeoutMs, signal } = this.#options;
    return githubCi((what, call) => this.#call(what, call), sha, {
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(signal === undefined ? {} : { signal }),
    });
  }

  review(number: number): Promise<ReviewState> {
    return githubReview((what, call) => this.#call(what, call), this.#permissions, number);
  }

  comments(number: number, since?: string): Promise<ForgeComment[]> {
    return githubComments((what, call) => this.#call(what, call), this.#permissions, number, since);
  }

  async comment(number: number, body: string): Promise<void> {
    await this.#call(`commenting on #${number}`, (o, where) =>
      o.rest.issues.createComment({ ...where, issue_number: number, body, request: NOT_REPEATED }),
    );
  }

  async merge(number: number, sha: string, message: string): Promise<MergeOutcome> {
    const [title, ...rest] = message.split('\n');
    try {
      const { data } = await this.#call(`merging #${number}`, (o, where) =>
        o.rest.pulls.merge({
          ...where,
          pull_number: number,
          sha,
          merge_method: 'merge',
          commit_title: title ?? '',
          commit_message: rest.join('\n').trim(),
        }),
      );
      return data.merged ? { merged: true, sha: data.sha } : { merged: false, reason: data.message };
    } catch (error) {
      // 405: not mergeable (checks, reviews, conflicts); 409: the head is no longer `sha`.
      if (error instanceof ForgeError && (error.status === 405 || error.status === 409))
        return { merged: false, reason: error.message };
      throw error;
    }
  }

  async enableAutoMerge(number: number): Promise<boolean> {
    const { data } = await this.#call(`reading pull request #${number}`, (o, where) =>
      o.rest.pulls.get({ ...where, pull_number: number }),
    );
    // GraphQL answers a refusal (the repository does not allow auto-merge, the PR is clean already) with
    // `errors` in a 200: that is `false`; a refused request (401, 5xx, a rate limit) is thrown as any other.
    const refused = await this.#call(`turning on auto-merge for #${number}`, (o) =>
      o
        .graphql(
          'mutation($pullRequestId: ID!) { enablePullRequestAutoMerge(input: { pullRequestId: $pullRequestId, mergeMethod: MERGE }) { pullRequest { number } } }',
          { pullRequestId: data.node_id },
        )
        .then(
          () => false,
          (error: unknown) => {
            if (error instanceof Error && error.name === 'GraphqlResponseError') return true;
            throw error;
          },
        ),
    );
    return !refused;
  }

  async issues(label: string): Promise<ForgeIssue[]> {
    const listed = await this.#call(`listing issues labelled ${label}`, (o, where) =>
      o.paginate(o.rest.issues.listForRepo, { ...where, labels: label, state: 'open', per_page: 100 }),
    );
    return listed
      .filter((i) => i.pull_request === undefined)
      .map((i) => ({ number: i.number, title: i.title, body: i.body ?? '', url: i.html_url }));
  }

  async branchProtection(branch: string): Promise<BranchProtection> {
    const { data } = await this.#call(`reading branch ${branch}`, (o, where) =>
      o.rest.repos.getBranch({ ...where, branch }),
    );
    if (!data.protected) return { protected: false, requiredChecks: [], requiredApprovals: 0 };
    const fromBranch = data.protection?.required_status_checks?.contexts ?? [];
    try {
      const { data: p } = await this.#call(`reading the protection of ${branch}`, (o, where) =>
        o.rest.repos.getBranchProtection({ ...where, branch }),
      );
      const checks =
        p.required_status_checks?.checks?.map((c) => c.context) ?? p.required_status_checks?.contexts ?? fromBranch;
      return {
        protected: true,
        requiredChecks: [...new Set(checks)],
        requiredApprovals: p.required_pull_request_reviews?.required_approving_review_count ?? 0,
      };
    } catch (error) {
      // Reading the rules needs admin rights; without them the branch's own summary is what GitHub tells.
      if (error instanceof ForgeError && (error.status === 403 || error.status === 404))
        return { protected: true, requiredChecks: [...fromBranch], requiredApprovals: 0 };
      throw error;
    }
  }

  async tokenFacts(): Promise<TokenFacts> {
    const { data, headers } = await this.#call('reading the token’s user', (o) => o.rest.users.getAuthenticated());
    const header = headers['x-oauth-scopes'];
    if (header === undefined) return { user: data.login, scopes: null, missing: [] };
    const scopes = String(header)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    return { user: data.login, scopes, missing: scopes.includes('repo') ? [] : ['repo'] };
  }
}

function pullOf(p: RawPull): PullRequest {
  const merged = p.merged === true || p.merged_at !== null;
  return {
    number: p.number,
    url: p.html_url,
    state: merged ? 'merged' : p.state === 'open' ? 'open' : 'closed',
    draft: p.draft === true,
    head: p.head.ref,
    headSha: p.head.sha,
    base: p.base.ref,
    title: p.title,
    mergeable: p.mergeable ?? null,
  };
}
