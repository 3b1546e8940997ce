import { FakeHttp, type RecordedRequest, type Reply, paged } from './fake-forge-http.js';

/**
 * An in-memory GitHub REST API on 127.0.0.1, answering the routes Octokit calls for one repository: pulls,
 * labels, requested reviewers, reviews, review comments, issue comments, issues, check runs, combined status,
 * branch protection and rules, `GET /user` with `x-oauth-scopes`, and the GraphQL auto-merge mutation. Every
 * answer carries rate-limit headers; `secondaryLimit` / `primaryLimit` make the next requests fail as GitHub
 * does. Tests change the forge's state through its methods (`setCheck`, `mergeOnForge`, `addReview`, …).
 */

export type Association = 'OWNER' | 'MEMBER' | 'COLLABORATOR' | 'CONTRIBUTOR' | 'NONE';

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

interface FakeIssue {
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  labels: string[];
}

interface Comment {
  id: number;
  user: string;
  association: Association;
  body: string;
  createdAt: string;
}

interface Review extends Comment {
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED';
}

interface ReviewComment extends Comment {
  path: string;
  line: number;
}

interface CheckRun {
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  summary: string;
  text: string | null;
}

interface Status {
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
  /** the token the fake accepts as `Authorization: token …` or `Bearer …`; anything else is a 401 */
  token = 'ghp_faketoken000000000000000000000000';
  login = 'loopfleet-bot';
  /** the `x-oauth-scopes` header of `GET /user`; null leaves it out, as fine-grained tokens do */
  scopes: string | null = 'repo, workflow';
  allowAutoMerge = false;
  readonly owner: string;
  readonly name: string;
  readonly pulls: FakePull[] = [];
  readonly issues: FakeIssue[] = [];
  #comments = new Map<number, Comment[]>();
  #reviews = new Map<number, Review[]>();
  #reviewComments = new Map<number, ReviewComment[]>();
  #checks = new Map<string, CheckRun[]>();
  #statuses = new Map<string, Status[]>();
  #protection = new Map<string, Protection>();
  #nextId = 1000;
  #nextNumber = 1;
  #port = 0;
  #remaining = 5000;
  #limits: { kind: 'secondary' | 'primary'; count: number; retryAfter: number; reset: number }[] = [];
  #failures: { count: number; status: number; message: string }[] = [];
  #clock = Date.parse('2026-01-01T00:00:00Z');

  constructor(repo = 'acme/widgets') {
    const [owner, name] = repo.split('/');
    this.owner = owner ?? 'acme';
    this.name = name ?? 'widgets';
    this.#routes();
  }

  async start(): Promise<this> {
    this.#port = await this.http.start();
    return this;
  }

  close(): Promise<void> {
    return this.http.close();
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
    this.#limits.push({ kind: 'secondary', count, retryAfter, reset: 0 });
  }

  /** The next `count` requests are answered with a primary 403: `x-ratelimit-remaining: 0` until `resetEpochSeconds`. */
  primaryLimit(count: number, resetEpochSeconds: number): void {
    this.#limits.push({ kind: 'primary', count, retryAfter: 0, reset: resetEpochSeconds });
  }

  /** The next `count` requests are answered `status` with `message` (an outage, or a server that echoes what it got). */
  failNext(count: number, status: number, message: string): void {
    this.#failures.push({ count, status, message });
  }

  setCheck(sha: string, name: string, conclusion: 'success' | 'failure' | 'pending' | 'timed_out' | 'cancelled' | 'neutral', text: string | null = null, summary = ''): void {
    const runs = (this.#checks.get(sha) ?? []).filter((r) => r.name !== name);
    runs.push({
      name,
      status: conclusion === 'pending' ? 'in_progress' : 'completed',
      conclusion: conclusion === 'pending' ? null : conclusion,
      summary: summary || `${name}: ${conclusion}`,
      text,
    });
    this.#checks.set(sha, runs);
  }

  setStatus(sha: string, context: string, state: Status['state'], description = '', targetUrl: string | null = null): void {
    const statuses = (this.#statuses.get(sha) ?? []).filter((s) => s.context !== context);
    statuses.push({ context, state, description, targetUrl });
    this.#statuses.set(sha, statuses);
  }

  protect(branch: string, protection: Protection): void {
    this.#protection.set(branch, protection);
  }

  addIssue(title: string, body: string, labels: string[], state: 'open' | 'closed' = 'open'): number {
    const number = this.#nextNumber++;
    this.issues.push({ number, title, body, labels, state });
    return number;
  }

  addComment(pr: number, user: string, body: string, association: Association = 'MEMBER'): number {
    const comment = { id: this.#nextId++, user, association, body, createdAt: this.#tick() };
    this.#comments.set(pr, [...(this.#comments.get(pr) ?? []), comment]);
    return comment.id;
  }

  addReview(pr: number, user: string, state: Review['state'], body = '', association: Association = 'MEMBER'): number {
    const review = { id: this.#nextId++, user, association, body, createdAt: this.#tick(), state };
    this.#reviews.set(pr, [...(this.#reviews.get(pr) ?? []), review]);
    return review.id;
  }

  addReviewComment(pr: number, user: string, path: string, line: number, body: string, association: Association = 'MEMBER'): number {
    const comment = { id: this.#nextId++, user, association, body, createdAt: this.#tick(), path, line };
    this.#reviewComments.set(pr, [...(this.#reviewComments.get(pr) ?? []), comment]);
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
    return (this.#comments.get(pr) ?? []).map((c) => c.body);
  }

  /** A time one second after the previous one: comments get distinct, ordered times without a clock. */
  #tick(): string {
    this.#clock += 1000;
    return new Date(this.#clock).toISOString();
  }

  #pull(number: number): FakePull {
    const pull = this.pulls.find((p) => p.number === number);
    if (pull === undefined) throw new Error(`fake GitHub: no pull request #${number}`);
    return pull;
  }

  // ---- the API ----

  #routes(): void {
    const http = this.http;
    http.before((req) => this.#gate(req));
    http.after((_req, reply) => {
      reply.headers = {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': String(this.#remaining),
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
        'x-ratelimit-used': String(5000 - this.#remaining),
        ...reply.headers,
      };
    });
    const repo = `/repos/:owner/:repo`;
    http.route('GET', '/user', () => ({ status: 200, body: { login: this.login }, headers: this.#scopeHeaders() }));
    http.route('GET', `${repo}/pulls`, (req) => this.#listPulls(req));
    http.route('POST', `${repo}/pulls`, (req) => this.#createPull(req));
    http.route('GET', `${repo}/pulls/:n`, (_req, p) => this.#withPull(p, (pull) => ({ status: 200, body: this.#pullJson(pull, true) })));
    http.route('PATCH', `${repo}/pulls/:n`, (req, p) =>
      this.#withPull(p, (pull) => {
        const change = req.body as { title?: string; body?: string };
        if (typeof change.title === 'string') pull.title = change.title;
        if (typeof change.body === 'string') pull.body = change.body;
        return { status: 200, body: this.#pullJson(pull, true) };
      }),
    );
    http.route('PUT', `${repo}/pulls/:n/merge`, (req, p) => this.#withPull(p, (pull) => this.#merge(pull, req)));
    http.route('POST', `${repo}/pulls/:n/requested_reviewers`, (req, p) =>
      this.#withPull(p, (pull) => {
        const { reviewers } = req.body as { reviewers?: string[] };
        pull.reviewers.push(...(reviewers ?? []));
        return { status: 201, body: this.#pullJson(pull, false) };
      }),
    );
    http.route('GET', `${repo}/pulls/:n/reviews`, (req, p) =>
      paged(req, (this.#reviews.get(Number(p.n)) ?? []).map((r) => ({ ...this.#commentJson(r), state: r.state, submitted_at: r.createdAt })), this.url),
    );
    http.route('GET', `${repo}/pulls/:n/comments`, (req, p) =>
      paged(req, this.#since(req, this.#reviewComments.get(Number(p.n)) ?? []).map((c) => ({ ...this.#commentJson(c), path: c.path, line: c.line })), this.url),
    );
    http.route('GET', `${repo}/issues/:n/comments`, (req, p) => paged(req, this.#since(req, this.#comments.get(Number(p.n)) ?? []).map((c) => this.#commentJson(c)), this.url));
    http.route('POST', `${repo}/issues/:n/comments`, (req, p) => {
      const { body } = req.body as { body?: string };
      if (typeof body !== 'string') return { status: 422, body: { message: 'Validation Failed' } };
      const id = this.addComment(Number(p.n), this.login, body, 'OWNER');
      return { status: 201, body: { id, body } };
    });
    http.route('POST', `${repo}/issues/:n/labels`, (req, p) =>
      this.#withPull(p, (pull) => {
        const { labels } = req.body as { labels?: string[] };
        pull.labels.push(...(labels ?? []));
        return { status: 200, body: pull.labels.map((name) => ({ name })) };
      }),
    );
    http.route('GET', `${repo}/issues`, (req) => this.#listIssues(req));
    http.route('GET', `${repo}/commits/:ref/check-runs`, (req, p) => {
      const runs = (this.#checks.get(p.ref ?? '') ?? []).map((r, i) => ({
        id: i + 1,
        name: r.name,
        status: r.status,
        conclusion: r.conclusion,
        html_url: `${this.url}/checks/${i + 1}`,
        details_url: `${this.url}/checks/${i + 1}/details`,
        output: { title: r.name, summary: r.summary, text: r.text },
      }));
      const page = paged(req, runs, this.url);
      return { ...page, body: { total_count: runs.length, check_runs: page.body } };
    });
    http.route('GET', `${repo}/commits/:ref/status`, (_req, p) => {
      const statuses = this.#statuses.get(p.ref ?? '') ?? [];
      const state = statuses.some((s) => s.state === 'failure' || s.state === 'error') ? 'failure' : statuses.every((s) => s.state === 'success') && statuses.length > 0 ? 'success' : 'pending';
      return {
        status: 200,
        body: { state, total_count: statuses.length, statuses: statuses.map((s) => ({ context: s.context, state: s.state, description: s.description, target_url: s.targetUrl })) },
      };
    });
    http.route('GET', `${repo}/branches/:branch*/protection`, (_req, p) => {
      const protection = this.#protection.get(p.branch ?? '');
      if (protection === undefined) return { status: 404, body: { message: 'Branch not protected' } };
      return {
        status: 200,
        body: {
          required_status_checks: { strict: true, contexts: protection.requiredChecks, checks: protection.requiredChecks.map((context) => ({ context, app_id: null })) },
          required_pull_request_reviews: { required_approving_review_count: protection.requiredApprovals },
        },
      };
    });
    http.route('GET', `${repo}/branches/:branch*`, (_req, p) => {
      const protection = this.#protection.get(p.branch ?? '');
      return { status: 200, body: { name: p.branch, protected: protection !== undefined, commit: { sha: 'a'.repeat(40) } } };
    });
    http.route('POST', '/graphql', (req) => this.#graphql(req));
  }

  #scopeHeaders(): Record<string, string> {
    return this.scopes === null ? {} : { 'x-oauth-scopes': this.scopes };
  }

  #gate(req: RecordedRequest): Reply | null {
    const auth = req.headers.authorization ?? '';
    if (auth !== `token ${this.token}` && auth !== `bearer ${this.token}` && auth !== `Bearer ${this.token}`) {
      return { status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } };
    }
    const failure = this.#failures[0];
    if (failure !== undefined) {
      failure.count -= 1;
      if (failure.count <= 0) this.#failures.shift();
      return { status: failure.status, body: { message: failure.message } };
    }
    const limit = this.#limits[0];
    if (limit === undefined) {
      this.#remaining = Math.max(0, this.#remaining - 1);
      return null;
    }
    limit.count -= 1;
    if (limit.count <= 0) this.#limits.shift();
    if (limit.kind === 'secondary') {
      return {
        status: 403,
        headers: { 'retry-after': String(limit.retryAfter) },
        body: { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest' },
      };
    }
    return {
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(limit.reset) },
      body: { message: `API rate limit exceeded for user ID 1.`, documentation_url: 'https://docs.github.com/rest' },
    };
  }

  #withPull(params: Record<string, string>, answer: (pull: FakePull) => Reply): Reply {
    const pull = this.pulls.find((p) => p.number === Number(params.n));
    if (pull === undefined) return { status: 404, body: { message: 'Not Found' } };
    return answer(pull);
  }

  #listPulls(req: RecordedRequest): Reply {
    const state = req.query.get('state') ?? 'open';
    const head = req.query.get('head');
    const matching = this.pulls
      .filter((p) => state === 'all' || p.state === state)
      .filter((p) => head === null || `${this.owner}:${p.head}` === head)
      .sort((a, b) => b.number - a.number);
    return paged(
      req,
      matching.map((p) => this.#pullJson(p, false)),
      this.url,
    );
  }

  #createPull(req: RecordedRequest): Reply {
    const input = req.body as { title?: string; head?: string; base?: string; body?: string; draft?: boolean };
    if (typeof input.title !== 'string' || typeof input.head !== 'string' || typeof input.base !== 'string') {
      return { status: 422, body: { message: 'Validation Failed' } };
    }
    const head = input.head.replace(`${this.owner}:`, '');
    if (this.pulls.some((p) => p.head === head && p.state === 'open')) {
      return { status: 422, body: { message: 'Validation Failed', errors: [{ message: `A pull request already exists for ${this.owner}:${head}.` }] } };
    }
    const number = this.#nextNumber++;
    const pull: FakePull = {
      number,
      node_id: `PR_node${number}`,
      title: input.title,
      body: input.body ?? '',
      head,
      headSha: `${String(number).padStart(2, '0')}${'c'.repeat(38)}`,
      base: input.base,
      draft: input.draft === true,
      state: 'open',
      merged: false,
      mergeCommit: null,
      mergeable: true,
      labels: [],
      reviewers: [],
      autoMerge: false,
      createdAt: this.#tick(),
    };
    this.pulls.push(pull);
    return { status: 201, body: this.#pullJson(pull, true) };
  }

  #merge(pull: FakePull, req: RecordedRequest): Reply {
    const input = req.body as { sha?: string; merge_method?: string; commit_title?: string; commit_message?: string };
    if (pull.state !== 'open' || pull.mergeable === false) return { status: 405, body: { message: 'Pull Request is not mergeable' } };
    if (input.sha !== undefined && input.sha !== pull.headSha) return { status: 409, body: { message: 'Head branch was modified. Review and try the merge again.' } };
    const sha = 'e'.repeat(40);
    Object.assign(pull, { state: 'closed', merged: true, mergeCommit: sha });
    return { status: 200, body: { merged: true, sha, message: 'Pull Request successfully merged' } };
  }

  #listIssues(req: RecordedRequest): Reply {
    const state = req.query.get('state') ?? 'open';
    const labels = (req.query.get('labels') ?? '').split(',').filter((l) => l !== '');
    const asIssues = this.issues.map((i) => ({ number: i.number, title: i.title, body: i.body, state: i.state, labels: i.labels, pull: false }));
    // GitHub's issues list includes pull requests (with a `pull_request` key): clients filter them out.
    const asPulls = this.pulls.map((p) => ({ number: p.number, title: p.title, body: p.body, state: p.state, labels: p.labels, pull: true }));
    const matching = [...asIssues, ...asPulls]
      .filter((i) => state === 'all' || i.state === state)
      .filter((i) => labels.every((l) => i.labels.includes(l)))
      .sort((a, b) => b.number - a.number);
    return paged(
      req,
      matching.map((i) => ({
        number: i.number,
        title: i.title,
        body: i.body,
        state: i.state,
        labels: i.labels.map((name) => ({ name })),
        html_url: `https://github.example/${this.owner}/${this.name}/${i.pull ? 'pull' : 'issues'}/${i.number}`,
        ...(i.pull ? { pull_request: { url: `${this.url}/repos/${this.owner}/${this.name}/pulls/${i.number}` } } : {}),
      })),
      this.url,
    );
  }

  #graphql(req: RecordedRequest): Reply {
    const { query, variables } = req.body as { query?: string; variables?: { pullRequestId?: string } };
    if (typeof query !== 'string' || !query.includes('enablePullRequestAutoMerge')) return { status: 200, body: { errors: [{ message: 'unsupported query' }] } };
    const pull = this.pulls.find((p) => p.node_id === variables?.pullRequestId);
    if (pull === undefined) return { status: 200, body: { errors: [{ type: 'NOT_FOUND', message: 'Could not resolve to a node' }] } };
    if (!this.allowAutoMerge) return { status: 200, body: { data: { enablePullRequestAutoMerge: null }, errors: [{ type: 'UNPROCESSABLE', message: 'Auto merge is not allowed for this repository' }] } };
    pull.autoMerge = true;
    return { status: 200, body: { data: { enablePullRequestAutoMerge: { pullRequest: { number: pull.number } } } } };
  }

  #since<T extends Comment>(req: RecordedRequest, items: readonly T[]): T[] {
    const since = req.query.get('since');
    return since === null ? [...items] : items.filter((c) => c.createdAt >= since);
  }

  #commentJson(c: Comment): Record<string, unknown> {
    return { id: c.id, user: { login: c.user }, author_association: c.association, body: c.body, created_at: c.createdAt, html_url: `https://github.example/c/${c.id}` };
  }

  #pullJson(p: FakePull, full: boolean): Record<string, unknown> {
    return {
      number: p.number,
      node_id: p.node_id,
      html_url: `https://github.example/${this.owner}/${this.name}/pull/${p.number}`,
      state: p.state,
      draft: p.draft,
      title: p.title,
      body: p.body,
      merged_at: p.merged ? '2026-01-02T00:00:00Z' : null,
      head: { ref: p.head, sha: p.headSha, label: `${this.owner}:${p.head}` },
      base: { ref: p.base },
      labels: p.labels.map((name) => ({ name })),
      requested_reviewers: p.reviewers.map((login) => ({ login })),
      // GitHub computes these only for a single pull request, never in a list.
      ...(full ? { merged: p.merged, mergeable: p.mergeable, merge_commit_sha: p.mergeCommit } : {}),
    };
  }
}
