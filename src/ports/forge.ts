/**
 * Everything the engine asks of a forge (GitHub, GitLab): pull requests (GitLab: merge requests) on the
 * remote's repository, their CI and reviews, comments, issues. One instance is bound to one repository.
 *
 * Invariants every adapter keeps:
 * - the token is used by loopfleet's own process only: it never appears in an error message, a returned
 *   string or a log line (adapters redact it from whatever the server or the client library says);
 * - rate limits are honoured: a 429, or a 403 with `retry-after` / `x-ratelimit-remaining: 0`, waits as the
 *   server says (bounded), a bounded number of times, never a retry storm; over the bound it throws a
 *   `ForgeRateLimitError` with the time the server named;
 * - every text returned (titles, bodies, comments, log excerpts) is somebody's words: callers sanitise and
 *   quote it ({@link visible}, {@link quoteUntrusted}) before it reaches a terminal or an agent.
 */

export type ForgeKind = 'github' | 'gitlab';

export type PullState = 'open' | 'merged' | 'closed';
export type CiState = 'pending' | 'passing' | 'failing' | 'none';
export type ReviewState = 'none' | 'approved' | 'changes-requested';

export interface PullRequest {
  number: number;
  url: string;
  state: PullState;
  draft: boolean;
  /** the source branch's short name (`loop/T-1`) */
  head: string;
  /** the commit the forge has for the source branch */
  headSha: string;
  /** the target branch's short name */
  base: string;
  title: string;
  /** the forge's own judgement whether it can merge now: null while it is still computing */
  mergeable: boolean | null;
}

export interface OpenPullRequest {
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
  labels: readonly string[];
  /** user names to request a review from */
  reviewers: readonly string[];
}

export interface FailingCheck {
  name: string;
  /** the check's own summary or description, bounded */
  summary: string;
  /** the end of its log or output, bounded, when the forge gives one */
  logExcerpt: string | null;
  url: string | null;
}

export interface CiSummary {
  /** check runs and commit statuses of the commit, combined: failing if any failed, pending if any is still running */
  state: CiState;
  failing: FailingCheck[];
}

/** A review, review comment (on a line) or conversation comment on a pull request. */
export interface ForgeComment {
  /** unique per forge and repository, stable: loopfleet remembers which it has answered */
  id: string;
  kind: 'review' | 'review-comment' | 'comment';
  author: string;
  /**
   * whether the author's words count: their permission on the repository, asked of the forge (GitHub: role
   * write, maintain or admin; GitLab: Developer or higher), or their name on `pr.allow`. Never GitHub's
   * `author_association` (a read-only organisation member is `MEMBER` there). Only such comments start
   * work, since anyone can comment on a public repository.
   */
  authorCanWrite: boolean;
  /** the permission the forge named for the author (`write`, `read`, `Developer`, …), or `allow-list` */
  permission: string;
  body: string;
  /** ISO time */
  createdAt: string;
  /** a review's verdict; null for comments */
  reviewState: 'approved' | 'changes-requested' | 'commented' | null;
  /** for a comment on a line */
  path: string | null;
  line: number | null;
}

export interface ForgeIssue {
  number: number;
  title: string;
  body: string;
  url: string;
}

export interface BranchProtection {
  protected: boolean;
  /** names of the checks base's protection requires */
  requiredChecks: string[];
  /** approving reviews base's protection requires */
  requiredApprovals: number;
}

export interface TokenFacts {
  /** the user the token authenticates as */
  user: string;
  /** the token's scopes when the forge says (classic GitHub tokens, GitLab); null when it does not (fine-grained) */
  scopes: string[] | null;
  /** what loopfleet needs that the scopes lack ([] when `scopes` is null) */
  missing: string[];
}

export type MergeOutcome = { merged: true; sha: string } | { merged: false; reason: string };

export interface ForgePort {
  readonly kind: ForgeKind;
  /** `owner/name` (GitHub) or `group/…/project` (GitLab) */
  readonly repo: string;
  /** the pull request whose head is `head` in this repository, newest first among open, then merged, then closed; null when none */
  findPullRequest(head: string): Promise<PullRequest | null>;
  getPullRequest(number: number): Promise<PullRequest>;
  /** opens it with its labels and reviewers; a draft where the forge supports drafts (GitLab: `Draft:` title) */
  openPullRequest(input: OpenPullRequest): Promise<PullRequest>;
  updatePullRequest(number: number, change: { title?: string; body?: string }): Promise<void>;
  /** the combined CI of the commit `sha` */
  ci(sha: string): Promise<CiSummary>;
  /** the review state from the latest review of each reviewer who may write (see {@link ForgeComment.authorCanWrite}): others neither block nor approve */
  review(number: number): Promise<ReviewState>;
  /**
   * reviews, review comments and conversation comments created after `since` (ISO) when given, oldest first;
   * at most the newest few hundred of each kind, so a flood of comments costs a bounded number of requests
   */
  comments(number: number, since?: string): Promise<ForgeComment[]>;
  comment(number: number, body: string): Promise<void>;
  /** merges with a merge commit, only if the head is still `sha` */
  merge(number: number, sha: string, message: string): Promise<MergeOutcome>;
  /** turns on the forge's own auto-merge (GitHub: needs the repository setting; GitLab: merge when pipeline succeeds); false when it cannot */
  enableAutoMerge(number: number): Promise<boolean>;
  /** open issues carrying `label` */
  issues(label: string): Promise<ForgeIssue[]>;
  branchProtection(branch: string): Promise<BranchProtection>;
  tokenFacts(): Promise<TokenFacts>;
}

/** A rate limit the forge named that lasts longer than loopfleet waits inside one call. */
export class ForgeRateLimitError extends Error {
  readonly retryAt: number;
  constructor(message: string, retryAt: number) {
    super(message);
    this.name = 'ForgeRateLimitError';
    this.retryAt = retryAt;
  }
}

/** A forge answer that is not a rate limit: the status and the forge's message, the token redacted. */
export class ForgeError extends Error {
  readonly status: number | null;
  constructor(message: string, status: number | null) {
    super(message);
    this.name = 'ForgeError';
    this.status = status;
  }
}
