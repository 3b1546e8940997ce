import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chooseForge, parseRemoteUrl, remoteAuth } from '../../../src/adapters/forge/select.js';
import { openForge, requireForge } from '../../../src/adapters/forge/open.js';
import { findForgeToken, requireForgeToken } from '../../../src/adapters/forge/token.js';
import { SimpleGitAdapter } from '../../../src/adapters/git/simple-git.js';
import { InputError } from '../../../src/domain/errors.js';
import { FakeGitHub } from '../../helpers/fake-github.js';
import { git, makeRepo } from '../../helpers/git-repo.js';
import { pathWithout } from '../../helpers/path-without.js';

describe('the remote URL: host and repository path', () => {
  it.each([
    ['https://github.com/acme/widgets.git', { host: 'github.com', path: 'acme/widgets', scheme: 'https' }],
    ['https://user:secret@github.com/acme/widgets', { host: 'github.com', path: 'acme/widgets', scheme: 'https' }],
    ['http://git.corp:8080/acme/widgets/', { host: 'git.corp', path: 'acme/widgets', scheme: 'http' }],
    ['ssh://git@github.com/acme/widgets.git', { host: 'github.com', path: 'acme/widgets', scheme: 'ssh' }],
    [
      'ssh://git@gitlab.corp:2222/group/sub/project.git',
      { host: 'gitlab.corp', path: 'group/sub/project', scheme: 'ssh' },
    ],
    ['git@github.com:acme/widgets.git', { host: 'github.com', path: 'acme/widgets', scheme: 'ssh' }],
    ['GitHub.com:acme/widgets', { host: 'github.com', path: 'acme/widgets', scheme: 'ssh' }],
  ])('%s', (url, expected) => {
    expect(parseRemoteUrl(url)).toEqual(expected);
  });

  it.each([
    '/srv/git/widgets.git',
    './origin.git',
    'file:///srv/git/widgets.git',
    'C:\\repos\\widgets',
    'ext::sh -c evil',
  ])('%s names no forge', (url) => {
    expect(parseRemoteUrl(url)).toBeNull();
  });
});

describe('which forge', () => {
  it('decides from github.com and gitlab.com, ssh aliases included', () => {
    expect(chooseForge('auto', 'git@github.com:acme/widgets.git', {})).toEqual({
      kind: 'forge',
      target: { kind: 'github', repo: 'acme/widgets', apiUrl: 'https://api.github.com', host: 'github.com' },
    });
    expect(chooseForge('auto', 'ssh://git@ssh.github.com:443/acme/widgets.git', {})).toMatchObject({
      target: { kind: 'github', host: 'github.com' },
    });
    expect(chooseForge('auto', 'https://gitlab.com/group/sub/project.git', {})).toEqual({
      kind: 'forge',
      target: { kind: 'gitlab', repo: 'group/sub/project', apiUrl: 'https://gitlab.com/api/v4', host: 'gitlab.com' },
    });
  });

  it('recognises GitHub Enterprise and self-hosted GitLab by the API URL’s host', () => {
    const env = { GITHUB_API_URL: 'https://ghe.corp/api/v3/', GITLAB_API_URL: 'https://git.corp/api/v4' };
    expect(chooseForge('auto', 'git@ghe.corp:team/app.git', env)).toEqual({
      kind: 'forge',
      target: { kind: 'github', repo: 'team/app', apiUrl: 'https://ghe.corp/api/v3', host: 'ghe.corp' },
    });
    expect(chooseForge('auto', 'https://git.corp/team/sub/app', env)).toEqual({
      kind: 'forge',
      target: { kind: 'gitlab', repo: 'team/sub/app', apiUrl: 'https://git.corp/api/v4', host: 'git.corp' },
    });
    const unknown = chooseForge('auto', 'git@code.example:team/app.git', env);
    expect(unknown).toEqual({
      kind: 'none',
      reason: expect.stringMatching(/host code\.example is neither.*set forge: github or gitlab/),
    });
  });

  it('takes the forge the setting names, with the host’s standard API root', () => {
    expect(chooseForge('github', 'git@code.example:team/app.git', {})).toMatchObject({
      target: { kind: 'github', apiUrl: 'https://code.example/api/v3' },
    });
    expect(chooseForge('gitlab', 'git@code.example:team/app.git', {})).toMatchObject({
      target: { kind: 'gitlab', apiUrl: 'https://code.example/api/v4' },
    });
    expect(chooseForge({ type: 'github', repo: 'acme/widgets' }, '/srv/mirror.git', {})).toEqual({
      kind: 'forge',
      target: { kind: 'github', repo: 'acme/widgets', apiUrl: 'https://api.github.com', host: 'github.com' },
    });
    expect(
      chooseForge({ type: 'gitlab', repo: 'a/b' }, null, { GITLAB_API_URL: 'https://git.corp/api/v4' }),
    ).toMatchObject({ target: { host: 'git.corp', apiUrl: 'https://git.corp/api/v4' } });
  });

  it('says why there is none', () => {
    expect(chooseForge('none', 'git@github.com:a/b.git', {})).toEqual({ kind: 'none', reason: 'forge: none' });
    expect(chooseForge('auto', null, {}, 'upstream')).toEqual({
      kind: 'none',
      reason: expect.stringContaining('there is no remote "upstream"'),
    });
    expect(chooseForge('auto', '/srv/git/widgets.git', {})).toEqual({
      kind: 'none',
      reason: expect.stringContaining('local path'),
    });
    expect(chooseForge('auto', 'https://github.com/acme', {})).toEqual({
      kind: 'none',
      reason: expect.stringContaining('no owner/name'),
    });
  });

  it('gives the token to loopfleet’s git only for an https remote of the forge’s own host', () => {
    const target = {
      kind: 'github' as const,
      repo: 'acme/widgets',
      apiUrl: 'https://api.github.com',
      host: 'github.com',
    };
    const auth = remoteAuth(target, 'https://github.com/acme/widgets.git', 'ghp_x');
    expect(auth).toEqual({
      urlPrefix: 'https://github.com/',
      header: `Authorization: Basic ${Buffer.from('x-access-token:ghp_x').toString('base64')}`,
    });
    expect(remoteAuth(target, 'git@github.com:acme/widgets.git', 'ghp_x')).toBeUndefined();
    expect(remoteAuth(target, 'https://evil.example/acme/widgets.git', 'ghp_x')).toBeUndefined();
    expect(remoteAuth(target, 'http://github.com/acme/widgets.git', 'ghp_x')).toBeUndefined();
    const lab = remoteAuth({ ...target, kind: 'gitlab', host: 'gitlab.com' }, 'https://gitlab.com/g/p.git', 'glpat');
    expect(lab?.header).toBe(`Authorization: Basic ${Buffer.from('oauth2:glpat').toString('base64')}`);
  });
});

describe('which token', () => {
  const github = { kind: 'github' as const, repo: 'a/b', apiUrl: 'https://api.github.com', host: 'github.com' };
  let dir: string;
  let noGh: { path: string; cleanup: () => void };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopfleet-gh-'));
    noGh = pathWithout(['gh']);
  });
  afterEach(async () => {
    noGh.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('prefers GH_TOKEN, then GITHUB_TOKEN; on an Enterprise host its own variables first; GitLab’s GITLAB_TOKEN', async () => {
    expect(await findForgeToken(github, { GH_TOKEN: 'one', GITHUB_TOKEN: 'two', PATH: noGh.path })).toEqual({
      token: 'one',
      from: 'GH_TOKEN',
    });
    expect(await findForgeToken(github, { GITHUB_TOKEN: 'two', PATH: noGh.path })).toEqual({
      token: 'two',
      from: 'GITHUB_TOKEN',
    });
    const ghe = { ...github, host: 'ghe.corp' };
    expect(await findForgeToken(ghe, { GH_TOKEN: 'one', GH_ENTERPRISE_TOKEN: 'ent', PATH: noGh.path })).toEqual({
      token: 'ent',
      from: 'GH_ENTERPRISE_TOKEN',
    });
    expect(
      await findForgeToken({ ...github, kind: 'gitlab', host: 'gitlab.com' }, { GITLAB_TOKEN: 'gl', GH_TOKEN: 'gh' }),
    ).toEqual({ token: 'gl', from: 'GITLAB_TOKEN' });
  });

  it('asks `gh auth token` for the host when gh is on PATH, with an argument list', async () => {
    const record = join(dir, 'args');
    await writeFile(join(dir, 'gh'), `#!/bin/sh\nprintf '%s\\n' "$@" > ${JSON.stringify(record)}\necho gho_fromgh\n`);
    await chmod(join(dir, 'gh'), 0o755);
    expect(await findForgeToken(github, { PATH: `${dir}:${noGh.path}` })).toEqual({
      token: 'gho_fromgh',
      from: 'gh auth token',
    });
    expect((await readFile(record, 'utf8')).split('\n')).toEqual(['auth', 'token', '--hostname', 'github.com', '']);
  });

  it('takes no token from a gh that is logged out', async () => {
    await writeFile(join(dir, 'gh'), '#!/bin/sh\necho "no oauth token found for github.com" >&2\nexit 1\n');
    await chmod(join(dir, 'gh'), 0o755);
    expect(await findForgeToken(github, { PATH: `${dir}:${noGh.path}` })).toEqual({
      token: null,
      missing: expect.stringContaining('set GH_TOKEN or GITHUB_TOKEN'),
    });
  });

  it('names what is missing as an input error (exit 2)', async () => {
    const error = await requireForgeToken(github, { PATH: noGh.path }, 'BACKLOG.md').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).exitCode).toBe(2);
    expect((error as Error).message).toBe(
      'BACKLOG.md: no GitHub token for github.com: set GH_TOKEN or GITHUB_TOKEN, or log in with gh auth login',
    );
    const lab = await requireForgeToken({ ...github, kind: 'gitlab', host: 'gitlab.com' }, {}, 'BACKLOG.md').catch(
      (e: unknown) => e,
    );
    expect((lab as Error).message).toMatch(/set GITLAB_TOKEN/);
  });
});

describe('openForge: a real repository’s remote and a loopback GitHub', () => {
  it('opens the client the remote names, with the token from the environment', async () => {
    const github = await new FakeGitHub('acme/widgets').start();
    const { root, cleanup } = await makeRepo({ 'a.txt': 'a\n' });
    try {
      await git(root, 'remote', 'add', 'origin', 'https://github.com/acme/widgets.git');
      const opened = await openForge({
        setting: 'auto',
        git: new SimpleGitAdapter(root),
        remote: 'origin',
        env: { GH_TOKEN: github.token, GITHUB_API_URL: github.url },
        tuning: { writeSpacingMs: 0 },
      });
      if (opened.kind !== 'forge') throw new Error(opened.reason);
      expect(opened.target).toEqual({ kind: 'github', repo: 'acme/widgets', apiUrl: github.url, host: 'github.com' });
      expect(opened.tokenFrom).toBe('GH_TOKEN');
      expect((await opened.forge.tokenFacts()).user).toBe('loopfleet-bot');
      const none = await openForge({
        setting: 'auto',
        git: new SimpleGitAdapter(root),
        remote: 'origin',
        env: { PATH: '/nonexistent' },
      });
      expect(none).toEqual({
        kind: 'none',
        reason: expect.stringContaining('no GitHub token'),
        target: expect.objectContaining({ kind: 'github' }),
      });
      const refused = await requireForge(
        { setting: 'auto', git: new SimpleGitAdapter(root), remote: 'origin', env: { PATH: '/nonexistent' } },
        'BACKLOG.md',
      ).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InputError);
      expect((refused as Error).message).toBe(
        'BACKLOG.md: land: pr needs a forge: no GitHub token for github.com: set GH_TOKEN or GITHUB_TOKEN, or log in with gh auth login',
      );
      // The https remote of the forge's host gets the token as loopfleet's git header.
      const opened2 = await requireForge(
        {
          setting: 'auto',
          git: new SimpleGitAdapter(root),
          remote: 'origin',
          env: { GH_TOKEN: github.token, GITHUB_API_URL: github.url },
        },
        'BACKLOG.md',
      );
      expect(opened2.auth?.urlPrefix).toBe('https://github.com/');
    } finally {
      await cleanup();
      await github.close();
    }
  });
});
