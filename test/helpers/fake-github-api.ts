import { createHash } from 'node:crypto';
import type { FakeGitHub, FakePull, GitHubComment } from './fake-github.js';
import { type RecordedRequest, type Reply, paged } from './fake-forge-http.js';
import { githubIssueRoutes } from './fake-github-issues.js';

/** The REST and GraphQL routes of FakeGitHub, over its state: as GitHub answers them for one repository. */

export function githubRoutes(gh: FakeGitHub): void {
  gh.blobs.route('GET', '/logs/:id', (req, p) => {
    const run = [...gh.state.checks.values()].flat().find((r) => r.id === Number(p.id));
    if (run?.actionsLog == null || req.query.get('sig') !== 'signed')
      return { status: 403, text: 'AuthenticationFailed' };
    return { status: 200, text: run.actionsLog };
  });
  const http = gh.http;
  http.before((req) => gh.gate(req));
  http.after((_req, reply) => {
    reply.headers = {
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': String(gh.remaining),
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      'x-ratelimit-used': String(5000 - gh.remaining),
      ...reply.headers,
    };
  });
  const repo = `/repos/:owner/:repo`;
  http.route('GET', '/user', () => ({ status: 200, body: { login: gh.login }, headers: gh.scopeHeaders() }));
  http.route('GET', `${repo}/collaborators/:user/permission`, (_req, p) => permission(gh, p.user ?? ''));
  http.route('GET', `${repo}/pulls`, (req) => listPulls(gh, req));
  http.route('POST', `${repo}/pulls`, (req) => createPull(gh, req));
  http.route('GET', `${repo}/pulls/:n`, (_req, p) =>
    withPull(gh, p, (pull) => ({ status: 200, body: pullJson(gh, pull, true) })),
  );
  http.route('PATCH', `${repo}/pulls/:n`, (req, p) =>
    withPull(gh, p, (pull) => {
      const change = req.body as { title?: string; body?: string };
      if (typeof change.title === 'string') pull.title = change.title;
      if (typeof change.body === 'string') pull.body = change.body;
      return { status: 200, body: pullJson(gh, pull, true) };
    }),
  );
  http.route('PUT', `${repo}/pulls/:n/merge`, (req, p) => withPull(gh, p, (pull) => merge(gh, pull, req)));
  http.route('POST', `${repo}/pulls/:n/requested_reviewers`, (req, p) =>
    withPull(gh, p, (pull) => {
      const { reviewers } = req.body as { reviewers?: string[] };
      pull.reviewers.push(...(reviewers ?? []));
      return { status: 201, body: pullJson(gh, pull, false) };
    }),
  );
  http.route('GET', `${repo}/pulls/:n/reviews`, (req, p) =>
    paged(
      req,
      (gh.state.reviews.get(Number(p.n)) ?? []).map((r) => ({
        ...commentJson(r),
        state: r.state,
        submitted_at: r.createdAt,
      })),
      gh.url,
    ),
  );
  http.route('GET', `${repo}/pulls/:n/comments`, (req, p) =>
    paged(
      req,
      // GitHub's default order is `sort=created&direction=asc`.
      ordered(req, since(req, gh.state.reviewComments.get(Number(p.n)) ?? [])).map((c) => ({
        ...commentJson(c),
        path: c.path,
        line: c.line,
      })),
      gh.url,
    ),
  );
  http.route('GET', `${repo}/issues/:n/comments`, (req, p) =>
    paged(
      req,
      since(req, gh.state.comments.get(Number(p.n)) ?? []).map((c) => commentJson(c)),
      gh.url,
    ),
  );
  http.route('POST', `${repo}/issues/:n/comments`, (req, p) => {
    const { body } = req.body as { body?: string };
    if (typeof body !== 'string') return { status: 422, body: { message: 'Validation Failed' } };
    const id = gh.addComment(Number(p.n), gh.login, body, 'OWNER');
    return { status: 201, body: { id, body } };
  });
  githubIssueRoutes(gh);
  http.route('POST', `${repo}/issues/:n/labels`, (req, p) =>
    gh.issues.some((i) => i.number === Number(p.n))
      ? addIssueLabels(gh, Number(p.n), req)
      : withPull(gh, p, (pull) => {
          const { labels } = req.body as { labels?: string[] };
          pull.labels.push(...(labels ?? []));
          return { status: 200, body: pull.labels.map((name) => ({ name })) };
        }),
  );
  http.route('GET', `${repo}/issues`, (req) => listIssues(gh, req));
  http.route('GET', `${repo}/commits/:ref/check-runs`, (req, p) => {
    const runs = (gh.state.checks.get(p.ref ?? '') ?? []).map((r) => ({
      id: r.id,
      name: r.name,
      status: r.status,
      conclusion: r.conclusion,
      app: { slug: r.actionsLog === null ? 'some-ci' : 'github-actions' },
      html_url: `${gh.url}/checks/${r.id}`,
      details_url: `${gh.url}/checks/${r.id}/details`,
      output: { title: r.name, summary: r.summary, text: r.text },
    }));
    const page = paged(req, runs, gh.url);
    return { ...page, body: { total_count: runs.length, check_runs: page.body } };
  });
  http.route('GET', `${repo}/actions/jobs/:id/logs`, (_req, p) => {
    const run = [...gh.state.checks.values()].flat().find((r) => r.id === Number(p.id) && r.actionsLog !== null);
    if (run === undefined) return { status: 404, body: { message: 'Not Found' } };
    // GitHub redirects to signed blob storage on another host.
    return { status: 302, headers: { location: `${gh.blobUrl}/logs/${run.id}?sig=signed` }, body: undefined };
  });
  http.route('GET', `${repo}/commits/:ref/status`, (_req, p) => {
    const statuses = gh.state.statuses.get(p.ref ?? '') ?? [];
    const state = statuses.some((s) => s.state === 'failure' || s.state === 'error')
      ? 'failure'
      : statuses.every((s) => s.state === 'success') && statuses.length > 0
        ? 'success'
        : 'pending';
    return {
      status: 200,
      body: {
        state,
        total_count: statuses.length,
        statuses: statuses.map((s) => ({
          context: s.context,
          state: s.state,
          description: s.description,
          target_url: s.targetUrl,
        })),
      },
    };
  });
  http.route('GET', `${repo}/branches/:branch*/protection`, (_req, p) => {
    const protection = gh.state.protection.get(p.branch ?? '');
    if (protection === undefined) return { status: 404, body: { message: 'Branch not protected' } };
    return {
      status: 200,
      body: {
        required_status_checks: {
          strict: true,
          contexts: protection.requiredChecks,
          checks: protection.requiredChecks.map((context) => ({ context, app_id: null })),
        },
        required_pull_request_reviews: { required_approving_review_count: protection.requiredApprovals },
      },
    };
  });
  http.route('GET', `${repo}/branches/:branch*`, (_req, p) => {
    const protection = gh.state.protection.get(p.branch ?? '');
    return {
      status: 200,
      body: { name: p.branch, protected: protection !== undefined, commit: { sha: 'a'.repeat(40) } },
    };
  });
  http.route('POST', '/graphql', (req) => graphql(gh, req));
}

/**
 * GitHub's answer to "which permission has this user": `permission` is the legacy level (`maintain` reads as
 * `write`, `triage` as `read`), `role_name` the role itself. A user GitHub does not know is a 404.
 */
function permission(gh: FakeGitHub, user: string): Reply {
  if (!/^[A-Za-z0-9-]+$/.test(user)) return { status: 404, body: { message: `${user} is not a user` } };
  const role = gh.roles.get(user) ?? 'read';
  const legacy = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : role;
  return {
    status: 200,
    body: { permission: legacy, role_name: role, user: { login: user, type: 'User', permissions: {} } },
  };
}

function addIssueLabels(gh: FakeGitHub, number: number, req: RecordedRequest): Reply {
  const { labels } = req.body as { labels?: string[] };
  for (const label of labels ?? []) gh.label(number, label, gh.login);
  return { status: 200, body: gh.issue(number).labels.map((name) => ({ name })) };
}

function withPull(gh: FakeGitHub, params: Record<string, string>, answer: (pull: FakePull) => Reply): Reply {
  const pull = gh.pulls.find((p) => p.number === Number(params.n));
  if (pull === undefined) return { status: 404, body: { message: 'Not Found' } };
  return answer(pull);
}

function listPulls(gh: FakeGitHub, req: RecordedRequest): Reply {
  const state = req.query.get('state') ?? 'open';
  const head = req.query.get('head');
  const matching = gh.pulls
    .filter((p) => state === 'all' || p.state === state)
    .filter((p) => head === null || `${gh.owner}:${p.head}` === head)
    .sort((a, b) => b.number - a.number);
  return paged(
    req,
    matching.map((p) => pullJson(gh, p, false)),
    gh.url,
  );
}

function createPull(gh: FakeGitHub, req: RecordedRequest): Reply {
  const input = req.body as { title?: string; head?: string; base?: string; body?: string; draft?: boolean };
  if (typeof input.title !== 'string' || typeof input.head !== 'string' || typeof input.base !== 'string') {
    return { status: 422, body: { message: 'Validation Failed' } };
  }
  const head = input.head.replace(`${gh.owner}:`, '');
  const fault = gh.createFaults.shift();
  if (fault === 'fail') return { status: 502, body: { message: 'Server Error' } };
  if (gh.pulls.some((p) => p.head === head && p.state === 'open')) {
    return {
      status: 422,
      body: {
        message: 'Validation Failed',
        errors: [{ message: `A pull request already exists for ${gh.owner}:${head}.` }],
      },
    };
  }
  const number = gh.nextNumber();
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
    createdAt: gh.tick(),
  };
  gh.pulls.push(pull);
  if (fault === 'lost') return { status: 502, body: { message: 'Server Error' } };
  if (fault === 'hang') {
    gh.onHang(req);
    return { status: 0, hang: true };
  }
  return { status: 201, body: pullJson(gh, pull, true) };
}

function merge(gh: FakeGitHub, pull: FakePull, req: RecordedRequest): Reply {
  const input = req.body as { sha?: string; merge_method?: string; commit_title?: string; commit_message?: string };
  if (pull.state !== 'open' || pull.mergeable === false)
    return { status: 405, body: { message: 'Pull Request is not mergeable' } };
  if (input.sha !== undefined && input.sha !== pull.headSha)
    return { status: 409, body: { message: 'Head branch was modified. Review and try the merge again.' } };
  const sha = 'e'.repeat(40);
  Object.assign(pull, { state: 'closed', merged: true, mergeCommit: sha });
  return { status: 200, body: { merged: true, sha, message: 'Pull Request successfully merged' } };
}

function listIssues(gh: FakeGitHub, req: RecordedRequest): Reply {
  const state = req.query.get('state') ?? 'open';
  const labels = (req.query.get('labels') ?? '').split(',').filter((l) => l !== '');
  const asIssues = gh.issues.map((i) => ({
    number: i.number,
    title: i.title,
    body: i.body,
    state: i.state,
    labels: i.labels,
    author: i.author,
    pull: false,
  }));
  // GitHub's issues list includes pull requests (with a `pull_request` key): clients filter them out.
  const asPulls = gh.pulls.map((p) => ({
    number: p.number,
    title: p.title,
    body: p.body,
    state: p.state,
    labels: p.labels,
    author: gh.login,
    pull: true,
  }));
  const matching = [...asIssues, ...asPulls]
    .filter((i) => state === 'all' || i.state === state)
    .filter((i) => labels.every((l) => i.labels.includes(l)))
    .sort((a, b) => b.number - a.number);
  const page = paged(
    req,
    matching.map((i) => ({
      number: i.number,
      title: i.title,
      body: i.body,
      state: i.state,
      user: { login: i.author },
      labels: i.labels.map((name) => ({ name })),
      html_url: `https://github.example/${gh.owner}/${gh.name}/${i.pull ? 'pull' : 'issues'}/${i.number}`,
      ...(i.pull ? { pull_request: { url: `${gh.url}/repos/${gh.owner}/${gh.name}/pulls/${i.number}` } } : {}),
    })),
    gh.url,
  );
  // A conditional request: GitHub answers an unchanged resource 304, with no body.
  const etag = `"${createHash('sha256').update(JSON.stringify(page.body)).digest('hex').slice(0, 32)}"`;
  if (req.headers['if-none-match'] === etag) return { status: 304, headers: { etag } };
  return { ...page, headers: { ...page.headers, etag } };
}

function graphql(gh: FakeGitHub, req: RecordedRequest): Reply {
  const { query, variables } = req.body as { query?: string; variables?: { pullRequestId?: string } };
  if (typeof query !== 'string' || !query.includes('enablePullRequestAutoMerge'))
    return { status: 200, body: { errors: [{ message: 'unsupported query' }] } };
  const pull = gh.pulls.find((p) => p.node_id === variables?.pullRequestId);
  if (pull === undefined)
    return { status: 200, body: { errors: [{ type: 'NOT_FOUND', message: 'Could not resolve to a node' }] } };
  if (!gh.allowAutoMerge)
    return {
      status: 200,
      body: {
        data: { enablePullRequestAutoMerge: null },
        errors: [{ type: 'UNPROCESSABLE', message: 'Auto merge is not allowed for this repository' }],
      },
    };
  pull.autoMerge = true;
  return { status: 200, body: { data: { enablePullRequestAutoMerge: { pullRequest: { number: pull.number } } } } };
}

function since<T extends GitHubComment>(req: RecordedRequest, items: readonly T[]): T[] {
  const since = req.query.get('since');
  return since === null ? [...items] : items.filter((c) => c.createdAt >= since);
}

function ordered<T extends GitHubComment>(req: RecordedRequest, items: T[]): T[] {
  return req.query.get('direction') === 'desc' ? [...items].reverse() : items;
}

function commentJson(c: GitHubComment): Record<string, unknown> {
  return {
    id: c.id,
    user: { login: c.user },
    author_association: c.association,
    body: c.body,
    created_at: c.createdAt,
    html_url: `https://github.example/c/${c.id}`,
  };
}

function pullJson(gh: FakeGitHub, p: FakePull, full: boolean): Record<string, unknown> {
  return {
    number: p.number,
    node_id: p.node_id,
    html_url: `https://github.example/${gh.owner}/${gh.name}/pull/${p.number}`,
    state: p.state,
    draft: p.draft,
    title: p.title,
    body: p.body,
    merged_at: p.merged ? '2026-01-02T00:00:00Z' : null,
    head: { ref: p.head, sha: p.headSha, label: `${gh.owner}:${p.head}` },
    base: { ref: p.base },
    labels: p.labels.map((name) => ({ name })),
    requested_reviewers: p.reviewers.map((login) => ({ login })),
    // GitHub computes these only for a single pull request, never in a list.
    ...(full ? { merged: p.merged, mergeable: p.mergeable, merge_commit_sha: p.mergeCommit } : {}),
  };
}
