import type {
  BranchProtection,
  CiSummary,
  ForgeComment,
  ForgeIssue,
  ForgeKind,
  ForgePort,
  MergeOutcome,
  OpenPullRequest,
  PullRequest,
  ReviewState,
  TokenFacts,
} from '../../src/ports/forge.js';
import { ForgeError } from '../../src/ports/forge.js';

/** One pull request as the memory forge keeps it: the port's view plus what was asked of it. */
export interface FakeForgePull extends PullRequest {
  body: string;
  labels: string[];
  reviewers: string[];
  comments: ForgeComment[];
  /** what loopfleet posted on it, in order */
  posted: string[];
  review: ReviewState;
}

/**
 * An in-memory ForgePort for core tests: pull requests, their comments, CI per commit, reviews, merges.
 * Heads are read from a real bare remote through `headOf` (what the branch holds there now), so a push
 * shows on the PR as on a real forge. The test drives the forge's side: setCi, addComment, close, merged.
 */
export class FakeForge implements ForgePort {
  readonly kind: ForgeKind;
  readonly repo = 'acme/widgets';
  readonly pulls: FakeForgePull[] = [];
  readonly #ci = new Map<string, CiSummary>();
  #nextComment = 1;
  protection: BranchProtection = { protected: false, requiredChecks: [], requiredApprovals: 0 };
  /** called by merge(): the test makes the merge happen on the bare remote and returns its commit */
  onMerge: ((pull: FakeForgePull) => Promise<string>) | null = null;
  /** every call, by name, for tests that count them */
  readonly calls: string[] = [];

  constructor(
    readonly headOf: (branch: string) => Promise<string | null>,
    kind: ForgeKind = 'github',
  ) {
    this.kind = kind;
  }

  async findPullRequest(head: string): Promise<PullRequest | null> {
    this.calls.push('findPullRequest');
    const order = { open: 0, merged: 1, closed: 2 } as const;
    const found = this.pulls
      .filter((p) => p.head === head)
      .sort((a, b) => order[a.state] - order[b.state] || b.number - a.number)[0];
    return found === undefined ? null : this.#view(found);
  }

  async getPullRequest(number: number): Promise<PullRequest> {
    this.calls.push('getPullRequest');
    return this.#view(this.pull(number));
  }

  async openPullRequest(input: OpenPullRequest): Promise<PullRequest> {
    this.calls.push('openPullRequest');
    const headSha = await this.headOf(input.head);
    if (headSha === null) throw new ForgeError(`422: no branch ${input.head} on the remote`, 422);
    if (this.pulls.some((p) => p.head === input.head && p.state === 'open'))
      throw new ForgeError(`422: a pull request for ${input.head} exists already`, 422);
    const pull: FakeForgePull = {
      number: this.pulls.length + 1,
      url: `https://forge.test/${this.repo}/pull/${this.pulls.length + 1}`,
      state: 'open',
      draft: input.draft,
      head: input.head,
      headSha,
      base: input.base,
      title: input.title,
      mergeable: true,
      body: input.body,
      labels: [...input.labels],
      reviewers: [...input.reviewers],
      comments: [],
      posted: [],
      review: 'none',
    };
    this.pulls.push(pull);
    return this.#view(pull);
  }

  async updatePullRequest(number: number, change: { title?: string; body?: string }): Promise<void> {
    this.calls.push('updatePullRequest');
    const pull = this.pull(number);
    if (change.title !== undefined) pull.title = change.title;
    if (change.body !== undefined) pull.body = change.body;
  }

  async ci(sha: string): Promise<CiSummary> {
    this.calls.push('ci');
    return structuredClone(this.#ci.get(sha) ?? { state: 'none', failing: [] });
  }

  async review(number: number): Promise<ReviewState> {
    return this.pull(number).review;
  }

  async comments(number: number, since?: string): Promise<ForgeComment[]> {
    this.calls.push('comments');
    return structuredClone(this.pull(number).comments.filter((c) => since === undefined || c.createdAt > since));
  }

  async comment(number: number, body: string): Promise<void> {
    this.calls.push('comment');
    this.pull(number).posted.push(body);
  }

  async merge(number: number, sha: string, _message: string): Promise<MergeOutcome> {
    this.calls.push('merge');
    const pull = this.pull(number);
    const head = await this.headOf(pull.head);
    if (head !== sha) return { merged: false, reason: `head is ${head}, not ${sha}` };
    if (pull.draft) return { merged: false, reason: 'a draft cannot be merged' };
    const commit = this.onMerge === null ? sha : await this.onMerge(pull);
    pull.state = 'merged';
    return { merged: true, sha: commit };
  }

  async enableAutoMerge(): Promise<boolean> {
    return false;
  }

  async issues(): Promise<ForgeIssue[]> {
    return [];
  }

  async branchProtection(): Promise<BranchProtection> {
    return this.protection;
  }

  async tokenFacts(): Promise<TokenFacts> {
    return { user: 'loopfleet-bot', scopes: null, missing: [] };
  }

  // The forge's side, for tests.

  pull(number: number): FakeForgePull {
    const pull = this.pulls.find((p) => p.number === number);
    if (pull === undefined) throw new ForgeError(`404: no pull request #${number}`, 404);
    return pull;
  }

  /** the newest pull request whose head is `branch` */
  byHead(branch: string): FakeForgePull {
    const pull = this.pulls.findLast((p) => p.head === branch);
    if (pull === undefined) throw new Error(`no pull request for ${branch}`);
    return pull;
  }

  setCi(sha: string, ci: CiSummary): void {
    this.#ci.set(sha, ci);
  }

  addComment(number: number, c: Partial<ForgeComment> & Pick<ForgeComment, 'body'>): ForgeComment {
    const comment: ForgeComment = {
      id: `c${this.#nextComment++}`,
      kind: 'comment',
      author: 'reviewer',
      authorCanWrite: true,
      permission: c.authorCanWrite === false ? 'read' : 'write',
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, this.#nextComment)).toISOString(),
      reviewState: null,
      path: null,
      line: null,
      ...c,
    };
    const pull = this.pull(number);
    pull.comments.push(comment);
    if (!comment.authorCanWrite) return comment;
    if (comment.kind === 'review' && comment.reviewState === 'changes-requested') pull.review = 'changes-requested';
    if (comment.kind === 'review' && comment.reviewState === 'approved') pull.review = 'approved';
    return comment;
  }

  async #view(p: FakeForgePull): Promise<PullRequest> {
    // An open PR's head is the branch on the remote as it is now, as a forge shows it after a push.
    const headSha = p.state === 'open' ? ((await this.headOf(p.head)) ?? p.headSha) : p.headSha;
    p.headSha = headSha;
    return {
      number: p.number,
      url: p.url,
      state: p.state,
      draft: p.draft,
      head: p.head,
      headSha,
      base: p.base,
      title: p.title,
      mergeable: p.mergeable,
    };
  }
}
