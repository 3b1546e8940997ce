import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExecaRunner } from '../../../src/adapters/sandbox/execa-runner.js';
import { personEnv, taskEnv } from '../../../src/core/attempt/task-env.js';

/**
 * Forge and tracker tokens stay with loopfleet's own process: a real sandboxed command (bubblewrap) and a real host
 * setup command print their whole environment, and no token's name or value is in it.
 */

const TOKENS: Record<string, string> = {
  GH_TOKEN: 'ghp_sentinel_gh_token_0001',
  GITHUB_TOKEN: 'ghp_sentinel_github_token_0002',
  GH_ENTERPRISE_TOKEN: 'ghp_sentinel_enterprise_0003',
  GITHUB_ENTERPRISE_TOKEN: 'ghp_sentinel_enterprise_0004',
  GITLAB_TOKEN: 'glpat-sentinel-gitlab-0005',
  CI_JOB_TOKEN: 'sentinel-ci-job-token-0006',
  LINEAR_API_KEY: 'lin_api_sentinel_0007',
};

const runner = new ExecaRunner();
const available = await runner.sandboxAvailable();

describe('forge tokens never reach a task’s or setup’s environment', () => {
  let dir: string;
  const input = (worktree: string) => ({
    taskId: 'T-1',
    worktree,
    branch: 'loop/T-1',
    base: 'main',
    gitRoot: worktree,
    port: 4100,
  });
  const parent = () => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/home/person',
    DATABASE_URL: 'postgres://db/x',
    ...TOKENS,
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loopfleet-creds-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  function assertClean(output: string): void {
    for (const [name, value] of Object.entries(TOKENS)) {
      expect(output, name).not.toMatch(new RegExp(`^${name}=`, 'm'));
      expect(output, name).not.toContain(value);
    }
  }

  it.runIf(available)('in the sandbox, even when env: lists them', async () => {
    const env = taskEnv(parent(), { ...input(dir), passed: [...Object.keys(TOKENS), 'DATABASE_URL'] });
    const result = await runner.run('env', { cwd: dir, env, timeoutMs: 30_000, sandbox: { writable: [dir] } });
    expect(result.exitCode, result.output).toBe(0);
    // The listed non-credential passes, so the command did print the environment it got.
    expect(result.output).toContain('DATABASE_URL=postgres://db/x');
    assertClean(result.output);
  });

  it('in setup on the person’s own code, on the host', async () => {
    const env = personEnv(parent(), input(dir));
    const result = await runner.run('env', { cwd: dir, env, timeoutMs: 30_000, sandbox: null });
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toContain('HOME=/home/person');
    assertClean(result.output);
  });
});
