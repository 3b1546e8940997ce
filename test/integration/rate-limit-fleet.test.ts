import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicModelClient } from '../../src/adapters/model/anthropic-model.js';
import { ExecaRunner } from '../../src/adapters/sandbox/execa-runner.js';
import { overnight } from '../../src/commands/overnight.js';
import { findRepo } from '../../src/commands/repo.js';
import { startModelServer, type RunningModelServer } from '../../src/demo/model-server.js';
import type { Script } from '../../src/demo/script-types.js';
import { demoScript, type DemoScenario } from '../../src/demo/scripts.js';
import { backlog } from '../helpers/fleet-harness.js';
import { makeRepo } from '../helpers/git-repo.js';
import { readState } from '../helpers/state-file.js';
import { CLI } from '../helpers/paths.js';

/**
 * Usage windows and rate limits, end to end: a 429 left after the real SDK's retries, and a CLI agent's
 * "usage limit reached", pause the fleet without using up an attempt; `--no-wait` fails fast instead.
 */

const KEY = 'sk-ant-test-key-for-the-loopback-server-000000';
let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function setup(front: string, items: string, script: Script, files: Record<string, string> = {}) {
  const server: RunningModelServer = await startModelServer({ apiKeys: [KEY], script });
  cleanups.push(() => server.close());
  const r = await makeRepo({ 'BACKLOG.md': backlog(front, items), ...files });
  cleanups.push(r.cleanup);
  const env = { ...process.env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: KEY };
  return { root: r.root, server, env, repo: await findRepo(r.root) };
}

const pass = (taskId: string): DemoScenario => ({
  taskId,
  kind: 'pass',
  edits: [{ path: `${taskId}.txt`, content: `${taskId}\n` }],
});

/** The state file's record of T-1. */
async function t1(root: string) {
  return (await readState(root)).tasks['T-1'] as {
    status: string;
    attempt: number;
    attempts: Array<{ n: number; outcome: string; reason: string | null }>;
  };
}

describe('a usage or rate limit pauses the fleet instead of using up an attempt', () => {
  it('a 429 from the API, left after the SDK retries, holds the fleet until retry-after; the task then verifies on its one attempt', {
    timeout: 60_000,
  }, async () => {
    const base = demoScript([pass('T-1')]);
    let refused = 0;
    const script: Script = (req) => {
      if (req.taskId === 'T-1' && req.role === 'explorer' && refused === 0) {
        refused++;
        return { fault: { status: 429, retryAfterMs: 1500 } };
      }
      return base(req);
    };
    const { root, server, env, repo } = await setup('check: "true"\ngates:\n  attempts: 1', '- [ ] T-1 One', script);
    const lines: string[] = [];
    const started = Date.now();
    const code = await overnight(
      repo,
      {
        overrides: {},
        autoMerge: false,
        watch: false,
        env,
        // No SDK retries: the 429 reaches the engine at once.
        services: (s) => ({
          ...s,
          model: new AnthropicModelClient({
            apiKey: KEY,
            baseURL: server.url,
            maxRetries: 0,
            processRunner: new ExecaRunner(),
            sandboxAvailable: s.sandboxed,
          }),
        }),
      },
      (l) => lines.push(l),
    );
    const log = lines.join('\n');
    expect(code).toBe(0);
    expect(log).toMatch(/fleet paused: rate limit, resumes \d\d:\d\d/);
    expect(log).toMatch(/T-1 warn: attempt 1 paused, not used up: Messages API error \(HTTP 429, rate_limit_error\)/);
    expect(log).toMatch(/fleet resumed/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    const t = await t1(root);
    expect(t.status).toBe('verified');
    expect(t.attempt).toBe(1);
    expect(t.attempts.filter((a) => a.outcome !== 'interrupted').map((a) => [a.n, a.outcome])).toEqual([
      [1, 'verified'],
    ]);
    expect(t.attempts.find((a) => a.outcome === 'interrupted')!.reason).toMatch(/429/);
    expect(server.requests.filter((r) => r.status === 429)).toHaveLength(1);
  });

  it('a CLI agent\'s "usage limit reached · resets in 2 seconds" pauses likewise, and the agent runs again after the reset', {
    timeout: 60_000,
  }, async () => {
    const fakeDir = await mkdtemp(join(os.tmpdir(), 'lf-limit-claude-'));
    cleanups.push(() => rm(fakeDir, { recursive: true, force: true }));
    // A refused run reports no tokens, as Claude Code's does.
    const result = (text: string, isError: boolean) =>
      JSON.stringify({
        type: 'result',
        subtype: 'success',
        is_error: isError,
        result: text,
        usage: {
          input_tokens: isError ? 0 : 30,
          output_tokens: isError ? 0 : 70,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
        total_cost_usd: isError ? 0 : 0.001,
        permission_denials: [],
      });
    const bin = join(fakeDir, 'claude');
    // The first run hits the usage limit; the next ones plan.
    await writeFile(
      bin,
      `#!/bin/sh
cat > /dev/null
n=$(cat '${fakeDir}/runs' 2>/dev/null || echo 0)
echo $((n + 1)) > '${fakeDir}/runs'
date +%s%N >> '${fakeDir}/times'
if [ "$n" = 0 ]; then
  printf '%s\\n' '${result('Claude AI usage limit reached · resets in 2 seconds', true)}'
else
  printf '%s\\n' '${result('Plan: write T-1.txt.', false)}'
fi
`,
    );
    await chmod(bin, 0o755);
    const { root, env, repo } = await setup(
      'check: "true"\nsandbox: off\ngates:\n  attempts: 1',
      '- [ ] T-1 One',
      demoScript([pass('T-1')]),
      {
        'agents/explorer.md': `---\nname: explorer\nagent: claude-code\nbin: ${bin}\n---\nYou explore the repository and write a plan.\n`,
      },
    );
    const lines: string[] = [];
    const code = await overnight(repo, { overrides: {}, autoMerge: false, watch: false, env }, (l) => lines.push(l));
    const log = lines.join('\n');
    expect(code, log).toBe(0);
    expect(log).toMatch(/fleet paused: usage limit, resumes \d\d:\d\d/);
    const t = await t1(root);
    expect(t.status).toBe('verified');
    expect(t.attempts.filter((a) => a.outcome !== 'interrupted').map((a) => [a.n, a.outcome])).toEqual([
      [1, 'verified'],
    ]);
    expect(t.attempts.find((a) => a.outcome === 'interrupted')!.reason).toMatch(/usage limit reached/);
    const times = (await readFile(join(fakeDir, 'times'), 'utf8'))
      .trim()
      .split('\n')
      .map((n) => Number(BigInt(n) / 1_000_000n));
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(1500);
  });

  it('--no-wait through the built CLI: the limited task fails with the reason and the run exits 1 at once', {
    timeout: 60_000,
  }, async () => {
    const { root, env } = await setup('check: "true"\nconcurrency: 1', '- [ ] T-1 One\n- [ ] T-2 Two', () => ({
      fault: { status: 429, retryAfterMs: 5 },
    }));
    const started = Date.now();
    const run = await execa(process.execPath, [CLI, '--overnight', '--no-wait'], {
      cwd: root,
      reject: false,
      env: { ...env, NO_COLOR: '1' },
      timeout: 50_000,
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(1);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(run.stdout).toMatch(/T-1 failed — Messages API error \(HTTP 429, rate_limit_error\)/);
    expect(run.stdout).toMatch(/stopping: rate limit and --no-wait/);
    expect(run.stdout).not.toMatch(/paused:/);
    const t = await t1(root);
    expect(t.status).toBe('failed');
    const status = (await readState(root)).tasks['T-2'] as { status: string };
    expect(status.status).toBe('queued');
  });
});
