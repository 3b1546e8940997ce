import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerChecks } from '../../src/commands/doctor-tracker.js';
import { DEFAULT_TRACKER } from '../../src/domain/tracker-setting.js';
import { FakeGitHub } from '../helpers/fake-github.js';
import { FakeGitLab } from '../helpers/fake-gitlab.js';

/** doctor's tracker section against the loopback GitHub: the repository, the token, write access, the label. */

let github: FakeGitHub;
let gitlab: FakeGitLab;
beforeAll(async () => {
  github = await new FakeGitHub('acme/widgets').start();
  gitlab = await new FakeGitLab('acme/platform/widgets').start();
});
afterAll(async () => {
  await github.close();
  await gitlab.close();
});

const tracker = { type: 'github' as const, label: 'loopfleet', ...DEFAULT_TRACKER };
const git = { remoteUrl: async () => 'https://github.com/acme/widgets.git' };
const env = () => ({ GH_TOKEN: github.token, GITHUB_API_URL: github.url, GITHUB_TOKEN: '' });
const run = (config: Parameters<typeof trackerChecks>[0], e: Record<string, string> = env()) =>
  trackerChecks(config, { git, env: e, tuning: { msPerSecond: 1 } });

describe('doctor: the tracker', () => {
  it('checks nothing without tracker:', async () => {
    expect(await run({})).toEqual([]);
  });

  it('says the token’s user may write and the label is missing', async () => {
    const checks = await run({ forge: { type: 'github', repo: 'acme/widgets' }, tracker });
    expect(checks.map((c) => [c.ok, c.what, c.detail])).toEqual([
      [
        true,
        'tracker',
        `GitHub issues of acme/widgets labelled loopfleet, as ${github.login} (admin, through GH_TOKEN)`,
      ],
      [false, 'tracker label', 'acme/widgets has no label loopfleet: create it, then put it on the issues to run'],
    ]);
    github.labels.add('loopfleet');
    expect((await run({ forge: { type: 'github', repo: 'acme/widgets' }, tracker }))[1]).toMatchObject({ ok: true });
  });

  it('fails a token whose user may only read, and a missing token, never printing it', async () => {
    github.grant(github.login, 'triage');
    const checks = await run({ forge: { type: 'github', repo: 'acme/widgets' }, tracker });
    expect(checks[0]).toMatchObject({ ok: false, detail: expect.stringContaining('need write access') });
    github.grant(github.login, 'admin');
    const none = await run(
      { forge: { type: 'github', repo: 'acme/widgets' }, tracker },
      { GITHUB_API_URL: github.url, GH_TOKEN: '', GITHUB_TOKEN: '', PATH: '' },
    );
    expect(none).toHaveLength(1);
    expect(none[0]).toMatchObject({ ok: false, what: 'tracker' });
    expect(JSON.stringify(none)).not.toContain(github.token);
  });
});

describe('doctor: a GitLab tracker', () => {
  const onGitlab = { type: 'gitlab' as const, label: 'loopfleet', ...DEFAULT_TRACKER };
  const config = { forge: { type: 'gitlab' as const, repo: 'acme/platform/widgets' }, tracker: onGitlab };
  const glEnv = () => ({ GITLAB_TOKEN: gitlab.token, GITLAB_API_URL: gitlab.url, GH_TOKEN: '', GITHUB_TOKEN: '' });
  const check = (e: Record<string, string> = glEnv()) =>
    trackerChecks(config, { git, env: e, tuning: { msPerSecond: 1 } });

  it('says the token’s user is a Maintainer, and that the label is missing until it exists', async () => {
    expect((await check()).map((c) => [c.ok, c.what, c.detail])).toEqual([
      [
        true,
        'tracker',
        'GitLab issues of acme/platform/widgets labelled loopfleet, as loopfleet-bot (Maintainer, through GITLAB_TOKEN)',
      ],
      [
        false,
        'tracker label',
        'acme/platform/widgets has no label loopfleet: create it, then put it on the issues to run',
      ],
    ]);
    gitlab.labels.add('loopfleet');
    expect((await check())[1]).toMatchObject({ ok: true, detail: 'loopfleet exists on acme/platform/widgets' });
  });

  it('fails a Reporter’s token, a token without the api scope, and a missing token, never printing it', async () => {
    gitlab.grant('loopfleet-bot', 20);
    expect((await check())[0]).toMatchObject({
      ok: false,
      detail: expect.stringContaining('may only Reporter acme/platform/widgets'),
    });
    gitlab.grant('loopfleet-bot', 40);
    gitlab.scopes = ['read_api'];
    expect((await check()).find((c) => c.what === 'tracker token')).toMatchObject({
      ok: false,
      detail: 'GITLAB_TOKEN lacks the api scope: labels and notes need it',
    });
    gitlab.scopes = ['api'];
    expect((await check()).every((c) => c.ok)).toBe(true);
    const none = await check({ GITLAB_API_URL: gitlab.url, GITLAB_TOKEN: '' });
    expect(none).toEqual([expect.objectContaining({ ok: false, what: 'tracker' })]);
    expect(JSON.stringify(none)).not.toContain(gitlab.token);
  });
});
