import { describe, expect, it } from 'vitest';
import { parseBacklog } from '../../../src/core/backlog/parse.js';
import { personEnv, taskEnv } from '../../../src/core/attempt/task-env.js';
import { PRESETS } from '../../../src/adapters/model/agent-presets/index.js';
import { backlogProblems, md } from '../../helpers/backlog-text.js';

const FILE = '/repo/BACKLOG.md';
const input = { taskId: 'T-1', worktree: '/w', branch: 'loop/T-1', base: 'main', gitRoot: '/r', port: 4100 };

const problems = (text: string) => backlogProblems(text, FILE);

describe('the task environment is an allow-list', () => {
  const host = {
    PATH: '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C',
    LANGUAGE: 'en',
    TERM: 'xterm',
    LOOPFLEET_EXTRA: 'x',
    HOME: '/root',
    USER: 'root',
    DATABASE_URL: 'postgres://u:pass@db/x',
    SENTRY_DSN: 'https://k@sentry/1',
    MY_APP_APIKEY: 'k',
    SSH_AUTH_SOCK: '/run/ssh.sock',
    ANTHROPIC_API_KEY: 'sk',
    PORT: '1',
    NODE_OPTIONS: '--require /tmp/x.js',
  };

  it('passes PATH, the locale, TERM, LOOPFLEET_* and its own PORT, nothing else whatever the name', () => {
    const env = taskEnv(host, input);
    expect(Object.keys(env).sort()).toEqual(
      [
        'LANG',
        'LANGUAGE',
        'LC_ALL',
        'LOOPFLEET_BASE_BRANCH',
        'LOOPFLEET_BRANCH',
        'LOOPFLEET_EXTRA',
        'LOOPFLEET_GIT_ROOT',
        'LOOPFLEET_TASK_ID',
        'LOOPFLEET_WORKTREE_PATH',
        'PATH',
        'PORT',
        'TERM',
      ].sort(),
    );
    expect(env.PORT).toBe('4100');
  });

  it('passes the names listed under env:, and only when set', () => {
    const env = taskEnv(host, { ...input, passed: ['DATABASE_URL', 'NOT_SET'] });
    expect(env.DATABASE_URL).toBe(host.DATABASE_URL);
    expect('NOT_SET' in env).toBe(false);
    expect('SENTRY_DSN' in env).toBe(false);
  });

  it('never passes the fleet secret, though other LOOPFLEET_* names pass and env: lists it', () => {
    const withSecret = { ...host, LOOPFLEET_QUEUE_SECRET: 'the-fleet-secret' };
    const env = taskEnv(withSecret, { ...input, passed: ['LOOPFLEET_QUEUE_SECRET'] });
    expect('LOOPFLEET_QUEUE_SECRET' in env).toBe(false);
    expect(env.LOOPFLEET_EXTRA).toBe(host.LOOPFLEET_EXTRA);
    expect('LOOPFLEET_QUEUE_SECRET' in personEnv(withSecret, input)).toBe(false);
  });

  it("never passes serve's token: agent code that reached the API on loopback could merge its own branch", () => {
    const withToken = { ...host, LOOPFLEET_SERVE_TOKEN: 'the-serve-token-0123456789' };
    const env = taskEnv(withToken, { ...input, passed: ['LOOPFLEET_SERVE_TOKEN'] });
    expect('LOOPFLEET_SERVE_TOKEN' in env).toBe(false);
    expect(env.LOOPFLEET_EXTRA).toBe(host.LOOPFLEET_EXTRA);
    expect('LOOPFLEET_SERVE_TOKEN' in personEnv(withToken, input)).toBe(false);
  });
});

describe('env: in the front matter', () => {
  it('reads a list of names', () => {
    const { backlog } = parseBacklog(
      md('---', 'env:', '  - DATABASE_URL', '  - REDIS_URL', '---', '- [ ] T-1 x'),
      FILE,
    );
    expect(backlog.config.env).toEqual(['DATABASE_URL', 'REDIS_URL']);
    expect(parseBacklog(md('---', 'env: [A_1]', '---'), FILE).backlog.config.env).toEqual(['A_1']);
    expect(parseBacklog(md('- [ ] T-1 x'), FILE).backlog.config.env).toEqual([]);
  });

  it('refuses anything but names, with file and line', () => {
    const [bad] = problems(md('---', 'env:', '  - DATABASE_URL=postgres://x', '---'));
    expect(bad).toMatchObject({ file: FILE, line: 3 });
    expect(bad!.problem).toMatch(/env lists variable names/);
    const [scalar] = problems(md('---', 'env: DATABASE_URL', '---'));
    expect(scalar).toMatchObject({ line: 2 });
    expect(scalar!.problem).toMatch(/env must be a list/);
    expect(problems(md('---', 'env:', '  - { a: 1 }', '---'))[0]!.problem).toMatch(/got 'a mapping'/);
  });
});

describe("personEnv: setup on the person's code", () => {
  it("keeps the person's environment and drops every credential an agent preset or a forge reads", () => {
    const names = [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'OPENAI_API_KEY',
      'GEMINI_API_KEY',
      'GOOGLE_API_KEY',
      'GH_TOKEN',
      'GITHUB_TOKEN',
      'GITLAB_TOKEN',
    ];
    // Every name a preset takes as its own credential: a few spellings per preset, from its own pattern.
    for (const preset of Object.values(PRESETS)) {
      for (const prefix of ['ANTHROPIC_', 'CLAUDE_', 'OPENAI_', 'CODEX_', 'GEMINI_', 'GOOGLE_', 'OPENCODE_']) {
        for (const name of [`${prefix}API_KEY`, `${prefix}OAUTH_TOKEN`, `${prefix}BASE_URL`])
          if (preset.credentialEnv.test(name)) names.push(name);
      }
    }
    const parent = {
      HOME: '/home/me',
      HTTPS_PROXY: 'http://proxy:3128',
      NODE_EXTRA_CA_CERTS: '/etc/corp.pem',
      DATABASE_URL: 'x',
      ...Object.fromEntries(names.map((n) => [n, 'secret'])),
    };
    const env = personEnv(parent, input);
    for (const name of names) expect(env[name], name).toBeUndefined();
    expect(env).toMatchObject({
      HOME: '/home/me',
      HTTPS_PROXY: 'http://proxy:3128',
      NODE_EXTRA_CA_CERTS: '/etc/corp.pem',
      DATABASE_URL: 'x',
      LOOPFLEET_TASK_ID: 'T-1',
      PORT: '4100',
    });
  });

  it('passes the CA bundle variables into the sandboxed environment, never the proxies', () => {
    const env = taskEnv({ NODE_EXTRA_CA_CERTS: '/c.pem', SSL_CERT_FILE: '/d.pem', HTTPS_PROXY: 'http://p:1' }, input);
    expect(env).toMatchObject({ NODE_EXTRA_CA_CERTS: '/c.pem', SSL_CERT_FILE: '/d.pem' });
    expect(env.HTTPS_PROXY).toBeUndefined();
  });
});
