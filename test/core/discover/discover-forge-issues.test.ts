import { afterEach, describe, expect, it } from 'vitest';
import { discover } from '../../../src/commands/discover.js';
import { findRepo } from '../../../src/commands/repo.js';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { FakeGitHub } from '../../helpers/fake-github.js';
import { FakeGitLab } from '../../helpers/fake-gitlab.js';
import { git, read } from '../../helpers/git-repo.js';
import { pathWithout } from '../../helpers/path-without.js';
import { fixtureRepo, replay } from '../../helpers/discover-fixture.js';

/** discover's issue finder through the forge client: a real repository whose remote names the forge, the loopback forges. */

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function repoWithRemote(url: string): Promise<string> {
  const r = await fixtureRepo();
  cleanups.push(r.cleanup);
  await git(r.root, 'remote', 'add', 'origin', url);
  return r.root;
}

/** The person's environment, from scratch: no token of this machine's, no gh. */
function personEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const noGh = pathWithout(['gh']);
  cleanups.push(() => noGh.cleanup());
  return { PATH: noGh.path, HOME: process.env.HOME, ...extra };
}

async function runIssues(root: string, env: NodeJS.ProcessEnv, label = 'loopfleet') {
  const lines: string[] = [];
  const remote = replay({ gh: null });
  const code = await discover(
    await findRepo(root),
    { dryRun: false, limit: null, only: new Set(['issues']), githubLabel: label, env, remote: () => remote },
    (l) => lines.push(l),
  );
  return { code, lines, ghCalls: remote.calls };
}

describe('discover: issues through the forge client', () => {
  it('proposes GitHub issues with the label, linked, as gh#N sources that their pull request fixes', {
    timeout: 60_000,
  }, async () => {
    const github = await new FakeGitHub('acme/widgets').start();
    cleanups.push(() => github.close());
    github.addIssue('Crash on empty input', 'Steps:\n  check: rm -rf /\n- [ ] T-99 not an item', ['good first']);
    github.addIssue('Not labelled', '', ['bug']);
    const root = await repoWithRemote('git@github.com:acme/widgets.git');

    const run = await runIssues(root, personEnv({ GH_TOKEN: github.token, GITHUB_API_URL: github.url }), 'good first');
    expect(run.code).toBe(0);
    expect(run.lines).toContain('  · issues: 1 open GitHub issue(s) labelled good first');
    expect(run.ghCalls).toEqual([]);
    const listed = github.requests.find((r) => r.path === '/repos/acme/widgets/issues');
    expect(listed?.query.get('labels')).toBe('good first');

    const text = await read(root, 'BACKLOG.md');
    const issue = parseBacklog(text, 'BACKLOG.md').backlog.tasks.find((t) => t.source === 'gh#1');
    expect(issue?.title).toBe('GitHub #1: Crash on empty input');
    expect(issue?.description).toContain(
      'Open GitHub issue #1 (https://github.example/acme/widgets/issues/1), labelled good first; its pull request closes it when merged (Fixes #1).',
    );
    // The issue's text stays quoted: its `check:` line and its checkbox are never fields or items.
    expect(issue?.check).toBeUndefined();
    expect(issue?.description).toContain('check: rm -rf /');
    expect(parseBacklog(text, 'BACKLOG.md').backlog.tasks.map((t) => t.id)).toEqual(['T-1', 'T-2']);
    expect(text).not.toContain(github.token);

    // A second run finds the same issue already proposed.
    await runIssues(root, personEnv({ GH_TOKEN: github.token, GITHUB_API_URL: github.url }), 'good first');
    expect(parseBacklog(await read(root, 'BACKLOG.md'), 'BACKLOG.md').backlog.tasks).toHaveLength(2);
  });

  it('proposes GitLab issues as gl#N sources that their merge request closes', { timeout: 60_000 }, async () => {
    const gitlab = await new FakeGitLab('acme/platform/widgets').start();
    cleanups.push(() => gitlab.close());
    gitlab.addIssue('Slow export', 'It takes minutes.', ['loopfleet']);
    const root = await repoWithRemote('https://gitlab.com/acme/platform/widgets.git');
    const run = await runIssues(root, personEnv({ GITLAB_TOKEN: gitlab.token, GITLAB_API_URL: gitlab.url }));
    expect(run.lines).toContain('  · issues: 1 open GitLab issue(s) labelled loopfleet');
    const issue = parseBacklog(await read(root, 'BACKLOG.md'), 'BACKLOG.md').backlog.tasks.find(
      (t) => t.source === 'gl#1',
    );
    expect(issue?.title).toBe('GitLab #1: Slow export');
    expect(issue?.description).toContain('its pull request closes it when merged (Closes #1).');
    expect(run.ghCalls).toEqual([]);
  });

  it('proposes nothing, with a note naming what is missing, without a GitLab token or when the forge refuses', {
    timeout: 60_000,
  }, async () => {
    const root = await repoWithRemote('https://gitlab.com/acme/platform/widgets.git');
    const none = await runIssues(root, personEnv({}));
    expect(none.lines).toContain(
      '  · issues: skipped, no GitLab token: set GITLAB_TOKEN to a token with the api scope for gitlab.com',
    );
    expect(none.ghCalls).toEqual([]);

    const github = await new FakeGitHub('acme/widgets').start();
    cleanups.push(() => github.close());
    await git(root, 'remote', 'set-url', 'origin', 'https://github.com/acme/widgets.git');
    const refused = await runIssues(root, personEnv({ GH_TOKEN: 'ghp_wrong', GITHUB_API_URL: github.url }));
    expect(refused.code).toBe(0);
    expect(refused.lines).toContain(
      '  · issues: GitHub did not list them: GitHub listing issues labelled loopfleet: 401 Bad credentials',
    );
    expect(parseBacklog(await read(root, 'BACKLOG.md'), 'BACKLOG.md').backlog.tasks).toHaveLength(1);
  });
});
