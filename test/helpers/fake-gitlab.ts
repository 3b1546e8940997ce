import { FakeHttp, type RecordedRequest, type Reply, Upcoming, paged } from './fake-forge-http.js';
import { gitlabIssueRoutes } from './fake-gitlab-issues.js';

/**
 * An in-memory GitLab REST API v4 on 127.0.0.1 for one project: merge requests (draft by title prefix,
 * labels, reviewers by id, merge with a sha check, merge when the pipeline succeeds), notes and discussions,
 * approvals and reviewers' states, pipelines, jobs and their logs, commit statuses, issues, protected
 * branches and approval rules, users, members, `/user` and `/personal_access_tokens/self`. `rateLimit` makes
 * the next requests 429 with `Retry-After` / `RateLimit-Reset`. Tests drive state through its methods. The
 * issue routes a tracker calls (notes, label events, links, labels) are {@link gitlabIssueRoutes}'.
 */

/** A project issue: its author, its label events (oldest first), its blocking links and its own notes. */
export interface FakeGitLabIssue {
  iid: number;
  title: string;
  description: string;
  state: 'opened' | 'closed';
  labels: string[];
  authorId: number;
  updatedAt: string;
  labelEvents: { userId: number; label: string; action: 'add' | 'remove'; createdAt: string }[];
  /** iids of the issues that block this one (a `blocks` link from each of them) */
  blockedBy: number[];
  /** iids of open issues of another project (id 78) that block this one */
  blockedByElsewhere: number[];
  notes: { id: number; userId: number; body: string; system: boolean; createdAt: string }[];
}

interface MergeRequest {
  iid: number;
  title: string;
  description: string;
  source: string;
  target: string;
  sha: string;
  state: 'opened' | 'closed' | 'merged';
  labels: string[];
  reviewerIds: number[];
  mergeCommit: string | null;
  hasConflicts: boolean;
  autoMerge: boolean;
}

interface Note {
  id: number;
  discussion: string;
  userId: number;
  body: string;
  createdAt: string;
  system: boolean;
  position: { new_path: string; new_line: number } | null;
}

interface Job {
  id: number;
  name: string;
  stage: string;
  status: string;
  allowFailure: boolean;
  log: string;
}

export class FakeGitLab {
  readonly http = new FakeHttp();
  token = 'glpat-faketoken0000000000';
  /** the token's scopes; null answers `/personal_access_tokens/self` with 404, as older servers do */
  scopes: string[] | null = ['api'];
  pipelineMustSucceed = false;
  /** false: no reviewers endpoint (404), as older servers; the merge status still says "requested changes" */
  reviewerStates = true;
  readonly project: string;
  readonly mergeRequests: MergeRequest[] = [];
  readonly issues: FakeGitLabIssue[] = [];
  /** the project's labels (GET …/labels/:name finds these and those its issues carry) */
  readonly labels = new Set<string>();
  #users = new Map<number, { username: string; access: number }>([[1, { username: 'loopfleet-bot', access: 40 }]]);
  #notes = new Map<number, Note[]>();
  #approvals = new Map<number, number[]>();
  #changesRequested = new Map<number, Set<number>>();
  #pipelines = new Map<string, { id: number; status: string; jobs: Job[] }[]>();
  #statuses = new Map<string, { name: string; status: string; description: string; targetUrl: string | null }[]>();
  #protected = new Map<string, number>();
  readonly #limits = new Upcoming<{ retryAfter: number | null; reset: number | null }>();
  readonly #failures = new Upcoming<{ status: number; message: string }>();
  #nextId = 500;
  #port = 0;
  #clock = Date.parse('2026-01-01T00:00:00Z');

  constructor(project = 'acme/platform/widgets') {
    this.project = project;
    this.#routes();
  }

  async start(): Promise<this> {
    this.#port = await this.http.start();
    return this;
  }

  close(): Promise<void> {
    return this.http.close();
  }

  /** the API root, as GITLAB_API_URL names it */
  get url(): string {
    return `http://127.0.0.1:${this.#port}/api/v4`;
  }

  get requests(): RecordedRequest[] {
    return this.http.requests;
  }

  // ---- state the tests drive ----

  addUser(username: string, access: number): number {
    const id = this.#nextId++;
    this.#users.set(id, { username, access });
    return id;
  }

  /** The next `count` requests are answered 429 with `Retry-After` (seconds) or `RateLimit-Reset` (epoch seconds). */
  rateLimit(count: number, headers: { retryAfter?: number; reset?: number }): void {
    this.#limits.push(count, { retryAfter: headers.retryAfter ?? null, reset: headers.reset ?? null });
  }

  /** The next `count` requests are answered `status` with `message` (an outage, or a server that echoes what it got). */
  failNext(count: number, status: number, message: string): void {
    this.#failures.push(count, { status, message });
  }

  addNote(
    iid: number,
    userId: number,
    body: string,
    position: { path: string; line: number } | null = null,
    system = false,
  ): number {
    const id = this.#nextId++;
    const note = {
      id,
      discussion: `d${id}`,
      userId,
      body,
      createdAt: this.#tick(),
      system,
      position: position === null ? null : { new_path: position.path, new_line: position.line },
    };
    this.#notes.set(iid, [...(this.#notes.get(iid) ?? []), note]);
    return id;
  }

  approve(iid: number, userId: number): void {
    this.#approvals.set(iid, [...(this.#approvals.get(iid) ?? []), userId]);
    this.#changesRequested.get(iid)?.delete(userId);
  }

  requestChanges(iid: number, userId: number): void {
    const set = this.#changesRequested.get(iid) ?? new Set<number>();
    set.add(userId);
    this.#changesRequested.set(iid, set);
  }

  /** A pipeline of `sha` (the newest one counts); its jobs with their states and logs. */
  addPipeline(
    sha: string,
    status: string,
    jobs: { name: string; stage?: string; status: string; allowFailure?: boolean; log?: string }[] = [],
  ): void {
    const id = this.#nextId++;
    const all = jobs.map((j) => ({
      id: this.#nextId++,
      name: j.name,
      stage: j.stage ?? 'test',
      status: j.status,
      allowFailure: j.allowFailure ?? false,
      log: j.log ?? '',
    }));
    this.#pipelines.set(sha, [...(this.#pipelines.get(sha) ?? []), { id, status, jobs: all }]);
  }

  /** An external commit status (a CI outside GitLab posting to the commit). */
  setStatus(sha: string, name: string, status: string, description = '', targetUrl: string | null = null): void {
    this.#statuses.set(sha, [
      ...(this.#statuses.get(sha) ?? []).filter((s) => s.name !== name),
      { name, status, description, targetUrl },
    ]);
  }

  protect(branch: string, approvalsRequired = 0): void {
    this.#protected.set(branch, approvalsRequired);
  }

  /**
   * An issue opened by `author` (the token's own user by default); each label is put on by `labelledBy`
   * (else the author), as its label events say.
   */
  addIssue(
    title: string,
    description: string,
    labels: string[],
    state: 'opened' | 'closed' = 'opened',
    people: { author?: string; labelledBy?: string } = {},
  ): number {
    const iid = this.issues.length + 1;
    const authorId = this.userIdOf(people.author ?? 'loopfleet-bot');
    const labeller = people.labelledBy === undefined ? authorId : this.userIdOf(people.labelledBy);
    const at = this.tick();
    this.issues.push({
      iid,
      title,
      description,
      labels: [...labels],
      state,
      authorId,
      updatedAt: at,
      labelEvents: labels.map((label) => ({ userId: labeller, label, action: 'add' as const, createdAt: at })),
      blockedBy: [],
      blockedByElsewhere: [],
      notes: [],
    });
    return iid;
  }

  issue(iid: number): FakeGitLabIssue {
    const found = this.issues.find((i) => i.iid === iid);
    if (found === undefined) throw new Error(`fake GitLab: no issue #${iid}`);
    return found;
  }

  /** `username` adds and removes labels on the issue, as GitLab records it (label events, `updated_at`). */
  relabelIssue(iid: number, username: string, add: readonly string[], remove: readonly string[]): void {
    const issue = this.issue(iid);
    const userId = this.userIdOf(username);
    const at = this.tick();
    for (const label of add)
      if (!issue.labels.includes(label)) {
        issue.labels.push(label);
        issue.labelEvents.push({ userId, label, action: 'add', createdAt: at });
      }
    for (const label of remove)
      if (issue.labels.includes(label)) {
        issue.labels = issue.labels.filter((l) => l !== label);
        issue.labelEvents.push({ userId, label, action: 'remove', createdAt: at });
      }
    if (add.length + remove.length > 0) issue.updatedAt = at;
  }

  /** The bodies of an issue's notes, oldest first. */
  issueNotesOn(iid: number): string[] {
    return this.issue(iid).notes.map((n) => n.body);
  }

  /** The user's access level on the project changes (0: no member). */
  grant(username: string, access: number): void {
    this.#users.set(this.userIdOf(username), { username, access });
  }

  userIdOf(username: string): number {
    for (const [id, user] of this.#users) if (user.username === username) return id;
    throw new Error(`fake GitLab: no user ${username}`);
  }

  userJson(id: number): { id: number; username: string } {
    return { id, username: this.#users.get(id)?.username ?? 'ghost' };
  }

  newId(): number {
    return this.#nextId++;
  }

  /** The fake's clock: one second later at every call, as GitLab's timestamps (ISO 8601, UTC). */
  tick(): string {
    return this.#tick();
  }

  /** The scheme, host and port links point at. */
  get server(): string {
    return this.#server;
  }

  pushHead(iid: number, sha: string): void {
    this.#mr(iid).sha = sha;
  }

  mergeOnForge(iid: number): void {
    Object.assign(this.#mr(iid), { state: 'merged', mergeCommit: 'f'.repeat(40) });
  }

  closeOnForge(iid: number): void {
    this.#mr(iid).state = 'closed';
  }

  setConflicts(iid: number, conflicts: boolean): void {
    this.#mr(iid).hasConflicts = conflicts;
  }

  notesOn(iid: number): string[] {
    return (this.#notes.get(iid) ?? []).map((n) => n.body);
  }

  #tick(): string {
    this.#clock += 1000;
    return new Date(this.#clock).toISOString();
  }

  #mr(iid: number): MergeRequest {
    const found = this.mergeRequests.find((m) => m.iid === iid);
    if (found === undefined) throw new Error(`fake GitLab: no merge request !${iid}`);
    return found;
  }

  // ---- the API ----

  #routes(): void {
    const http = this.http;
    http.before((req) => this.#gate(req));
    const p = '/api/v4/projects/:project*';
    const withProject =
      (handler: (req: RecordedRequest, params: Record<string, string>) => Reply) =>
      (req: RecordedRequest, params: Record<string, string>) =>
        params.project === this.project
          ? handler(req, params)
          : { status: 404, body: { message: '404 Project Not Found' } };
    const withMr = (handler: (req: RecordedRequest, mr: MergeRequest) => Reply) =>
      withProject((req, params) => {
        const mr = this.mergeRequests.find((m) => m.iid === Number(params.iid));
        return mr === undefined ? { status: 404, body: { message: '404 Not found' } } : handler(req, mr);
      });

    http.route('GET', '/api/v4/user', () => ({ status: 200, body: { id: 1, username: 'loopfleet-bot' } }));
    http.route('GET', '/api/v4/personal_access_tokens/self', () =>
      this.scopes === null
        ? { status: 404, body: { message: '404 Not Found' } }
        : { status: 200, body: { id: 9, name: 'loopfleet', scopes: this.scopes, active: true, user_id: 1 } },
    );
    http.route('GET', '/api/v4/users', (req) => ({
      status: 200,
      body: [...this.#users]
        .filter(([, u]) => u.username === req.query.get('username'))
        .map(([id, u]) => ({ id, username: u.username })),
    }));
    http.route(
      'GET',
      `${p}/merge_requests`,
      withProject((req) => this.#listMrs(req)),
    );
    http.route(
      'POST',
      `${p}/merge_requests`,
      withProject((req) => this.#createMr(req)),
    );
    http.route(
      'GET',
      `${p}/merge_requests/:iid`,
      withMr((_req, mr) => ({ status: 200, body: this.#mrJson(mr) })),
    );
    http.route(
      'PUT',
      `${p}/merge_requests/:iid`,
      withMr((req, mr) => {
        const change = req.body as { title?: string; description?: string };
        if (typeof change.title === 'string') mr.title = change.title;
        if (typeof change.description === 'string') mr.description = change.description;
        return { status: 200, body: this.#mrJson(mr) };
      }),
    );
    http.route(
      'PUT',
      `${p}/merge_requests/:iid/merge`,
      withMr((req, mr) => this.#merge(req, mr)),
    );
    http.route(
      'GET',
      `${p}/merge_requests/:iid/notes`,
      withMr((req, mr) =>
        paged(
          req,
          // GitLab's default order is `order_by=created_at&sort=desc`.
          (req.query.get('sort') === 'asc'
            ? (this.#notes.get(mr.iid) ?? [])
            : [...(this.#notes.get(mr.iid) ?? [])].reverse()
          ).map((n) => this.#noteJson(n)),
          this.#server,
        ),
      ),
    );
    http.route(
      'POST',
      `${p}/merge_requests/:iid/notes`,
      withMr((req, mr) => {
        const { body } = req.body as { body?: string };
        if (typeof body !== 'string') return { status: 400, body: { message: 'body is missing' } };
        return { status: 201, body: { id: this.addNote(mr.iid, 1, body), body } };
      }),
    );
    http.route(
      'GET',
      `${p}/merge_requests/:iid/discussions`,
      withMr((req, mr) =>
        paged(
          req,
          (this.#notes.get(mr.iid) ?? []).map((n) => ({
            id: n.discussion,
            individual_note: n.position === null,
            notes: [this.#noteJson(n)],
          })),
          this.#server,
        ),
      ),
    );
    http.route(
      'GET',
      `${p}/merge_requests/:iid/approvals`,
      withMr((_req, mr) => {
        const by = this.#approvals.get(mr.iid) ?? [];
        return {
          status: 200,
          body: {
            approved: by.length > 0,
            approved_by: by.map((id) => ({ user: { id, username: this.#users.get(id)?.username } })),
          },
        };
      }),
    );
    http.route(
      'GET',
      `${p}/merge_requests/:iid/reviewers`,
      withMr((_req, mr) =>
        !this.reviewerStates
          ? { status: 404, body: { message: '404 Not found' } }
          : {
              status: 200,
              body: mr.reviewerIds.map((id) => ({
                user: { id, username: this.#users.get(id)?.username },
                state: this.#changesRequested.get(mr.iid)?.has(id)
                  ? 'requested_changes'
                  : (this.#approvals.get(mr.iid) ?? []).includes(id)
                    ? 'approved'
                    : 'unreviewed',
              })),
            },
      ),
    );
    http.route(
      'GET',
      `${p}/pipelines`,
      withProject((req) => {
        const all = [...(this.#pipelines.get(req.query.get('sha') ?? '') ?? [])].sort((a, b) => b.id - a.id);
        return paged(
          req,
          all.map((pl) => ({
            id: pl.id,
            status: pl.status,
            sha: req.query.get('sha'),
            web_url: `${this.#origin}/pipelines/${pl.id}`,
          })),
          this.#server,
        );
      }),
    );
    http.route(
      'GET',
      `${p}/pipelines/:id/jobs`,
      withProject((req, params) => {
        const pipeline = [...this.#pipelines.values()].flat().find((pl) => pl.id === Number(params.id));
        if (pipeline === undefined) return { status: 404, body: { message: '404 Not found' } };
        return paged(
          req,
          pipeline.jobs.map((j) => ({
            id: j.id,
            name: j.name,
            stage: j.stage,
            status: j.status,
            allow_failure: j.allowFailure,
            failure_reason: j.status === 'failed' ? 'script_failure' : undefined,
            web_url: `${this.#origin}/jobs/${j.id}`,
          })),
          this.#server,
        );
      }),
    );
    http.route(
      'GET',
      `${p}/jobs/:id/trace`,
      withProject((_req, params) => {
        const job = [...this.#pipelines.values()]
          .flat()
          .flatMap((pl) => pl.jobs)
          .find((j) => j.id === Number(params.id));
        return job === undefined ? { status: 404, body: { message: '404 Not found' } } : { status: 200, text: job.log };
      }),
    );
    http.route(
      'GET',
      `${p}/repository/commits/:sha/statuses`,
      withProject((req, params) => {
        const jobs = (this.#pipelines.get(params.sha ?? '') ?? []).at(-1)?.jobs ?? [];
        const all = [
          ...jobs.map((j) => ({
            name: j.name,
            status: j.status,
            description: null,
            target_url: `${this.#origin}/jobs/${j.id}`,
            allow_failure: j.allowFailure,
          })),
          ...(this.#statuses.get(params.sha ?? '') ?? []).map((s) => ({
            name: s.name,
            status: s.status,
            description: s.description,
            target_url: s.targetUrl,
            allow_failure: false,
          })),
        ];
        return paged(req, all, this.#server);
      }),
    );
    gitlabIssueRoutes(this, p, withProject);
    http.route(
      'GET',
      `${p}/protected_branches/:branch*`,
      withProject((_req, params) =>
        this.#protected.has(params.branch ?? '')
          ? {
              status: 200,
              body: {
                name: params.branch,
                push_access_levels: [{ access_level: 40 }],
                merge_access_levels: [{ access_level: 30 }],
              },
            }
          : { status: 404, body: { message: '404 Not found' } },
      ),
    );
    http.route(
      'GET',
      `${p}/approval_rules`,
      withProject(() => ({
        status: 200,
        body: [...this.#protected.values()].map((n, i) => ({ id: i + 1, name: 'default', approvals_required: n })),
      })),
    );
    http.route(
      'GET',
      `${p}/members/all/:user`,
      withProject((_req, params) => {
        const user = this.#users.get(Number(params.user));
        return user === undefined || user.access === 0
          ? { status: 404, body: { message: '404 Not found' } }
          : { status: 200, body: { id: Number(params.user), username: user.username, access_level: user.access } };
      }),
    );
    // The project itself last: its pattern takes the whole rest of the path.
    http.route(
      'GET',
      p,
      withProject(() => ({
        status: 200,
        body: {
          id: 77,
          path_with_namespace: this.project,
          only_allow_merge_if_pipeline_succeeds: this.pipelineMustSucceed,
        },
      })),
    );
  }

  get #server(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get #origin(): string {
    return `http://127.0.0.1:${this.#port}/api/v4/projects/${encodeURIComponent(this.project)}`;
  }

  #gate(req: RecordedRequest): Reply | null {
    if (req.headers['private-token'] !== this.token) return { status: 401, body: { message: '401 Unauthorized' } };
    const failure = this.#failures.take();
    if (failure !== undefined) return { status: failure.status, body: { message: failure.message } };
    const limit = this.#limits.take();
    if (limit === undefined) return null;
    const headers: Record<string, string> = { 'ratelimit-limit': '600', 'ratelimit-remaining': '0' };
    if (limit.retryAfter !== null) headers['retry-after'] = String(limit.retryAfter);
    if (limit.reset !== null) headers['ratelimit-reset'] = String(limit.reset);
    return { status: 429, headers, body: { message: 'Retry later' } };
  }

  #listMrs(req: RecordedRequest): Reply {
    const state = req.query.get('state') ?? 'all';
    const source = req.query.get('source_branch');
    const matching = this.mergeRequests
      .filter((m) => (state === 'all' || m.state === state) && (source === null || m.source === source))
      .sort((a, b) => b.iid - a.iid);
    return paged(
      req,
      matching.map((m) => this.#mrJson(m)),
      this.#server,
    );
  }

  #createMr(req: RecordedRequest): Reply {
    const input = req.body as {
      source_branch?: string;
      target_branch?: string;
      title?: string;
      description?: string;
      labels?: string;
      reviewer_ids?: number[];
    };
    if (
      typeof input.source_branch !== 'string' ||
      typeof input.target_branch !== 'string' ||
      typeof input.title !== 'string'
    )
      return { status: 400, body: { message: 'source_branch, target_branch, title are missing' } };
    if (this.mergeRequests.some((m) => m.source === input.source_branch && m.state === 'opened')) {
      return {
        status: 409,
        body: { message: [`Another open merge request already exists for this source branch: !1`] },
      };
    }
    const iid = this.mergeRequests.length + 1;
    const mr: MergeRequest = {
      iid,
      title: input.title,
      description: input.description ?? '',
      source: input.source_branch,
      target: input.target_branch,
      sha: `${String(iid).padStart(2, '0')}${'d'.repeat(38)}`,
      state: 'opened',
      labels: (input.labels ?? '').split(',').filter((l) => l !== ''),
      reviewerIds: input.reviewer_ids ?? [],
      mergeCommit: null,
      hasConflicts: false,
      autoMerge: false,
    };
    this.mergeRequests.push(mr);
    return { status: 201, body: this.#mrJson(mr) };
  }

  #merge(req: RecordedRequest, mr: MergeRequest): Reply {
    const input = req.body as { sha?: string; merge_when_pipeline_succeeds?: boolean };
    if (mr.state !== 'opened') return { status: 405, body: { message: '405 Method Not Allowed' } };
    if (input.sha !== undefined && input.sha !== mr.sha)
      return { status: 409, body: { message: 'SHA does not match HEAD of source branch' } };
    if (mr.hasConflicts) return { status: 406, body: { message: 'Branch cannot be merged' } };
    if (input.merge_when_pipeline_succeeds === true) {
      mr.autoMerge = true;
      return { status: 200, body: this.#mrJson(mr) };
    }
    Object.assign(mr, { state: 'merged', mergeCommit: 'e'.repeat(40) });
    return { status: 200, body: this.#mrJson(mr) };
  }

  #noteJson(n: Note): Record<string, unknown> {
    return {
      id: n.id,
      body: n.body,
      author: { id: n.userId, username: this.#users.get(n.userId)?.username ?? 'ghost' },
      created_at: n.createdAt,
      system: n.system,
      type: n.position === null ? null : 'DiffNote',
      ...(n.position === null ? {} : { position: { ...n.position, old_path: n.position.new_path, old_line: null } }),
    };
  }

  #mrJson(m: MergeRequest): Record<string, unknown> {
    return {
      iid: m.iid,
      id: 10_000 + m.iid,
      web_url: `https://gitlab.example/${this.project}/-/merge_requests/${m.iid}`,
      state: m.state,
      draft: /^draft:/i.test(m.title),
      title: m.title,
      description: m.description,
      source_branch: m.source,
      target_branch: m.target,
      sha: m.sha,
      labels: m.labels,
      reviewers: m.reviewerIds.map((id) => ({ id, username: this.#users.get(id)?.username })),
      has_conflicts: m.hasConflicts,
      detailed_merge_status: m.hasConflicts
        ? 'conflict'
        : (this.#changesRequested.get(m.iid)?.size ?? 0) > 0
          ? 'requested_changes'
          : 'mergeable',
      merge_when_pipeline_succeeds: m.autoMerge,
      merge_commit_sha: m.mergeCommit,
    };
  }
}
