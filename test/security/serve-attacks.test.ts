/**
 * What `loopfleet serve` refuses before or beside its token checks: a `--read-only` server takes no action
 * even from a client holding the token; a second writer of the same repository is refused by the lock; a
 * token from the environment too short to hold is refused before anything is written. One server (read-only,
 * with its token from `LOOPFLEET_SERVE_TOKEN`) for the file.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { CLI } from '../helpers/paths.js';
import { call, startServe, type Served } from '../helpers/serve-client.js';
import { eventually } from '../helpers/wait.js';

const KEY = 'sk-ant-serve-ro-0123456789abcdefghijklmnopqrstuvwxyz';
const TOKEN = 'a-token-set-by-a-service-manager_0123';
/** the origin a TLS reverse proxy serves the page at */
const PROXY = 'https://fleet.example.com';

let model: RunningModelServer;
let root: string;
const cleanups: Array<() => Promise<void>> = [];
let served: Served;
const env = () => ({ ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: KEY });
const auth = { authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  model = await startModelServer({
    apiKeys: [KEY],
    script: demoScript([{ taskId: 'T-1', kind: 'pass', edits: [{ path: 'a.txt', content: 'hello\n' }] }]),
  });
  const repo = await makeRepo({
    'BACKLOG.md': backlog('check: "true"\nsandbox: off\ngates:\n  attempts: 1', '- [ ] T-1 Write a\n- [ ] T-2 Nothing'),
  });
  root = repo.root;
  cleanups.push(repo.cleanup);
  served = await startServe(root, ['--read-only'], {
    ...env(),
    LOOPFLEET_SERVE_TOKEN: TOKEN,
    LOOPFLEET_SERVE_ORIGIN: PROXY,
  });
  await eventually(async () => {
    const rows = (await call(served.port, 'GET', '/api/tasks', auth)).json<Array<{ status: string }>>();
    return rows.map((r) => r.status).join() === 'verified,failed' ? true : undefined;
  });
}, 120_000);

afterAll(async () => {
  served?.process.kill('SIGTERM');
  await served?.process;
  await model?.close();
  for (const c of cleanups) await c();
});

describe('loopfleet serve --read-only', () => {
  it('uses the token of LOOPFLEET_SERVE_TOKEN and says it is read-only', async () => {
    expect(served.token).toBe(TOKEN);
    expect(served.output()).toContain(', read-only');
    const session = (await call(served.port, 'GET', '/api/session', auth)).json();
    expect(session).toMatchObject({ apiVersion: 1, readOnly: true });
    expect((await call(served.port, 'GET', '/api/tasks/T-1', auth)).status).toBe(200);
  });

  it('refuses every action from a client with the token, the page’s own headers and all; nothing changes', async () => {
    const before = await git(root, 'rev-parse', 'main');
    const headers = { ...auth, 'content-type': 'application/json', origin: served.origin };
    for (const [path, body] of [
      ['/api/tasks/T-1/merge', '{}'],
      ['/api/tasks/T-1/discard', '{}'],
      ['/api/tasks/T-2/retry', '{}'],
      ['/api/tasks/T-1/approve', '{"plan":"x"}'],
      ['/api/merge-all', '{}'],
      ['/api/pause', '{"paused":true}'],
      ['/api/anything', '{}'],
    ] as const) {
      const reply = await call(served.port, 'POST', path, headers, body);
      expect(reply.status, path).toBe(403);
      expect(reply.json(), path).toEqual({ error: 'this server is read-only' });
    }
    const rows = (await call(served.port, 'GET', '/api/tasks', auth)).json<Array<{ status: string }>>();
    expect(rows.map((r) => r.status)).toEqual(['verified', 'failed']);
    const session = (await call(served.port, 'GET', '/api/session', auth)).json<{ summary: { state: string } }>();
    expect(session.summary.state).not.toBe('paused');
    expect(await git(root, 'rev-parse', 'main')).toBe(before);
    expect(await git(root, 'branch', '--list', 'loop/T-1')).toContain('loop/T-1');
  });

  it('behind a proxy: prints its URL once, answers its Host, takes its Origin, sets a Secure cookie', async () => {
    expect(served.url).toBe(`${PROXY}/?token=${TOKEN}`);
    expect(served.output().split(TOKEN)).toHaveLength(2);
    const proxied = { ...auth, host: 'fleet.example.com' };
    expect((await call(served.port, 'GET', '/api/session', proxied)).status).toBe(200);
    expect((await call(served.port, 'GET', '/api/session', { ...auth, host: 'evil.example' })).status).toBe(403);
    const opened = await call(served.port, 'GET', `/?token=${TOKEN}`, { host: 'fleet.example.com' });
    expect(opened.headers['set-cookie']?.[0]).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    const json = { ...proxied, 'content-type': 'application/json' };
    // Its own origin passes the CSRF guard and meets the read-only refusal; another origin is stopped before.
    const own = await call(served.port, 'POST', '/api/pause', { ...json, origin: PROXY }, '{"paused":true}');
    expect(own.json()).toEqual({ error: 'this server is read-only' });
    const other = await call(served.port, 'POST', '/api/pause', { ...json, origin: 'https://evil.example' }, '{}');
    expect(other.json<{ error: string }>().error).toContain("origin 'https://evil.example' is refused");
  });

  it('without the token, a POST is 401 before the read-only refusal says anything', async () => {
    const reply = await call(served.port, 'POST', '/api/tasks/T-1/merge', { 'content-type': 'application/json' }, '{}');
    expect(reply.status).toBe(401);
  });
});

describe('loopfleet serve: refused before it serves', () => {
  // Run side by side: the lock refusal waits out the lock's own patience (LOCK_WAIT_MS) anyway.
  it('by the lock (a second writer), by a short LOOPFLEET_SERVE_TOKEN, by bad options, by a port in use: exit 2, nothing written', {
    timeout: 120_000,
  }, async () => {
    const repo = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 Anything') });
    cleanups.push(repo.cleanup);
    const run = (cwd: string, args: string[], extra: Record<string, string> = {}) =>
      execa(process.execPath, [CLI, ...args], { cwd, reject: false, env: { ...env(), ...extra }, extendEnv: true });
    const [second, short, port, stray, taken] = await Promise.all([
      run(root, ['serve', '--port', '0']),
      run(repo.root, ['serve', '--port', '0'], { LOOPFLEET_SERVE_TOKEN: 'short' }),
      run(repo.root, ['serve', '--port', '70000']),
      run(repo.root, ['status', '--read-only']),
      run(repo.root, ['serve', '--port', String(served.port)]),
    ]);
    expect(second.exitCode, second.stdout + second.stderr).toBe(2);
    expect(second.stderr).toMatch(/another loopfleet \(pid \d+\) is running on this repository/);
    expect(second.stdout).not.toContain('open http');
    expect((await call(served.port, 'GET', '/api/session', auth)).status).toBe(200);
    expect(short.exitCode).toBe(2);
    expect(short.stderr).toContain('LOOPFLEET_SERVE_TOKEN holds 5 characters; a token needs at least 16');
    expect(port.exitCode).toBe(2);
    expect(port.stderr).toContain("--port: '70000' is not a port");
    expect(stray.exitCode).toBe(2);
    expect(stray.stderr).toContain('--read-only is an option of `loopfleet serve` only');
    expect(taken.exitCode).toBe(2);
    expect(taken.stderr).toContain(`--port ${served.port}: the port is in use on 127.0.0.1`);
    expect(existsSync(join(repo.root, '.loop-worktrees'))).toBe(false);
  });
});
