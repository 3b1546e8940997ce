import { paged, type RecordedRequest, type Reply } from './fake-forge-http.js';
import type { FakeGitLab, FakeGitLabIssue } from './fake-gitlab.js';

/**
 * The issue routes of FakeGitLab, as GitLab's REST v4 reference describes them: the project's issues
 * (`labels`, `state`, `updated_after`, `order_by`, `sort`), editing one (`add_labels`, `remove_labels`,
 * `state_event`), its notes (list, create, edit), its resource label events, its links (`link_type`
 * `blocks` / `is_blocked_by`) and the project's labels. Lists are paged as GitLab pages them: `page`,
 * `per_page` (default 20), `x-page`, `x-per-page`, `x-next-page` (empty on the last page), `x-prev-page`,
 * `x-total`, `x-total-pages`, and a `link` header. GitLab ignores `If-None-Match` on these lists, and so
 * does the fake.
 */

type Handler = (req: RecordedRequest, params: Record<string, string>) => Reply;
type WithProject = (handler: Handler) => Handler;

const PROJECT_ID = 77;

/** `items` paged as GitLab pages a list (its `x-*` headers beside the `link` header). */
export function gitlabPaged<T>(req: RecordedRequest, items: readonly T[], server: string): Reply {
  const query = new URLSearchParams(req.query);
  if (!query.has('per_page')) query.set('per_page', '20');
  const reply = paged({ ...req, query }, items, server);
  const perPage = Math.max(1, Number(query.get('per_page')));
  const page = Math.max(1, Number(query.get('page') ?? '1'));
  const pages = Math.max(1, Math.ceil(items.length / perPage));
  reply.headers = {
    ...reply.headers,
    'x-page': String(page),
    'x-per-page': String(perPage),
    'x-next-page': page < pages ? String(page + 1) : '',
    'x-prev-page': page > 1 ? String(page - 1) : '',
    'x-total': String(items.length),
    'x-total-pages': String(pages),
  };
  return reply;
}

export function gitlabIssueRoutes(gl: FakeGitLab, p: string, withProject: WithProject): void {
  const http = gl.http;
  const withIssue = (
    handler: (req: RecordedRequest, issue: FakeGitLabIssue, params: Record<string, string>) => Reply,
  ) =>
    withProject((req, params) => {
      const issue = gl.issues.find((i) => i.iid === Number(params.iid));
      return issue === undefined ? { status: 404, body: { message: '404 Not found' } } : handler(req, issue, params);
    });
  const json = (i: FakeGitLabIssue) => ({
    id: 9000 + i.iid,
    iid: i.iid,
    project_id: PROJECT_ID,
    title: i.title,
    description: i.description,
    state: i.state,
    labels: i.labels,
    author: gl.userJson(i.authorId),
    updated_at: i.updatedAt,
    web_url: `https://gitlab.example/${gl.project}/-/issues/${i.iid}`,
  });
  const noteJson = (n: FakeGitLabIssue['notes'][number], i: FakeGitLabIssue) => ({
    id: n.id,
    body: n.body,
    author: gl.userJson(n.userId),
    created_at: n.createdAt,
    system: n.system,
    noteable_type: 'Issue',
    noteable_iid: i.iid,
  });

  http.route(
    'GET',
    `${p}/issues`,
    withProject((req) => {
      const labels = (req.query.get('labels') ?? '').split(',').filter((l) => l !== '');
      const state = req.query.get('state');
      const after = req.query.get('updated_after');
      const by = req.query.get('order_by') === 'updated_at' ? 'updatedAt' : 'iid';
      const matching = gl.issues
        .filter(
          (i) =>
            (state === null || state === 'all' || i.state === state) &&
            labels.every((l) => i.labels.includes(l)) &&
            (after === null || Date.parse(i.updatedAt) >= Date.parse(after)),
        )
        .sort((a, b) => (by === 'iid' ? a.iid - b.iid : Date.parse(a.updatedAt) - Date.parse(b.updatedAt)));
      if (req.query.get('sort') !== 'asc') matching.reverse();
      return gitlabPaged(req, matching.map(json), gl.server);
    }),
  );
  http.route(
    'PUT',
    `${p}/issues/:iid`,
    withIssue((req, issue) => {
      const change = req.body as { add_labels?: string; remove_labels?: string; state_event?: string };
      const list = (v: string | undefined) => (v ?? '').split(',').filter((l) => l !== '');
      gl.relabelIssue(issue.iid, 'loopfleet-bot', list(change.add_labels), list(change.remove_labels));
      if (change.state_event === 'close' || change.state_event === 'reopen') {
        issue.state = change.state_event === 'close' ? 'closed' : 'opened';
        issue.updatedAt = gl.tick();
      }
      return { status: 200, body: json(issue) };
    }),
  );
  http.route(
    'GET',
    `${p}/issues/:iid/notes`,
    withIssue((req, issue) => {
      // GitLab's default order is `order_by=created_at&sort=desc`.
      const notes = req.query.get('sort') === 'asc' ? issue.notes : [...issue.notes].reverse();
      return gitlabPaged(
        req,
        notes.map((n) => noteJson(n, issue)),
        gl.server,
      );
    }),
  );
  http.route(
    'POST',
    `${p}/issues/:iid/notes`,
    withIssue((req, issue) => {
      const { body } = req.body as { body?: string };
      if (typeof body !== 'string' || body === '') return { status: 400, body: { message: 'body is missing' } };
      const note = { id: gl.newId(), userId: 1, body, system: false, createdAt: gl.tick() };
      issue.notes.push(note);
      return { status: 201, body: noteJson(note, issue) };
    }),
  );
  http.route(
    'PUT',
    `${p}/issues/:iid/notes/:note`,
    withIssue((req, issue, params) => {
      const note = issue.notes.find((n) => n.id === Number(params.note));
      if (note === undefined) return { status: 404, body: { message: '404 Note Not Found' } };
      // Only its author edits a note.
      if (note.userId !== 1) return { status: 403, body: { message: '403 Forbidden' } };
      const { body } = req.body as { body?: string };
      if (typeof body !== 'string' || body === '') return { status: 400, body: { message: 'body is missing' } };
      note.body = body;
      return { status: 200, body: noteJson(note, issue) };
    }),
  );
  http.route(
    'GET',
    `${p}/issues/:iid/resource_label_events`,
    withIssue((req, issue) =>
      gitlabPaged(
        req,
        issue.labelEvents.map((e, n) => ({
          id: n + 1,
          user: gl.userJson(e.userId),
          created_at: e.createdAt,
          resource_type: 'Issue',
          resource_id: 9000 + issue.iid,
          label: { id: 100 + n, name: e.label },
          action: e.action,
        })),
        gl.server,
      ),
    ),
  );
  http.route(
    'GET',
    `${p}/issues/:iid/links`,
    withIssue((_req, issue) => {
      const blockers = issue.blockedBy.map((n) => ({ ...json(gl.issue(n)), link_type: 'is_blocked_by' }));
      const elsewhere = issue.blockedByElsewhere.map((n) => ({
        ...json({ ...issue, iid: n, title: `Elsewhere ${n}`, state: 'opened' }),
        project_id: PROJECT_ID + 1,
        link_type: 'is_blocked_by',
      }));
      const blocked = gl.issues
        .filter((i) => i.blockedBy.includes(issue.iid))
        .map((i) => ({ ...json(i), link_type: 'blocks' }));
      return {
        status: 200,
        body: [...blockers, ...elsewhere, ...blocked].map((i, n) => ({ ...i, issue_link_id: n + 1 })),
      };
    }),
  );
  http.route(
    'GET',
    `${p}/labels/:name`,
    withProject((_req, params) => {
      const name = params.name ?? '';
      return gl.labels.has(name) || gl.issues.some((i) => i.labels.includes(name))
        ? { status: 200, body: { id: 1, name, color: '#ededed' } }
        : { status: 404, body: { message: '404 Label Not Found' } };
    }),
  );
}
