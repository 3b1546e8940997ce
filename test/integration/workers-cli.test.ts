import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { backlog } from '../helpers/fleet-harness.js';
import { git, makeRepo } from '../helpers/git-repo.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';
import { CLI, pass, startFleet, type Fleet } from '../helpers/workers-fleet.js';
import { TEST_SECRET } from '../helpers/fleet-secret.js';

/** The state files a run left (state.json, which the first fold writes, and its journal): none after a refusal. */
function stateFiles(root: string): string[] {
  return ['state.json', 'state.journal'].filter((f) => existsSync(join(root, '.loop-worktrees', f)));
}

const cleanups: Array<() => Promise<void>> = [];
let redis: RedisServer | null = null;
let fleet: Fleet | null = null;
afterEach(async () => {
  await fleet?.close();
  fleet = null;
  for (const c of cleanups.splice(0)) await c();
  await redis?.close();
  redis = null;
});

async function repo(): Promise<string> {
  const r = await makeRepo({ 'BACKLOG.md': backlog('check: "true"', '- [ ] T-1 One') });
  cleanups.push(r.cleanup);
  return r.root;
}

const env = {
  ...process.env,
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
  ANTHROPIC_API_KEY: 'k',
  LOOPFLEET_QUEUE_SECRET: TEST_SECRET,
};
const run = (cwd: string, args: string[], extra: NodeJS.ProcessEnv = {}) =>
  execa(process.execPath, [CLI, ...args], { cwd, env: { ...env, ...extra }, reject: false });
const RISK = /anyone who can write to this Redis can run commands on every worker/;

describe('--queue and loopfleet worker on the command line', () => {
  it.each([
    [['--overnight', '--queue', 'http://127.0.0.1:6379'], /--queue: the scheme must be redis: or rediss:/],
    [['--watch', '--queue', 'redis://127.0.0.1:6379/db'], /--queue: the path must be a database number/],
    [['worker'], /loopfleet worker needs --queue/],
    [['worker', '--queue', 'redis://127.0.0.1:6379', '--max-cost', '5'], /--max-cost is an option of the coordinator/],
    [['--overnight', '--cache', '/tmp/x'], /--cache is an option of `loopfleet worker` only/],
    [['status', '--queue', 'redis://127.0.0.1:6379'], /--queue is not an option of `loopfleet status`/],
    [['worker', '--queue', 'redis://127.0.0.1:6379'], /loopfleet worker needs --remote URL/],
    [['--overnight', '--queue', 'redis://10.0.0.5:6379'], RISK],
    [['worker', '--queue', 'redis://redis.internal:6379', '--remote', '/r.git'], RISK],
    [['--overnight', '--queue', 'redis://127.0.0.1:6379', '--queue-secret-file', '/nonexistent'], /cannot read it/],
    [['--overnight', '--queue-secret-file', '/etc/hostname'], /--queue-secret-file goes with --queue/],
  ])('%j: exit 2 with what is wrong, nothing written', async (args, message) => {
    const root = await repo();
    const r = await run(root, args);
    expect(r.stderr).toMatch(message);
    expect(r.exitCode).toBe(2);
    expect(existsSync(join(root, '.loop-worktrees'))).toBe(false);
  });

  it.each<[string[], NodeJS.ProcessEnv]>([
    [['--overnight', '--queue', 'redis://127.0.0.1:6379'], {}],
    [['worker', '--queue', 'redis://127.0.0.1:6379', '--remote', '/r.git'], {}],
    [['--overnight', '--queue', 'redis://127.0.0.1:6379'], { LOOPFLEET_QUEUE_SECRET: 'tiny-secret' }],
  ])('%j without a fleet secret (or a short one): exit 2 naming the risk, nothing written', async (args, extra) => {
    const root = await repo();
    const r = await run(root, args, { LOOPFLEET_QUEUE_SECRET: '', ...extra });
    expect(r.stderr).toMatch(extra.LOOPFLEET_QUEUE_SECRET === undefined ? RISK : /shorter than 32 characters/);
    expect(r.stderr).not.toContain('tiny-secret');
    expect(r.exitCode).toBe(2);
    expect(existsSync(join(root, '.loop-worktrees'))).toBe(false);
  });

  it('a coordinator whose Redis does not answer says so and exits 2 before it writes anything', {
    timeout: 30_000,
  }, async () => {
    const root = await repo();
    await git(root, 'remote', 'add', 'origin', join(root, 'nowhere.git'));
    redis = await startRedis();
    const port = redis.port;
    await redis.close(); // a port where nothing listens now
    const r = await run(root, ['--overnight', '--queue', `redis://:hunter2@127.0.0.1:${port}`]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`--queue: cannot reach Redis at redis://127.0.0.1:${port}/0: .*ECONNREFUSED`));
    expect(r.stderr + r.stdout).not.toContain('hunter2');
    expect(stateFiles(root)).toEqual([]);
  });

  it('a worker given an OTLP endpoint it cannot export to exits 2 naming the variable, before it connects to Redis', {
    timeout: 30_000,
  }, async () => {
    const home = await repo();
    // Nothing listens at port 1: reaching Redis would fail too, so the message shows which check came first.
    const r = await execa(
      process.execPath,
      [CLI, 'worker', '--queue', 'redis://127.0.0.1:1', '--remote', '/r.git', '--cache', join(home, 'cache')],
      {
        cwd: home,
        env: { ...env, HOME: home, OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://127.0.0.1:4317' },
        reject: false,
      },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /OTEL_EXPORTER_OTLP_ENDPOINT: loopfleet exports OTLP over HTTP; expected an http:\/\/ or https:\/\/ URL, not grpc:/,
    );
    expect(r.stderr).not.toMatch(/cannot reach Redis/);
    expect(existsSync(join(home, 'cache'))).toBe(false);
  });

  it('a coordinator in a repository without the remote origin says workers need it, exit 2', async () => {
    const root = await repo();
    redis = await startRedis();
    const r = await run(root, ['--overnight', '--queue', redis.url]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/no remote named "origin"/);
    expect(stateFiles(root)).toEqual([]);
  });

  it('a coordinator uses the remote that remote: names, and says so when it is missing, exit 2', async () => {
    const r0 = await makeRepo({ 'BACKLOG.md': backlog('check: "true"\nremote: upstream', '- [ ] T-1 One') });
    cleanups.push(r0.cleanup);
    // origin exists, upstream does not: the queue must not fall back to origin.
    await git(r0.root, 'remote', 'add', 'origin', join(r0.root, 'nowhere.git'));
    redis = await startRedis();
    const r = await run(r0.root, ['--overnight', '--queue', redis.url]);
    expect(r.stderr).toMatch(/no remote named "upstream"/);
    expect(r.exitCode).toBe(2);
    expect(stateFiles(r0.root)).toEqual([]);
  });

  it('--watch --queue runs tasks on a worker and stays up until SIGTERM, then reports', {
    timeout: 120_000,
  }, async () => {
    fleet = await startFleet({ ids: ['T-1'], script: pass(['T-1']), front: 'check: test -n "$(ls T-*.txt)"' });
    const w = await fleet.worker('w1');
    const coordinator = fleet.coordinator(['--watch']);
    await fleet.until('T-1 verified', (s) => s.tasks['T-1']?.status === 'verified');
    coordinator.child.kill('SIGTERM');
    const done = await coordinator.child;
    expect(done.exitCode).toBe(130);
    expect(done.all).toMatch(/done: 1 verified/);
    expect(w.output()).toMatch(/job T-1:1: started/);
  });
});
