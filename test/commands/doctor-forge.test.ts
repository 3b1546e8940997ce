import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimpleGitAdapter } from '../../src/adapters/git/simple-git.js';
import { forgeChecks, type ForgeDoctorConfig } from '../../src/commands/doctor-forge.js';
import { FakeGitHub } from '../helpers/fake-github.js';
import { FakeGitLab } from '../helpers/fake-gitlab.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { pathWithout } from '../helpers/path-without.js';

/** doctor's forge lines against a real bare remote and the loopback forges. */
describe('doctor: the forge before a night of pull requests', () => {
  let root: string;
  let scratch: string;
  let remote: string;
  let github: FakeGitHub;
  let noGh: { path: string; cleanup: () => void };
  let cleanup: () => Promise<void>;
  const tuning = { msPerSecond: 10, writeSpacingMs: 0 };
  const githubPr: ForgeDoctorConfig = { base: 'main', land: 'pr', forge: { type: 'github', repo: 'acme/widgets' } };

  beforeEach(async () => {
    ({ root, cleanup } = await makeRepo({ 'a.txt': 'a\n' }));
    scratch = await mkdtemp(join(tmpdir(), 'loopfleet-doctor-forge-'));
    remote = join(scratch, 'origin.git');
    await git(scratch, 'init', '--quiet', '--bare', remote);
    await git(root, 'remote', 'add', 'origin', remote);
    await git(root, 'push', '--quiet', 'origin', 'main');
    github = await new FakeGitHub('acme/widgets').start();
    noGh = pathWithout(['gh']);
  });
  afterEach(async () => {
    await github.close();
    noGh.cleanup();
    await cleanup();
    await rm(scratch, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    PATH: noGh.path,
    GH_TOKEN: github.token,
    GITHUB_API_URL: github.url,
    ...extra,
  });
  const lines = async (config: ForgeDoctorConfig, environment: Record<string, string>) =>
    (await forgeChecks(config, { git: new SimpleGitAdapter(root), env: environment, tuning })).map(
      (c) => `${c.ok ? 'ok' : 'FAIL'} ${c.what}: ${c.detail}`,
    );

  it('checks the remote, the token’s scopes and base’s protection, and never prints the token', async () => {
    github.protect('main', { requiredChecks: ['test', 'lint'], requiredApprovals: 1 });
    const head = await git(root, 'rev-parse', 'HEAD');
    const out = await lines(githubPr, env());
    expect(out).toEqual([
      `ok forge: GitHub acme/widgets at ${github.url}`,
      `ok remote: origin (${remote}) answers, main at ${head.slice(0, 12)}`,
      'ok token: GH_TOKEN, as loopfleet-bot, scopes repo, workflow',
      'ok branch protection: main is protected: a merge requires checks test, lint and 1 approving review(s)',
    ]);
    expect(out.join('\n')).not.toContain(github.token);
  });

  it('says nothing unless land: pr or forge: is set', async () => {
    expect(await lines({ base: 'main' }, env())).toEqual([]);
    expect(await lines({ base: 'main', land: 'merge' }, env())).toEqual([]);
    expect(github.requests).toHaveLength(0);
  });

  it('fails on a missing token, naming where to put one, and asks the forge nothing', async () => {
    const out = await lines(githubPr, { PATH: noGh.path, GITHUB_API_URL: github.url });
    expect(out[1]).toMatch(/^ok remote: origin \(.*\) answers, main at [0-9a-f]{12}$/);
    expect(out.at(-1)).toBe(
      'FAIL token: no GitHub token for 127.0.0.1: set GH_TOKEN or GITHUB_TOKEN, or log in with gh auth login',
    );
    expect(github.requests).toHaveLength(0);
  });

  it('fails on a token without the repo scope, and on a token the forge refuses', async () => {
    github.scopes = 'read:user';
    expect(await lines(githubPr, env())).toContain(
      'FAIL token: GH_TOKEN, as loopfleet-bot, lacks the repo scope (it has read:user): make one with repo',
    );
    github.scopes = null;
    expect((await lines(githubPr, env())).find((l) => l.includes('token:'))).toMatch(
      /^ok token: GH_TOKEN, as loopfleet-bot; a fine-grained token/,
    );
    const refused = await lines(githubPr, env({ GH_TOKEN: 'ghp_not_the_token' }));
    expect(refused).toContain('FAIL token: GH_TOKEN: GitHub reading the token’s user: 401 Bad credentials');
    expect(refused.join('\n')).not.toContain('ghp_not_the_token');
  });

  it('fails on a remote without base, a remote that does not answer, and no remote', async () => {
    expect(await lines({ ...githubPr, base: 'develop' }, env())).toContain(
      `FAIL remote: origin (${remote}) answers, but has no develop: push it first (git push origin develop)`,
    );
    await git(root, 'remote', 'set-url', 'origin', join(scratch, 'gone.git'));
    expect((await lines(githubPr, env())).find((l) => l.includes('remote:'))).toMatch(
      /^FAIL remote: origin \(.*gone\.git\) does not answer: /,
    );
    await git(root, 'remote', 'remove', 'origin');
    const none = await lines({ base: 'main', land: 'pr' }, env());
    expect(none).toEqual([
      'FAIL remote: there is no remote origin: git remote add origin URL',
      'FAIL forge: land: pr needs a forge: there is no remote "origin" (git remote add origin URL)',
    ]);
  });

  it('fails on land: pr with forge: none, and passes forge: none with the local merge', async () => {
    expect(await lines({ base: 'main', land: 'pr', forge: 'none' }, env())).toEqual([
      'FAIL forge: land: pr needs a forge: forge: none',
    ]);
    expect(await lines({ base: 'main', forge: 'none' }, env())).toEqual(['ok forge: none (forge: none)']);
  });

  it('checks a GitLab project the same way: the api scope, protection and approvals', async () => {
    const gitlab = await new FakeGitLab('acme/platform/widgets').start();
    try {
      gitlab.protect('main', 2);
      gitlab.pipelineMustSucceed = true;
      const environment = { PATH: noGh.path, GITLAB_TOKEN: gitlab.token, GITLAB_API_URL: gitlab.url };
      const config: ForgeDoctorConfig = {
        base: 'main',
        land: 'pr',
        forge: { type: 'gitlab', repo: 'acme/platform/widgets' },
      };
      const out = await lines(config, environment);
      expect(out).toEqual([
        `ok forge: GitLab acme/platform/widgets at ${gitlab.url}`,
        expect.stringMatching(/^ok remote: origin \(.*\) answers, main at [0-9a-f]{12}$/),
        'ok token: GITLAB_TOKEN, as loopfleet-bot, scopes api',
        'ok branch protection: main is protected: a merge requires checks pipeline and 2 approving review(s)',
      ]);
      gitlab.scopes = ['read_api'];
      expect(await lines(config, environment)).toContain(
        'FAIL token: GITLAB_TOKEN, as loopfleet-bot, lacks the api scope (it has read_api): make one with api',
      );
    } finally {
      await gitlab.close();
    }
  });
});
