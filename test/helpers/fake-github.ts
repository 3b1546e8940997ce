import { githubRoutes } from './fake-github-api.js';
import { FakeHttp, type RecordedRequest, type Reply, Upcoming } from './fake-forge-http.js';

/**
 * An in-memory GitHub REST API on 127.0.0.1, answering the routes Octokit calls for one repository: pulls,
 * labels, requested reviewers, reviews, review comments, issue comments, issues, check runs, combined status,
 * branch protection and rules, `GET /user` with `x-oauth-scopes`, and the GraphQL auto-merge mutation. Every
 * answer carries rate-limit headers; `secondaryLimit` / `primaryLimit` make the next requests fail as GitHub
 * does. Tests change the forge's state through its methods (`setCheck`, `mergeOnForge`, `addReview`, …).
 */

export type Association = 'OWNER' | 'MEMBER' | 'COLLABORATOR' | 'CONTRIBUTOR' | 'NONE';
/** A user's role on the repository as GitHub names it (`role_name`); `none` on a private repository they cannot see. */
export type RoleName = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface FakePull {
  number: number;
  node_id: string;
  title: string;
  body: string;
  head: string;
  headSha: string;
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  mergeCommit: string | null;
  mergeable: boolean | null;
  labels: string[];
  reviewers: string[];
  autoMerge: boolean;
  createdAt: string;
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  labels: string[];
  /** who opened it */
  author: string;
  /** its timeline's label events, oldest first (`GET …/issues/{n}/events`) */
  events: Array<{ event: 'labeled' | 'unlabeled'; label: string; actor: string }>;
  /** the issues it is blocked by (issue dependencies) and its sub-issues */
  blockedBy: number[];
  subIssues: number[];
}

export interface GitHubComment {
  id: number;
  user: string;
  association: Association;
  body: string;
  createdAt: string;
}

export interface Review extends GitHubComment {
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED';
}

export interface ReviewComment extends GitHubComment {
  path: string;
  line: number;
}

export interface CheckRun {
  id: number;
  name: string;
  /** an Actions job's log, served through a redirect to the fake blob storage */
  actionsLog: string | null;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  summary: string;
  text: string | null;
}

export interface Status {
  context: string;
  state: 'pending' | 'success' | 'failure' | 'error';
  description: string;
  targetUrl: string | null;
}

export interface Protection {
  requiredChecks: string[];
  requiredApprovals: number;
}

export class FakeGitHub {
  readonly http = new FakeHttp();
  readonly blobs = new FakeHttp();
  #blobPort = 0;
  /** the token the fake accepts as `Authorization: token …` or `Bearer …`; anything else is a 401 */
  token = 'ghp_faketoken000000000000000000000000';
  login = 'loopfleet-bot';
  /** the `x-oauth-scopes` header of `GET /user`; null leaves it out, as fine-grained tokens do */
  scopes: string | null = 'repo, workflow';
  allowAutoMerge = false;
  /**
   * each user's role on the repository, as `GET …/collaborators/{user}/permission` answers it; anyone else
   * reads it (a public repository), whatever their `author_association` says
   */
  readonly roles = new Map<string, RoleName>([[this.login, 'admin']]);
  /**
   * what the next pull request creations meet, one entry each: `fail` a 502 before anything is created,
   * `lost` a 502 after the pull request was created (the answer lost on the way), `hang` created and never
   * answered (the client sees nothing until it gives up or dies)
   */
  readonly createFaults: Array<'fail' | 'lost' | 'hang'> = [];
  /** every request from now on is accepted and never answered */
  hangAll = false;
  /** called for each request the fake leaves unanswered: tests wait on it, not on a clock */
  onHang: (req: RecordedRequest) => void = () => {};
  readonly owner: string;
  readonly name: string;
  readonly pulls: FakePull[] = [];
  readonly issues: FakeIssue[] = [];
  /** labels the repository has besides those its issues and pull requests carry */
  readonly labels = new Set<string>();
  /** what the API routes (fake-github-api.ts) read and write */
  readonly state = {
    comments: new Map<number, GitHubComment[]>(),
    reviews: new Map<number, Review[]>(),
    reviewComments: new Map<number, ReviewComment[]>(),
    checks: new Map<string, CheckRun[]>(),
    statuses: new Map<string, Status[]>(),
    protection: new Map<string, Protection>(),
  };
  #nextId = 1000;
  #nextNumber = 1;
  #port = 0;
  remaining = 5000;
  readonly #limits = new Upcoming<{ kind: 'secondary' | 'primary' | 'too-many'; retryAfter: number; reset: number }>();
  readonly #failures = new Upcoming<{ status: number; message: string }>();
  #clock = Date.parse('2026-01-01T00:00:00Z');

  constructor(repo = 'acme/widgets') {
    const [owner, name] = repo.split('/');
    this.owner = owner ?? 'acme';
    this.name = name ?? 'widgets';
    githubRoutes(this);
  }

  async start(): Promise<this> {
    this.#port = await this.http.start();
    this.#blobPort = await this.blobs.start();
    return this;
  }

  async close(): Promise<void> {
    await this.http.close();
    await this.blobs.close();
  }

  /** the fake blob storage job logs are redirected to: another origin, so no token may follow */
  get blobUrl(): string {
    return `http://127.0.0.1:${this.#blobPort}`;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get requests(): RecordedRequest[] {
    return this.http.requests;
  }

  // ---- state the tests drive ----

  /** The next `count` requests are answered with a secondary-rate-limit 403 and `retry-after: seconds`. */
  secondaryLimit(count: number, retryAfter: number): void {
    this.#limits.push(count, { kind: 'secondary', retryAfter, reset: 0 });
  }

  /** The next `count` requests are answered with a plain 429 and `retry-after: seconds`. */
  tooManyRequests(count: number, retryAfter: number): void {
    this.#limits.push(count, { kind: 'too-many', retryAfter, reset: 0 });
  }

  /** The next `count` requests are answered with a primary 403: `x-ratelimit-remaining: 0` until `resetEpochSeconds`. */
  primaryLimit(count: number, resetEpochSeconds: number): void {
    this.#limits.push(count, { kind: 'primary', retryAfter: 0, reset: resetEpochSeconds });
  }

  /** The next `count` requests are answered `status` with `message` (an outage, or a server that echoes what it got). */
  failNext(count: number, status: number, message: string): void {
    this.#failures.push(count, { status, message });
  }

  setCheck(
    sha: string,
    name: string,
    conclusion: 'success' | 'failure' | 'pending' | 'timed_out' | 'cancelled' | 'neutral',
    text: string | null = null,
    summary = '',
    actionsLog: string | null = null,
  ): void {
    const runs = (this.state.checks.get(sha) ?? []).filter((r) => r.name !== name);
    runs.push({
      id: this.#nextId++,
      name,
      actionsLog,
      status: conclusion === 'pending' ? 'in_progress' : 'completed',
      conclusion: conclusion === 'pending' ? null : conclusion,
      summary: summary || `${name}: ${conclusion}`,
      text,
    });
    this.state.checks.set(sha, runs);
  }

  setStatus(
    sha: string,
    context: string,
    state: Status['state'],
    description = '',
    targetUrl: string | null = null,
  ): void {
    const statuses = (this.state.statuses.get(sha) ?? []).filter((s) => s.context !== context);
    statuses.push({ context, state, description, targetUrl });
    this.state.statuses.set(sha, statuses);
  }

  /** `login`'s role on the repository (see {@link FakeGitHub.roles}). */
  grant(login: string, role: RoleName): void {
    this.roles.set(login, role);
  }

  protect(branch: string, protection: Protection): void {
    this.state.protection.set(branch, protection);
  }

  /** An issue opened by `author`; its labels were put on by `labelledBy` (default: its author). */
  addIssue(
    title: string,
    body: string,
    labels: string[],
    state: 'open' | 'closed' = 'open',
    people: { author?: string; labelledBy?: string } = {},
  ): number {
    const number = this.nextNumber();
    const author = people.author ?? this.login;
    const actor = people.labelledBy ?? author;
    const events = labels.map((label) => ({ event: 'labeled' as const, label, actor }));
    this.issues.push({ number, title, body, labels, state, author, events, blockedBy: [], subIssues: [] });
    return number;
  }

  issue(number: number): FakeIssue {
    const issue = this.issues.find((i) => i.number === number);
    if (issue === undefined) throw new Error(`fake GitHub: no issue #${number}`);
    return issue;
  }

  /** `actor` puts `label` on the issue, as the web page does. */
  label(number: number, label: string, actor: string): void {
    const issue = this.issue(number);
    if (!issue.labels.includes(label)) issue.labels.push(label);
    issue.events.push({ event: 'labeled', label, actor });
  }

  addComment(pr: number, user: string, body: string, association: Association = 'MEMBER'): number {
    const comment = { id: this.#nextId++, user, association, body, createdAt: this.tick() };
    this.state.comments.set(pr, [...(this.state.comments.get(pr) ?? []), comment]);
    return comment.id;
  }

  addReview(pr: number, user: string, state: Review['state'], body = '', association: Association = 'MEMBER'): number {
    const review = { id: this.#nextId++, user, association, body, createdAt: this.tick(), state };
    this.state.reviews.set(pr, [...(this.state.reviews.get(pr) ?? []), review]);
    return review.id;
  }

  addReviewComment(
    pr: number,
    user: string,
    path: string,
    line: number,
    body: string,
    association: Association = 'MEMBER',
  ): number {
    const comment = { id: this.#nextId++, user, association, body, createdAt: this.tick(), path, line };
    this.state.reviewComments.set(pr, [...(this.state.reviewComments.get(pr) ?? []), comment]);
    return comment.id;
  }

  /** Someone pushed to the PR's branch on the forge. */
  pushHead(pr: number, sha: string): void {
    this.#pull(pr).headSha = sha;
  }

  /** Someone merged it with the forge's button. */
  mergeOnForge(pr: number, mergeCommit = 'f'.repeat(40)): void {
    const pull = this.#pull(pr);
    Object.assign(pull, { state: 'closed', merged: true, mergeCommit });
  }

  closeOnForge(pr: number): void {
    this.#pull(pr).state = 'closed';
  }

  setMergeable(pr: number, mergeable: boolean | null): void {
    this.#pull(pr).mergeable = mergeable;
  }

  commentsOn(pr: number): string[] {
    return (this.state.comments.get(pr) ?? []).map((c) => c.body);
  }

  /** A time one second after the previous one: comments get distinct, ordered times without a clock. */
  tick(): string {
    this.#clock += 1000;
    return new Date(this.#clock).toISOString();
  }

  nextNumber(): number {
    return this.#nextNumber++;
  }

  #pull(number: number): FakePull {
    const pull = this.pulls.find((p) => p.number === number);
    if (pull === undefined) throw new Error(`fake GitHub: no pull request #${number}`);
    return pull;
  }

  // ---- the API ----

  scopeHeaders(): Record<string, string> {
    return this.scopes === null ? {} : { 'x-oauth-scopes': this.scopes };
  }

  /** the answer to a request the fake refuses (a bad token, a rate limit, a failure asked for); null lets it through */
  gate(req: RecordedRequest): Reply | null {
    if (this.hangAll) {
      this.onHang(req);
      return { status: 0, hang: true };
    }
    const auth = req.headers.authorization ?? '';
    if (auth !== `token ${this.token}` && auth !== `bearer ${this.token}` && auth !== `Bearer ${this.token}`) {
      return { status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } };
    }
    // Another repository than the fake's is unknown, as GitHub answers one the token cannot see.
    if (req.path.startsWith('/repos/') && !req.path.startsWith(`/repos/${this.owner}/${this.name}/`))
      return { status: 404, body: { message: 'Not Found' } };
    const failure = this.#failures.take();
    if (failure !== undefined) return { status: failure.status, body: { message: failure.message } };
    const limit = this.#limits.take();
    if (limit === undefined) {
      this.remaining = Math.max(0, this.remaining - 1);
      return null;
    }
    if (limit.kind === 'too-many')
      return {
        status: 429,
        headers: { 'retry-after': String(limit.retryAfter) },
        body: { message: 'Too Many Requests' },
      };
    if (limit.kind === 'secondary') {
      return {
        status: 403,
        headers: { 'retry-after': String(limit.retryAfter) },
        body: {
          message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: 'https://docs.github.com/rest',
        },
      };
    }
    return {
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(limit.reset) },
      body: { message: `API rate limit exceeded for user ID 1.`, documentation_url: 'https://docs.github.com/rest' },
    };
  }
}
