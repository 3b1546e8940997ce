/**
 * `loopfleet serve` as a client sees it: the built CLI on a real repository, the scripted demo model
 * behind the real SDK, real HTTP on loopback. One server for the file. The attacks come first, each
 * checking that nothing changed (the task still verified, base where it was); then every endpoint against
 * the shapes docs/web-and-api.md gives; then the actions, which land work git can see.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import type { Script } from '../../src/demo/script-types.js';
import { demoScript } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { unsafeAt } from '../helpers/hostile-text.js';
import { CLI } from '../helpers/paths.js';
import { call, openEvents, startServe, type Served } from '../helpers/serve-client.js';
import { eventually } from '../helpers/wait.js';

const KEY = 'sk-ant-serve-0123456789abcdefghijklmnopqrstuvwxyz';
/** What an agent may write to attack a page: markup, a link that runs script, an OSC hyperlink, a CSI colour. */
const WEB_HOSTILE =
  '<script>alert(1)</script><a href="javascript:alert(2)">x</a>\u001b]8;;javascript:alert(3)\u001b\\link\u001b]8;;\u001b\\\u001b[31mred\u009b2J';

// T-1 passes; T-2's explorer plans with hostile text and its implementer changes nothing (failed);
// T-3 passes with a hostile file in its diff.
const base = demoScript([
  { taskId: 'T-1', kind: 'pass', edits: [{ path: 'a.txt', content: 'hello\n' }] },
  { taskId: 'T-3', kind: 'pass', edits: [{ path: 'h.txt', content: `${WEB_HOSTILE}\n` }] },
]);
const script: Script = (req) =>
  req.role === 'explorer' && req.taskId === 'T-2' ? { text: `## Plan for T-2\n\n${WEB_HOSTILE}` } : base(req);

type Row = Record<string, unknown> & { id: string; status: string };

let model: RunningModelServer;
let root: string;
let cleanup: () => Promise<void>;
let served: Served;
const bearer = () => ({ authorization: `Bearer ${served.token}` });
/** what the page sends with an action */
const action = () => ({ ...bearer(), 'content-type': 'application/json', origin: served.origin });
const rows = async () => (await call(served.port, 'GET', '/api/tasks', bearer())).json<Row[]>();
const row = async (id: string) => (await rows()).find((r) => r.id === id);
const mainAt = () => git(root, 'rev-parse', 'main');

beforeAll(async () => {
  model = await startModelServer({ apiKeys: [KEY], script });
  ({ root, cleanup } = await makeRepo({
    'BACKLOG.md': backlog(
      'check: "true"\nsandbox: off\ngates:\n  attempts: 1',
      '- [ ] T-1 Write a\n- [ ] T-2 Plan something hostile\n- [ ] T-3 Write h',
    ),
  }));
  served = await startServe(root, [], { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: KEY });
  await eventually(async () => {
    const all = await rows();
    return all.map((r) => r.status).join() === 'verified,failed,verified' ? true : undefined;
  });
}, 120_000);

afterAll(async () => {
  served?.process.kill('SIGTERM');
  await served?.process;
  await model?.close();
  await cleanup?.();
});

describe('loopfleet serve: the attacks', () => {
  it('prints the URL once, with the real port and a 256-bit token, on loopback', () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    expect(served.port).toBeGreaterThan(0);
    expect(served.output().split(served.token)).toHaveLength(2);
  });

  it('answers 401 to every path without the token or with a wrong one, and nothing changes', async () => {
    const before = await mainAt();
    const wrong = { authorization: `Bearer ${served.token.slice(0, -1)}x` };
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/assets/app.js'],
      ['GET', '/api/tasks'],
      ['GET', '/api/tasks/T-3'],
      ['GET', '/api/session'],
      ['POST', '/api/tasks/T-3/merge'],
      ['POST', '/api/tasks/T-3/discard'],
      ['POST', '/api/merge-all'],
    ] as const) {
      const tries: Array<Record<string, string>> = [{}, wrong, { cookie: `loopfleet-token-${served.port}=nope` }];
      for (const headers of tries) {
        const body = method === 'POST' ? '{}' : undefined;
        const reply = await call(served.port, method, path, { ...headers, 'content-type': 'application/json' }, body);
        expect(reply.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(reply.json<{ error: string }>().error).toContain('needs its token');
        expect(reply.headers['www-authenticate']).toBe('Bearer realm="loopfleet"');
      }
    }
    const events = await openEvents(served.port, {});
    expect(events.status).toBe(401);
    await events.ended;
    const wrongToken = await call(served.port, 'GET', `/?token=${served.token.slice(1)}`);
    expect(wrongToken.status).toBe(401);
    expect(wrongToken.headers['set-cookie']).toBeUndefined();
    expect(await row('T-3')).toMatchObject({ status: 'verified' });
    expect(await mainAt()).toBe(before);
  });

  it('never takes the cookie alone for an action (CSRF), nor a wrong Origin, a cross-site fetch or a form type', async () => {
    const before = await mainAt();
    const cookie = { cookie: `loopfleet-token-${served.port}=${served.token}` };
    const json = { 'content-type': 'application/json' };
    const refused = [
      [{ ...cookie, ...json }, 403, 'the cookie alone does not authorise it'],
      [{ ...cookie, ...json, origin: served.origin }, 403, 'the cookie alone does not authorise it'],
      [{ ...bearer(), ...json, origin: 'http://evil.example' }, 403, "origin 'http://evil.example' is refused"],
      [{ ...bearer(), ...json, origin: 'null' }, 403, "origin 'null' is refused"],
      [{ ...bearer(), ...json, 'sec-fetch-site': 'cross-site' }, 403, 'from a cross-site page is refused'],
      [{ ...bearer(), 'content-type': 'application/x-www-form-urlencoded' }, 415, 'application/json'],
      [{ ...bearer(), 'content-type': 'text/plain' }, 415, 'application/json'],
      [
        { 'x-loopfleet-token': served.token, 'content-type': 'multipart/form-data; boundary=x' },
        415,
        'application/json',
      ],
    ] as const;
    for (const [headers, status, words] of refused) {
      const reply = await call(served.port, 'POST', '/api/tasks/T-3/merge', headers, '{}');
      expect(reply.status, JSON.stringify(headers)).toBe(status);
      expect(reply.json<{ error: string }>().error).toContain(words);
    }
    const put = await call(served.port, 'PUT', '/api/tasks/T-3/merge', bearer(), '{}');
    expect(put.status).toBe(405);
    expect(await row('T-3')).toMatchObject({ status: 'verified' });
    expect(await mainAt()).toBe(before);
    expect(await git(root, 'branch', '--list', 'loop/T-3')).toContain('loop/T-3');
  });

  it('refuses a Host that is not its own (DNS rebinding), even with the token', async () => {
    const before = await mainAt();
    for (const host of [
      'evil.example',
      `evil.example:${served.port}`,
      `127.0.0.1.nip.io:${served.port}`,
      '127.0.0.1',
    ]) {
      const read = await call(served.port, 'GET', '/api/tasks', { ...bearer(), host });
      expect(read.status, host).toBe(403);
      expect(read.json<{ error: string }>().error).toContain('is not a name of this server');
      const act = await call(served.port, 'POST', '/api/tasks/T-3/merge', { ...action(), host }, '{}');
      expect(act.status, host).toBe(403);
    }
    for (const host of [`localhost:${served.port}`, `[::1]:${served.port}`]) {
      expect((await call(served.port, 'GET', '/api/session', { ...bearer(), host })).status, host).toBe(200);
    }
    expect(await row('T-3')).toMatchObject({ status: 'verified' });
    expect(await mainAt()).toBe(before);
  });

  it('sends agent text sanitised: no escape or control byte in /api/tasks/:id, markup kept as inert text', async () => {
    const t2 = await call(served.port, 'GET', '/api/tasks/T-2', bearer());
    expect(t2.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(t2.headers['x-content-type-options']).toBe('nosniff');
    expect(unsafeAt(t2.text)).toBeNull();
    expect(t2.text).not.toMatch(/\\u001b|\\u009b/);
    const plan = t2.json<{ plan: { text: string } }>().plan.text;
    expect(plan).toContain('<script>alert(1)</script>');
    expect(plan).toContain('␛]8;;javascript:alert(3)␛\\link');
    expect(plan).not.toContain('\u001b');
    const agent = t2.json<{ output: { agent: string[] } }>().output.agent.join('\n');
    expect(agent).toContain('␛]8;;javascript:alert(3)');
    const t3 = await call(served.port, 'GET', '/api/tasks/T-3', bearer());
    expect(unsafeAt(t3.text)).toBeNull();
    expect(t3.json<{ diff: string }>().diff).toContain('+<script>alert(1)</script>');
  });
});

describe('loopfleet serve: reading', () => {
  it('sets the cookie from /?token= and redirects to /, then serves the page and its assets by cookie', async () => {
    const opened = await call(served.port, 'GET', `/?token=${served.token}`);
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/');
    const cookie = opened.headers['set-cookie']?.[0] ?? '';
    expect(cookie).toBe(`loopfleet-token-${served.port}=${served.token}; Path=/; HttpOnly; SameSite=Strict`);
    const jar = { cookie: cookie.split(';')[0]! };
    const page = await call(served.port, 'GET', '/', jar);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<script type="module" src="/assets/app.js"></script>');
    const script = await call(served.port, 'GET', '/assets/app.js', jar);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect((await call(served.port, 'GET', '/assets/nothing.js', jar)).status).toBe(404);
    expect((await call(served.port, 'GET', '/api/tasks', jar)).status).toBe(200);
    for (const reply of [opened, page, script]) {
      expect(reply.headers['content-security-policy']).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.headers['loopfleet-api']).toBe('1');
    }
  });

  it('GET /api/session: the version, read-only, repository, base and gates', async () => {
    const session = (await call(served.port, 'GET', '/api/session', bearer())).json<Record<string, unknown>>();
    expect(session).toMatchObject({ apiVersion: 1, readOnly: false, repo: root, base: 'main' });
    expect(Object.keys(session).sort()).toEqual(
      [
        'apiVersion',
        'autonomy',
        'backlogPath',
        'base',
        'concurrency',
        'csrfToken',
        'fleetGates',
        'gates',
        'readOnly',
        'repo',
        'sandboxed',
        'summary',
      ].sort(),
    );
    expect(session.summary).toMatchObject({ counts: { verified: 2, failed: 1 } });
  });

  it('GET /api/tasks: the rows of status --json, in backlog order, plus elapsed, times and gates', async () => {
    const api = await rows();
    const status = await execa(process.execPath, [CLI, 'status', '--json'], { cwd: root });
    const cli = JSON.parse(status.stdout) as Row[];
    expect(api.map((r) => r.id)).toEqual(['T-1', 'T-2', 'T-3']);
    for (const [i, r] of api.entries()) {
      expect(Object.keys(r).sort()).toEqual(
        [...Object.keys(cli[i]!), 'elapsedMs', 'startedAt', 'updatedAt', 'gates'].sort(),
      );
      for (const key of ['id', 'title', 'status', 'attempt', 'maxAttempts', 'branch'])
        expect(r[key]).toEqual(cli[i]![key]);
    }
    expect(api[0]).toMatchObject({ gates: { attempts: 1 }, branch: 'loop/T-1' });
  });

  it('GET /api/tasks/:id: the row plus plan, diff, checks with output, review, history; 404 in the CLI words', async () => {
    const t1 = (await call(served.port, 'GET', '/api/tasks/T-1', bearer())).json<Record<string, unknown>>();
    expect(t1).toMatchObject({
      id: 'T-1',
      status: 'verified',
      plan: { attempt: 1, text: expect.stringContaining('## Plan for T-1') },
      approvedPlan: null,
      diff: expect.stringContaining('+hello'),
      checks: [{ name: 'true', exitCode: 0, judged: 'passed', output: '' }],
      checksAttempt: 1,
      setup: null,
      review: { attempt: 1, pass: true, reasons: expect.any(Array) },
      history: [
        { n: 1, outcome: 'verified', commit: expect.stringMatching(/^[0-9a-f]{40}$/), tokens: expect.any(Number) },
      ],
      conflictDetails: [],
      output: { agent: expect.arrayContaining(['── explorer · attempt 1 ──']), phase: expect.any(Array) },
    });
    const missing = await call(served.port, 'GET', '/api/tasks/T-9', bearer());
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: `no task T-9 in ${join(root, 'BACKLOG.md')} (tasks: T-1, T-2, T-3)` });
  });

  it('GET /api/report: 404 before any report, then the newest one', async () => {
    const none = await call(served.port, 'GET', '/api/report', bearer());
    expect(none.status).toBe(404);
    const dir = join(root, '.loop-worktrees', 'reports');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, '2026-01-01T06-00-00-000Z.md'), '# old\n');
    await writeFile(join(dir, '2026-01-02T06-00-00-000Z.md'), '# Morning report\n\u001b[2Jdone\n');
    const report = await call(served.port, 'GET', '/api/report', bearer());
    expect(report.json()).toEqual({ name: '2026-01-02T06-00-00-000Z.md', markdown: '# Morning report\ndone\n' });
  });

  it('GET /api/timeline: points of spend and throughput', async () => {
    const points = (await call(served.port, 'GET', '/api/timeline', bearer())).json<Array<Record<string, unknown>>>();
    expect(points.length).toBeGreaterThan(0);
    for (const p of points)
      expect(Object.keys(p).sort()).toEqual(['costUsd', 'merged', 'running', 't', 'tokens', 'verified']);
    expect(points.at(-1)).toMatchObject({ verified: 2 });
    expect(points.at(-1)!.costUsd).toBeGreaterThan(0);
  });
});

describe('loopfleet serve: actions', () => {
  it('refuses what the CLI refuses with its words: 409 not allowed now, 400 bad input, 404 no such task', async () => {
    const before = await mainAt();
    const merge = await call(served.port, 'POST', '/api/tasks/T-2/merge', action(), '');
    expect(merge.status).toBe(409);
    expect(merge.json()).toEqual({ error: 'T-2 is failed: only verified tasks can be merged' });
    const approve = await call(served.port, 'POST', '/api/tasks/T-3/approve', action(), '{"plan":"do it"}');
    expect(approve.status).toBe(409);
    expect(approve.json<{ error: string }>().error).toMatch(/^T-3 is verified/);
    for (const [path, body] of [
      ['/api/tasks/T-3/approve', '{"plan":5}'],
      ['/api/tasks/T-3/merge', '{"force":true}'],
      ['/api/tasks/T-3/merge', '{not json'],
      ['/api/pause', '{}'],
      ['/api/pause', '{"paused":"yes"}'],
    ] as const) {
      const reply = await call(served.port, 'POST', path, action(), body);
      expect(reply.status, `${path} ${body}`).toBe(400);
      expect(reply.json<{ error: string }>().error).toMatch(/^the body is not/);
    }
    // Over the 1 MB limit: refused by its length before it is read. The server may end the connection while
    // the client still writes; either way the body is never taken.
    const huge = await call(
      served.port,
      'POST',
      '/api/tasks/T-3/approve',
      action(),
      JSON.stringify({ plan: 'x'.repeat(2 ** 20) }),
    ).then(
      (reply) => String(reply.status),
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    expect(['413', 'ECONNRESET', 'EPIPE']).toContain(huge);
    const unknown = await call(served.port, 'POST', '/api/tasks/T-9/merge', action(), '{}');
    expect(unknown.status).toBe(404);
    expect(unknown.json<{ error: string }>().error).toMatch(/^no task T-9 in /);
    expect((await call(served.port, 'POST', '/api/tasks/T-3/rebase', action(), '{}')).status).toBe(404);
    expect(await row('T-3')).toMatchObject({ status: 'verified' });
    expect(await mainAt()).toBe(before);
  });

  it('merges by POST: base holds the task commit, the row says merged, the stream says so', async () => {
    const events = await openEvents(served.port, bearer());
    expect(events.status).toBe(200);
    expect(events.headers['content-type']).toMatch(/^text\/event-stream/);
    await events.next((m) => m.event === 'ready');
    const commit = (await call(served.port, 'GET', '/api/tasks/T-1', bearer())).json<{
      history: Array<{ commit: string }>;
    }>().history[0]!.commit;
    const reply = await call(served.port, 'POST', '/api/tasks/T-1/merge', action(), '{}');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toMatchObject({ id: 'T-1', status: 'merged' });
    await git(root, 'merge-base', '--is-ancestor', commit, 'main'); // throws unless main contains it
    expect(await git(root, 'branch', '--list', 'loop/T-1')).toBe('');
    const moved = await events.next((m) => m.event === 'task' && JSON.parse(m.data).task.id === 'T-1');
    expect(JSON.parse(moved.data)).toMatchObject({ task: { id: 'T-1', status: 'merged' }, previousStatus: 'verified' });
    await events.next((m) => m.event === 'fleet' && JSON.parse(m.data).counts.merged === 1);
    events.close();
  });

  it('pauses and resumes by POST {paused}', async () => {
    const paused = await call(served.port, 'POST', '/api/pause', action(), '{"paused":true}');
    expect(paused.json()).toMatchObject({ state: 'paused' });
    const resumed = await call(served.port, 'POST', '/api/pause', action(), '{"paused":false}');
    expect(resumed.json<{ state: string }>().state).not.toBe('paused');
  });

  it('retries by POST; the stream carries the task moving and its hostile agent text, sanitised', async () => {
    const events = await openEvents(served.port, { cookie: `loopfleet-token-${served.port}=${served.token}` });
    await events.next((m) => m.event === 'ready');
    const reply = await call(served.port, 'POST', '/api/tasks/T-2/retry', action(), '{}');
    expect(reply.status, reply.text).toBe(200);
    expect(['queued', 'running']).toContain(reply.json<Row>().status);
    await events.next(
      (m) => m.event === 'task' && JSON.parse(m.data).task.id === 'T-2' && JSON.parse(m.data).task.status === 'running',
    );
    const hostile = await events.next(
      (m) => m.event === 'agent-text' && JSON.parse(m.data).id === 'T-2' && m.data.includes('javascript:alert(3)'),
    );
    expect(JSON.parse(hostile.data).text).toContain('␛]8;;javascript:alert(3)␛\\link');
    await events.next(
      (m) => m.event === 'task' && JSON.parse(m.data).task.id === 'T-2' && JSON.parse(m.data).task.status === 'failed',
    );
    expect(unsafeAt(events.raw())).toBeNull();
    expect(events.raw()).not.toMatch(/\\u001b|\\u009b/);
    events.close();
  });

  it('runs the merge queue by POST /api/merge-all and answers its result', async () => {
    const reply = await call(served.port, 'POST', '/api/merge-all', action(), '{}');
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json()).toMatchObject({ merged: ['T-3'], sentBack: [], conflicts: [], refused: null });
    expect(await row('T-3')).toMatchObject({ status: 'merged' });
    expect(await git(root, 'show', 'main:h.txt')).toContain('<script>');
  });

  it('ends on SIGTERM: the streams close, the report is written, exit 130', async () => {
    const events = await openEvents(served.port, bearer());
    await events.next((m) => m.event === 'ready');
    served.process.kill('SIGTERM');
    await events.ended;
    const run = await served.process;
    expect(run.exitCode, run.all).toBe(130);
    expect(run.all).toMatch(/stopping: SIGTERM[\s\S]*done: .*report: /);
  });
});
