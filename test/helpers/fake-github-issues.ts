import type { FakeGitHub } from './fake-github.js';
import { paged, type Reply } from './fake-forge-http.js';

/**
 * The issue routes of FakeGitHub a tracker calls, as GitHub's REST reference describes them: label events
 * (`GET …/issues/{n}/events`), removing a label, adding labels to an issue, editing a comment, and the
 * relations — issue dependencies (`…/dependencies/blocked_by`) and sub-issues (`…/sub_issues`).
 */
export function githubIssueRoutes(gh: FakeGitHub): void {
  const http = gh.http;
  const repo = `/repos/:owner/:repo`;
  const withIssue = (n: string | undefined, answer: (issue: ReturnType<FakeGitHub['issue']>) => Reply): Reply => {
    const issue = gh.issues.find((i) => i.number === Number(n));
    return issue === undefined ? { status: 404, body: { message: 'Not Found' } } : answer(issue);
  };
  const summary = (number: number) => {
    const i = gh.issue(number);
    return { number: i.number, title: i.title, state: i.state, html_url: `https://github.example/i/${i.number}` };
  };
  // The repository's labels: those its issues and pull requests carry, and those made for it.
  http.route('GET', `${repo}/labels/:name`, (_req, p) =>
    gh.labels.has(p.name ?? '') || [...gh.issues, ...gh.pulls].some((i) => i.labels.includes(p.name ?? ''))
      ? { status: 200, body: { name: p.name, color: 'ededed' } }
      : { status: 404, body: { message: 'Not Found' } },
  );
  http.route('DELETE', `${repo}/issues/:n/labels/:name`, (_req, p) =>
    withIssue(p.n, (issue) => {
      if (!issue.labels.includes(p.name ?? '')) return { status: 404, body: { message: 'Label does not exist' } };
      issue.labels = issue.labels.filter((l) => l !== p.name);
      issue.events.push({ event: 'unlabeled', label: p.name ?? '', actor: gh.login });
      return { status: 200, body: issue.labels.map((name) => ({ name })) };
    }),
  );
  http.route('GET', `${repo}/issues/:n/events`, (req, p) =>
    withIssue(p.n, (issue) =>
      paged(
        req,
        issue.events.map((e, i) => ({
          id: i + 1,
          event: e.event,
          actor: { login: e.actor },
          label: { name: e.label },
        })),
        gh.url,
      ),
    ),
  );
  http.route('GET', `${repo}/issues/:n/dependencies/blocked_by`, (req, p) =>
    withIssue(p.n, (issue) => paged(req, issue.blockedBy.map(summary), gh.url)),
  );
  http.route('GET', `${repo}/issues/:n/sub_issues`, (req, p) =>
    withIssue(p.n, (issue) => paged(req, issue.subIssues.map(summary), gh.url)),
  );
  http.route('PATCH', `${repo}/issues/comments/:id`, (req, p) => {
    const { body } = req.body as { body?: string };
    for (const comments of gh.state.comments.values()) {
      const comment = comments.find((c) => c.id === Number(p.id));
      if (comment === undefined) continue;
      if (typeof body !== 'string') return { status: 422, body: { message: 'Validation Failed' } };
      comment.body = body;
      return { status: 200, body: { id: comment.id, body } };
    }
    return { status: 404, body: { message: 'Not Found' } };
  });
}
