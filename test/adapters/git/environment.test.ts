import { describe, expect, it } from 'vitest';
import { gitEnvironment, passedToGit } from '../../../src/adapters/git/environment.js';

describe('the environment of a git process', () => {
  const person = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/p',
    LC_CTYPE: 'en_GB.UTF-8',
    SSH_AUTH_SOCK: '/run/user/1/ssh',
    HTTPS_PROXY: 'http://proxy:3128',
    GIT_SSL_CAINFO: '/etc/ca.pem',
    GIT_CONFIG_GLOBAL: '/home/p/.gitconfig',
    GH_TOKEN: 'ghp_1',
    GITHUB_TOKEN: 'ghp_2',
    GITLAB_TOKEN: 'glpat_3',
    ANTHROPIC_API_KEY: 'sk-ant-4',
    OPENAI_API_KEY: 'sk-5',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer 6',
    DATABASE_URL: 'postgres://u:7@db/x',
    AWS_SECRET_ACCESS_KEY: '8',
    GIT_TOKEN: '9',
    GIT_DIR: '/elsewhere/.git',
    GIT_SSH_COMMAND: 'ssh -i key',
    EDITOR: 'vim',
  };

  it('is an allow-list: what git, ssh, proxies and the person’s config need, and no credential', () => {
    const env = gitEnvironment({ GIT_AUTHOR_NAME: 'loopfleet' }, person);
    expect(Object.keys(env).sort()).toEqual(
      [
        'PATH',
        'HOME',
        'LC_CTYPE',
        'SSH_AUTH_SOCK',
        'HTTPS_PROXY',
        'GIT_SSL_CAINFO',
        'GIT_CONFIG_GLOBAL',
        'LC_ALL',
        'GIT_TERMINAL_PROMPT',
        'GIT_OPTIONAL_LOCKS',
        'GIT_AUTHOR_NAME',
      ].sort(),
    );
  });

  it('drops a name that looks like a credential even under GIT_', () => {
    expect(passedToGit('GIT_TOKEN')).toBe(false);
    expect(passedToGit('GIT_PASSWORD')).toBe(false);
    expect(passedToGit('GIT_CONFIG_COUNT')).toBe(true);
    expect(passedToGit('GIT_EXEC_PATH')).toBe(true);
  });
});
